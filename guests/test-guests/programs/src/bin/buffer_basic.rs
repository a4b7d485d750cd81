//! Every operation of `wrt_guest::Buffer` against the host: inline and host buffers from bytes
//! and zeros, `read_at` and `write_at` with their range errors (OUT_OF_RANGE), slices that share
//! bytes (and small ones that are copies), `concat` of inline and host parts (also past 1024
//! parts), and a child's pipes: `read_buffer` from `cat`'s stdout and stderr, `write_buffer`
//! (blocking) and `try_write_buffer` (in a `poll` loop) to its stdin. Prints `buffers ok`, or
//! what failed and exits 1. Needs `cat`.
use std::io::{self, ErrorKind};
use std::process::ExitCode;

use programs::pattern;
use wrt_guest::{Buffer, Command, ErrorCode, Events, Stdio};

/// Returns an error naming the check unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($what:tt)+) => {
        if !$cond {
            return Err(format!("{}: {}", line!(), format_args!($($what)+)));
        }
    };
}

/// Adds what was being done to an `io::Error`.
trait Context<T> {
    fn context(self, what: &str) -> Result<T, String>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: &str) -> Result<T, String> {
        self.map_err(|err| format!("{what}: {err} ({:?})", err.kind()))
    }
}

/// Checks that `result` failed with OUT_OF_RANGE (kind `InvalidInput`).
fn out_of_range<T>(result: io::Result<T>, what: &str) -> Result<(), String> {
    match result {
        Ok(_) => Err(format!("{what}: succeeded, expected OUT_OF_RANGE")),
        Err(err) if err.kind() == ErrorKind::InvalidInput && ErrorCode::of(&err) == Some(ErrorCode::OutOfRange) => {
            if err.to_string().is_empty() {
                return Err(format!("{what}: OUT_OF_RANGE without a message"));
            }
            Ok(())
        }
        Err(err) => Err(format!("{what}: {err} ({:?}, {:?}), expected OUT_OF_RANGE", err.kind(), ErrorCode::of(&err))),
    }
}

fn create_and_read() -> Result<(), String> {
    let small = Buffer::from_slice(b"small").context("from_slice(5 bytes)")?;
    ensure!(!small.is_host() && small.len() == 5, "{small:?}");
    ensure!(small.to_vec().context("to_vec")? == b"small", "inline bytes");
    let edge = Buffer::from_slice(&[9; 64]).context("from_slice(64 bytes)")?;
    ensure!(!edge.is_host(), "64 bytes must stay inline: {edge:?}");

    let bytes = pattern(1000, 1);
    let host = Buffer::from_slice(&bytes).context("from_slice(1000 bytes)")?;
    ensure!(host.is_host() && host.len() == 1000, "{host:?}");
    ensure!(host.to_vec().context("to_vec")? == bytes, "host bytes differ");
    let mut dst = [0; 20];
    ensure!(host.read_at(100, &mut dst).context("read_at(100)")? == 20, "read_at(100) count");
    ensure!(dst[..] == bytes[100..120], "read_at(100) bytes");
    ensure!(host.read_at(990, &mut dst).context("read_at(990)")? == 10, "short read at the end");
    ensure!(dst[..10] == bytes[990..], "read_at(990) bytes");
    ensure!(host.read_at(1000, &mut dst).context("read_at(len)")? == 0, "read at the length");
    out_of_range(host.read_at(1001, &mut dst), "host read_at(len + 1)")?;
    out_of_range(small.read_at(6, &mut dst), "inline read_at(len + 1)")?;

    let converted = Buffer::try_from(bytes.clone()).context("try_from(Vec)")?;
    ensure!(converted.is_host() && converted.to_vec().context("to_vec")? == bytes, "try_from(Vec)");
    let converted = Buffer::try_from(&b"abc"[..]).context("try_from(&[u8])")?;
    ensure!(!converted.is_host() && converted.len() == 3, "try_from(&[u8])");

    let mut zeroed = Buffer::zeroed(1 << 20).context("zeroed(1 MiB)")?;
    ensure!(zeroed.is_host() && zeroed.len() == 1 << 20, "{zeroed:?}");
    ensure!(zeroed.to_vec().context("to_vec")?.iter().all(|&b| b == 0), "zeroed is not zero");
    zeroed.write_at(4096, b"page two").context("write_at(4096)")?;
    zeroed.write_at((1 << 20) - 3, b"end").context("write_at(len - 3)")?;
    out_of_range(zeroed.write_at((1 << 20) - 2, b"end"), "host write_at past the end")?;
    out_of_range(zeroed.write_at((1 << 20) + 1, b""), "host write_at(len + 1)")?;
    let copy = zeroed.to_vec().context("to_vec")?;
    ensure!(&copy[4096..4104] == b"page two" && &copy[copy.len() - 3..] == b"end", "write_at bytes");
    ensure!(copy.iter().filter(|&&b| b != 0).count() == 11, "a failed write wrote something");
    // A released buffer's storage is kept for the next buffer of its size: that buffer still
    // starts as zeros, or as the bytes it was made from, never as the old buffer's.
    let old = Buffer::from_slice(&[0xab; 100_000]).context("from_slice(100,000 bytes)")?;
    drop(old);
    let reused = Buffer::zeroed(100_000).context("zeroed(100,000)")?;
    ensure!(reused.to_vec().context("to_vec")?.iter().all(|&b| b == 0), "a reused storage is not zero");
    drop(reused);
    let again = Buffer::from_slice(&[7; 90_000]).context("from_slice(90,000 bytes)")?;
    ensure!(again.len() == 90_000, "{again:?}");
    ensure!(again.to_vec().context("to_vec")? == [7; 90_000], "a reused storage kept old bytes");
    let small_zeroed = Buffer::zeroed(10).context("zeroed(10)")?;
    ensure!(!small_zeroed.is_host() && small_zeroed.to_vec().context("to_vec")? == [0; 10], "zeroed(10)");
    let mut inline = Buffer::from_slice(b"0123456789").context("from_slice")?;
    inline.write_at(8, b"xy").context("inline write_at")?;
    out_of_range(inline.write_at(9, b"xy"), "inline write_at past the end")?;
    ensure!(inline.to_vec().context("to_vec")? == b"01234567xy", "inline write_at bytes");
    Ok(())
}

fn slices() -> Result<(), String> {
    let bytes = pattern(4096, 2);
    let mut parent = Buffer::from_slice(&bytes).context("from_slice(4 KiB)")?;
    let mut slice = parent.slice(1000..3000).context("slice(1000..3000)")?;
    ensure!(slice.is_host() && slice.len() == 2000, "{slice:?}");
    ensure!(slice.to_vec().context("to_vec")? == bytes[1000..3000], "slice bytes");
    let small = parent.slice(1000..1010).context("slice(1000..1010)")?;
    ensure!(!small.is_host() && small.to_vec().context("to_vec")? == bytes[1000..1010], "small slice");

    // A host slice shares the bytes both ways; a small slice is a copy.
    parent.write_at(1000, b"from the parent").context("write_at through the parent")?;
    let mut seen = [0; 15];
    slice.read_at(0, &mut seen).context("read_at through the slice")?;
    ensure!(&seen == b"from the parent", "a write to the parent is not seen in the slice");
    slice.write_at(1986, b"from the slice").context("write_at through the slice")?;
    let mut seen = [0; 14];
    parent.read_at(2986, &mut seen).context("read_at through the parent")?;
    ensure!(&seen == b"from the slice", "a write to the slice is not seen in the parent");
    ensure!(small.to_vec().context("to_vec")? == bytes[1000..1010], "the small slice changed");

    // Slices of slices, and the bytes outlive the parent.
    let inner = slice.slice(100..).context("slice of a slice")?;
    drop(parent);
    ensure!(inner.len() == 1900, "inner length {}", inner.len());
    let tail = inner.to_vec().context("to_vec after the parent was dropped")?;
    ensure!(tail[..1886] == bytes[1100..2986] && &tail[1886..] == b"from the slice", "inner bytes");
    ensure!(slice.slice(..).context("slice(..)")?.len() == 2000, "slice(..)");
    ensure!(slice.slice(2000..).context("slice(len..)")?.is_empty(), "slice(len..)");
    out_of_range(slice.slice(1000..2001), "slice past the end")?;
    out_of_range(small.slice(5..11), "inline slice past the end")?;
    Ok(())
}

fn concatenations() -> Result<(), String> {
    let head = Buffer::from_slice(b"<html>").context("head")?;
    let body_bytes = pattern(3000, 3);
    let body = Buffer::from_slice(&body_bytes).context("body")?;
    let middle = body.slice(1000..2000).context("middle")?;
    let tail = Buffer::from_slice(&[b'z'; 64]).context("tail")?;
    let joined = Buffer::concat(&[&head, &body, &Buffer::new(), &middle, &tail]).context("concat")?;
    let mut expected = b"<html>".to_vec();
    expected.extend_from_slice(&body_bytes);
    expected.extend_from_slice(&body_bytes[1000..2000]);
    expected.extend_from_slice(&[b'z'; 64]);
    ensure!(joined.is_host() && joined.len() == expected.len(), "{joined:?}");
    ensure!(joined.to_vec().context("to_vec")? == expected, "concat bytes");

    // The result is a copy: writing it leaves the parts alone.
    let mut joined = joined;
    joined.write_at(0, b"<HTML>").context("write_at the result")?;
    ensure!(head.to_vec().context("to_vec")? == b"<html>", "concat shares bytes with a part");

    let small = Buffer::concat(&[&head, &Buffer::from_slice(b"</html>").context("tail")?]).context("small concat")?;
    ensure!(!small.is_host() && small.to_vec().context("to_vec")? == b"<html></html>", "small concat");
    ensure!(Buffer::concat(&[]).context("empty concat")?.is_empty(), "empty concat");

    // More parts than one host call takes (1024).
    let pieces: Vec<Buffer> = (0..3000_u32)
        .map(|i| Buffer::from_slice(&i.to_le_bytes()[..1 + i as usize % 4]))
        .collect::<Result<_, _>>()
        .context("pieces")?;
    let mut parts: Vec<&Buffer> = pieces.iter().collect();
    parts.insert(1500, &body);
    let joined = Buffer::concat(&parts).context("concat of 3001 parts")?;
    let mut expected = Vec::new();
    for part in &parts {
        expected.extend_from_slice(&part.to_vec().context("to_vec")?);
    }
    ensure!(joined.len() == expected.len(), "{} bytes, expected {}", joined.len(), expected.len());
    ensure!(joined.to_vec().context("to_vec")? == expected, "concat of 3001 parts bytes");
    Ok(())
}

/// Collects `read_buffer`'s chunks until end of file.
fn read_all(mut next: impl FnMut() -> io::Result<Option<Buffer>>) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = next().context("read_buffer")? {
        ensure!(!chunk.is_empty() && chunk.is_host() == (chunk.len() > Buffer::INLINE_MAX), "{chunk:?}");
        bytes.extend_from_slice(&chunk.to_vec().context("to_vec")?);
    }
    Ok(bytes)
}

fn child_pipes() -> Result<(), String> {
    // Blocking: an inline and a host buffer through `cat`, less than a pipe holds.
    let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().context("spawn cat")?;
    let mut stdin = child.stdin.take().ok_or("stdin is piped")?;
    let hello = Buffer::from_slice(b"hello\n").context("hello")?;
    stdin.write_buffer(&hello).context("write_buffer(inline)")?;
    let bytes = pattern(32 << 10, 4);
    let host = Buffer::from_slice(&bytes).context("32 KiB")?;
    stdin.write_buffer(&host).context("write_buffer(host)")?;
    ensure!(stdin.try_write_buffer(&host, host.len()).context("try_write_buffer(len)")? == 0, "write at the length");
    out_of_range(stdin.try_write_buffer(&host, host.len() + 1), "host try_write_buffer(len + 1)")?;
    out_of_range(stdin.try_write_buffer(&hello, 7), "inline try_write_buffer(len + 1)")?;
    drop(stdin);
    let stdout = child.stdout.as_mut().ok_or("stdout is piped")?;
    ensure!(stdout.read_buffer(0).context("read_buffer(0)")?.is_some_and(|b| b.is_empty()), "read_buffer(0)");
    let output = read_all(|| stdout.read_buffer(4096))?;
    ensure!(output.len() == 6 + bytes.len(), "cat gave back {} bytes", output.len());
    ensure!(&output[..6] == b"hello\n" && output[6..] == bytes, "cat changed the bytes");
    ensure!(child.wait().context("wait")?.success(), "cat failed");

    // Non-blocking, both ways at once: 4 MiB of host buffer through `cat`.
    let bytes = pattern(4 << 20, 5);
    let input = Buffer::from_slice(&bytes).context("4 MiB")?;
    let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().context("spawn cat")?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().ok_or("stdout is piped")?;
    let (mut written, mut chunks, mut eof) = (0, Vec::new(), false);
    while !eof {
        let interest = if stdin.is_some() { Events::STDIN | Events::STDOUT } else { Events::STDOUT };
        let ready = child.poll(interest, None).context("poll")?;
        if let Some(pipe) = stdin.as_mut().filter(|_| ready.contains(Events::STDIN)) {
            match pipe.try_write_buffer(&input, written) {
                Ok(n) => written += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                Err(err) => return Err(format!("try_write_buffer: {err}")),
            }
            if written == input.len() {
                stdin = None;
            }
        }
        if ready.contains(Events::STDOUT) {
            match stdout.try_read_buffer(1 << 20) {
                Ok(Some(chunk)) => chunks.push(chunk),
                Ok(None) => eof = true,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                Err(err) => return Err(format!("try_read_buffer: {err}")),
            }
        }
    }
    let parts: Vec<&Buffer> = chunks.iter().collect();
    let output = Buffer::concat(&parts).context("concat the chunks")?;
    ensure!(output.len() == bytes.len(), "cat gave back {} bytes in {} chunks", output.len(), chunks.len());
    ensure!(output.to_vec().context("to_vec")? == bytes, "cat changed the bytes (poll loop)");
    ensure!(child.wait().context("wait")?.success(), "cat failed");

    // stderr.
    let mut child =
        Command::new("cat").arg("/nonexistent/wrt-buffer-basic").stderr(Stdio::piped()).spawn().context("spawn cat")?;
    let stderr = child.stderr.as_mut().ok_or("stderr is piped")?;
    let message = read_all(|| stderr.read_buffer(1 << 16))?;
    let message = String::from_utf8_lossy(&message);
    ensure!(message.contains("wrt-buffer-basic"), "cat's stderr: {message:?}");
    ensure!(!child.wait().context("wait")?.success(), "cat of a missing file succeeded");
    Ok(())
}

/// One group of checks: `Err` says which failed.
type Step = fn() -> Result<(), String>;

fn main() -> ExitCode {
    let steps: [(&str, Step); 4] = [
        ("create and read", create_and_read),
        ("slices", slices),
        ("concatenations", concatenations),
        ("child pipes", child_pipes),
    ];
    for (name, step) in steps {
        if let Err(err) = step() {
            println!("{name} failed at line {err}");
            return ExitCode::FAILURE;
        }
    }
    println!("buffers ok");
    ExitCode::SUCCESS
}

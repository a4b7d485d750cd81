//! Every operation of `wrt_process::Buffer` against the host (the `buffer` resource): buffers
//! from bytes and zeros, `read_at` and `write_at` with their range errors (OUT_OF_RANGE), slices
//! that share bytes, `concat` (a copy), and a child's pipes: `read_buffer` from `cat`'s stdout
//! and stderr, `write_buffer` to its stdin. Prints `buffers ok`, or what failed and exits 1.
//! The component twin of `buffer_basic`, less what only the core ABI has (inline buffers,
//! non-blocking buffer writes). Needs `cat`.
use std::io::{self, ErrorKind};
use std::ops::Bound;
use std::process::ExitCode;

use components::pattern;
use wrt_process::{Buffer, Command, ErrorCode, Stdio};

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

/// Checks that `result` failed with OUT_OF_RANGE (kind `InvalidInput`) and a message.
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
    ensure!(small.len() == 5 && small.to_vec().context("to_vec")? == b"small", "{small:?}");
    ensure!(Buffer::from_slice(b"").context("from_slice(0 bytes)")?.is_empty(), "empty");

    let bytes = pattern(1000, 1);
    let host = Buffer::from_slice(&bytes).context("from_slice(1000 bytes)")?;
    ensure!(host.len() == 1000, "{host:?}");
    ensure!(host.to_vec().context("to_vec")? == bytes, "host bytes differ");
    let mut dst = [0; 20];
    ensure!(host.read_at(100, &mut dst).context("read_at(100)")? == 20, "read_at(100) count");
    ensure!(dst[..] == bytes[100..120], "read_at(100) bytes");
    ensure!(host.read_at(990, &mut dst).context("read_at(990)")? == 10, "short read at the end");
    ensure!(dst[..10] == bytes[990..], "read_at(990) bytes");
    ensure!(host.read_at(1000, &mut dst).context("read_at(len)")? == 0, "read at the length");
    out_of_range(host.read_at(1001, &mut dst), "read_at(len + 1)")?;
    out_of_range(small.read_at(6, &mut dst), "small read_at(len + 1)")?;

    let mut zeroed = Buffer::zeroed(1 << 20).context("zeroed(1 MiB)")?;
    ensure!(zeroed.len() == 1 << 20, "{zeroed:?}");
    ensure!(zeroed.to_vec().context("to_vec")?.iter().all(|&b| b == 0), "zeroed is not zero");
    zeroed.write_at(4096, b"page two").context("write_at(4096)")?;
    zeroed.write_at((1 << 20) - 3, b"end").context("write_at(len - 3)")?;
    out_of_range(zeroed.write_at((1 << 20) - 2, b"end"), "write_at past the end")?;
    out_of_range(zeroed.write_at((1 << 20) + 1, b""), "write_at(len + 1)")?;
    let copy = zeroed.to_vec().context("to_vec")?;
    ensure!(&copy[4096..4104] == b"page two" && &copy[copy.len() - 3..] == b"end", "write_at bytes");
    ensure!(copy.iter().filter(|&&b| b != 0).count() == 11, "a failed write wrote something");

    // More than one host read gives (at most 1 MiB a call): `read_at` and `to_vec` go on.
    let big_bytes = pattern((3 << 20) + 5, 6);
    let big = Buffer::from_slice(&big_bytes).context("from_slice(3 MiB + 5)")?;
    ensure!(big.to_vec().context("to_vec(3 MiB + 5)")? == big_bytes, "a read past 1 MiB lost bytes");
    let mut tail = vec![0; 2 << 20];
    ensure!(big.read_at(1 << 20, &mut tail).context("read_at(1 MiB)")? == 2 << 20, "read_at(1 MiB) count");
    ensure!(tail[..] == big_bytes[1 << 20..3 << 20], "read_at(1 MiB) bytes");
    Ok(())
}

fn slices() -> Result<(), String> {
    let bytes = pattern(4096, 2);
    let mut parent = Buffer::from_slice(&bytes).context("from_slice(4 KiB)")?;
    let mut slice = parent.slice(1000..3000).context("slice(1000..3000)")?;
    ensure!(slice.len() == 2000, "{slice:?}");
    ensure!(slice.to_vec().context("to_vec")? == bytes[1000..3000], "slice bytes");

    // A slice shares the bytes both ways.
    parent.write_at(1000, b"from the parent").context("write_at through the parent")?;
    let mut seen = [0; 15];
    slice.read_at(0, &mut seen).context("read_at through the slice")?;
    ensure!(&seen == b"from the parent", "a write to the parent is not seen in the slice");
    slice.write_at(1986, b"from the slice").context("write_at through the slice")?;
    let mut seen = [0; 14];
    parent.read_at(2986, &mut seen).context("read_at through the parent")?;
    ensure!(&seen == b"from the slice", "a write to the slice is not seen in the parent");

    // Slices of slices, and the bytes outlive the parent.
    let inner = slice.slice(100..).context("slice of a slice")?;
    drop(parent);
    ensure!(inner.len() == 1900, "inner length {}", inner.len());
    let tail = inner.to_vec().context("to_vec after the parent was dropped")?;
    ensure!(tail[..1886] == bytes[1100..2986] && &tail[1886..] == b"from the slice", "inner bytes");
    ensure!(slice.slice(..).context("slice(..)")?.len() == 2000, "slice(..)");
    ensure!(slice.slice(2000..).context("slice(len..)")?.is_empty(), "slice(len..)");
    out_of_range(slice.slice(1000..2001), "slice past the end")?;
    out_of_range(slice.slice((Bound::Included(10), Bound::Excluded(5))), "slice ending before it starts")?;
    Ok(())
}

fn concatenations() -> Result<(), String> {
    let head = Buffer::from_slice(b"<html>").context("head")?;
    let body_bytes = pattern(3000, 3);
    let body = Buffer::from_slice(&body_bytes).context("body")?;
    let middle = body.slice(1000..2000).context("middle")?;
    let empty = Buffer::from_slice(b"").context("empty")?;
    let joined = Buffer::concat(&[&head, &body, &empty, &middle]).context("concat")?;
    let mut expected = b"<html>".to_vec();
    expected.extend_from_slice(&body_bytes);
    expected.extend_from_slice(&body_bytes[1000..2000]);
    ensure!(joined.len() == expected.len(), "{joined:?}");
    ensure!(joined.to_vec().context("to_vec")? == expected, "concat bytes");

    // The result is a copy: writing it leaves the parts alone.
    let mut joined = joined;
    joined.write_at(0, b"<HTML>").context("write_at the result")?;
    ensure!(head.to_vec().context("to_vec")? == b"<html>", "concat shares bytes with a part");
    ensure!(Buffer::concat(&[]).context("empty concat")?.is_empty(), "empty concat");
    Ok(())
}

/// Collects `read_buffer`'s chunks until end of file.
fn read_all(mut next: impl FnMut() -> io::Result<Option<Buffer>>) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = next().context("read_buffer")? {
        ensure!(!chunk.is_empty(), "an empty chunk before end of file");
        bytes.extend_from_slice(&chunk.to_vec().context("to_vec")?);
    }
    Ok(bytes)
}

fn child_pipes() -> Result<(), String> {
    // Less than a pipe holds, so the writes never wait for the reads.
    let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().context("spawn cat")?;
    let mut stdin = child.stdin.take().ok_or("stdin is piped")?;
    let hello = Buffer::from_slice(b"hello\n").context("hello")?;
    stdin.write_buffer(&hello).context("write_buffer(small)")?;
    let bytes = pattern(32 << 10, 4);
    let host = Buffer::from_slice(&bytes).context("32 KiB")?;
    stdin.write_buffer(&host).context("write_buffer(32 KiB)")?;
    drop(stdin);
    let stdout = child.stdout.as_mut().ok_or("stdout is piped")?;
    let output = read_all(|| stdout.read_buffer(4096))?;
    ensure!(output.len() == 6 + bytes.len(), "cat gave back {} bytes", output.len());
    ensure!(&output[..6] == b"hello\n" && output[6..] == bytes, "cat changed the bytes");
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

//! Writing a child's stdin while reading its stdout and stderr, without deadlock: one
//! `wasi:io/poll` loop over the three streams.

use std::io;

use wasip2::io::poll::{Pollable, poll};
use wasip2::io::streams::StreamError;

use crate::child::Collected;
use crate::pipes::{ChildStderr, ChildStdin, ChildStdout, OutputPipe, stream_error};
use crate::transport::ChildHandle;

/// How much one non-blocking read asks for.
const CHUNK: u64 = 64 << 10;

/// What is left to write, and the pipe. The pollable is dropped before the stream it watches.
struct Writer<'a> {
    ready: Pollable,
    pipe: ChildStdin,
    rest: &'a [u8],
}

struct Reader {
    ready: Pollable,
    pipe: OutputPipe,
    bytes: Vec<u8>,
    done: bool,
    failed: Option<io::Error>,
}

/// Writes `input` to `stdin` (then closes it) while reading `stdout` and `stderr` to their ends.
/// Returns what stdout and stderr gave and, for each, the error that ended it early (reading past
/// the output limit fails; the caller decides with the status). The streams are all it needs,
/// so `_child` (there for the same signature as `wrt-guest`'s) is not used.
pub(crate) fn communicate(
    _child: &ChildHandle,
    stdin: Option<ChildStdin>,
    input: &[u8],
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
) -> io::Result<[Collected; 2]> {
    let mut writer = match stdin {
        Some(mut pipe) if !input.is_empty() => Some(Writer { ready: pipe.stream()?.subscribe(), pipe, rest: input }),
        _ => None, // dropping stdin closes it
    };
    let mut readers = Vec::new();
    for pipe in [stdout.map(|p| p.0), stderr.map(|p| p.0)] {
        readers.push(match pipe {
            Some(mut pipe) => {
                Some(Reader { ready: pipe.stream()?.subscribe(), pipe, bytes: Vec::new(), done: false, failed: None })
            }
            None => None,
        });
    }
    loop {
        // 0: stdin; 1 + i: readers[i].
        let mut watched = Vec::new();
        let mut pollables: Vec<&Pollable> = Vec::new();
        if let Some(writer) = &writer {
            watched.push(0);
            pollables.push(&writer.ready);
        }
        for (i, reader) in readers.iter().enumerate() {
            if let Some(reader) = reader.as_ref().filter(|r| !r.done) {
                watched.push(i + 1);
                pollables.push(&reader.ready);
            }
        }
        if pollables.is_empty() {
            break;
        }
        let ready: Vec<usize> = poll(&pollables).into_iter().map(|i| watched[i as usize]).collect();
        drop(pollables);
        for who in ready {
            if who == 0 {
                if !write_some(writer.as_mut().expect("watched"))? {
                    writer = None;
                }
            } else {
                read_some(readers[who - 1].as_mut().expect("watched"));
            }
        }
    }
    let [stdout, stderr] = [0, 1].map(|i| readers[i].take().map_or((Vec::new(), None), |r| (r.bytes, r.failed)));
    Ok([stdout, stderr])
}

/// Writes what the stream takes now; `false` once stdin is done with (all written and flushed,
/// or closed by the child: the rest is dropped, as a pipe would).
fn write_some(writer: &mut Writer<'_>) -> io::Result<bool> {
    let stream = writer.pipe.stream()?;
    let room = match stream.check_write() {
        Ok(room) => room,
        Err(StreamError::Closed) => return Ok(false),
        Err(err) => return Err(stream_error(err, || "cannot write the input of a child".into())),
    };
    if writer.rest.is_empty() {
        // Ready again after the last flush: everything is written.
        return Ok(room == 0);
    }
    if room == 0 {
        return Ok(true);
    }
    let len = usize::try_from(room).unwrap_or(usize::MAX).min(writer.rest.len());
    let result = stream.write(&writer.rest[..len]).and_then(|()| {
        writer.rest = &writer.rest[len..];
        if writer.rest.is_empty() { stream.flush() } else { Ok(()) }
    });
    match result {
        Ok(()) => Ok(true),
        Err(StreamError::Closed) => Ok(false),
        Err(err) => Err(stream_error(err, || "cannot write the input of a child".into())),
    }
}

/// Reads what the stream has now.
fn read_some(reader: &mut Reader) {
    let result = match reader.pipe.stream() {
        Ok(stream) => stream.read(CHUNK),
        Err(err) => {
            (reader.done, reader.failed) = (true, Some(err));
            return;
        }
    };
    match result {
        Ok(bytes) => reader.bytes.extend_from_slice(&bytes),
        Err(StreamError::Closed) => reader.done = true,
        Err(err) => (reader.done, reader.failed) = (true, Some(stream_error(err, || reader.pipe.context("read")))),
    }
}

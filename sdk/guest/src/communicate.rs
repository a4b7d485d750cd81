//! Writing a child's stdin while reading its stdout and stderr, without deadlock.

use std::io;

use crate::child::Collected;
use crate::error::{ErrorCode, check};
use crate::events::Events;
use crate::pipes::{ChildStderr, ChildStdin, ChildStdout};
use crate::sys;
use crate::transport::ChildHandle;

/// How much one non-blocking read asks for.
const CHUNK: usize = 64 << 10;

/// Writes `input` to `stdin` (then closes it) while reading `stdout` and `stderr` to their ends,
/// serving whichever `poll` reports ready. Returns what was read; a failed read is returned as
/// the error, so no stream ends with one.
///
/// A stream past its output limit counts as ended (the status says truncated). If the child
/// closes its stdin or ends before taking all of `input`, the rest is dropped.
pub(crate) fn communicate(
    handle: &ChildHandle,
    mut stdin: Option<ChildStdin>,
    input: &[u8],
    mut stdout: Option<ChildStdout>,
    mut stderr: Option<ChildStderr>,
) -> io::Result<[Collected; 2]> {
    let mut written = 0;
    if input.is_empty() {
        drop(stdin.take());
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut chunk = vec![0; CHUNK];
    loop {
        let mut interest = Events::empty();
        if stdin.is_some() {
            // EXITED: a child that ended without reading its stdin is not waited on forever.
            interest |= Events::STDIN | Events::EXITED;
        }
        if stdout.is_some() {
            interest |= Events::STDOUT;
        }
        if stderr.is_some() {
            interest |= Events::STDERR;
        }
        if interest.is_empty() {
            return Ok([(out, None), (err, None)]);
        }
        let ret = sys::poll(handle.raw(), interest.bits(), -1);
        let ready = Events::from_bits_truncate(check(ret, || format!("cannot poll child {}", handle.raw()))?);

        if let Some(pipe) = stdin.as_mut().filter(|_| ready.contains(Events::STDIN) || ready.contains(Events::EXITED)) {
            match pipe.try_write(&input[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if ErrorCode::of(&e) == Some(ErrorCode::BrokenPipe) => written = input.len(),
                Err(e) => return Err(e),
            }
            if written == input.len() || ready.contains(Events::EXITED) {
                drop(stdin.take());
            }
        }
        if ready.contains(Events::STDOUT)
            && let Some(pipe) = stdout.as_mut()
            && drain(&mut out, &mut chunk, |buf| pipe.try_read(buf))?
        {
            stdout = None;
        }
        if ready.contains(Events::STDERR)
            && let Some(pipe) = stderr.as_mut()
            && drain(&mut err, &mut chunk, |buf| pipe.try_read(buf))?
        {
            stderr = None;
        }
    }
}

/// Appends what `read` has now to `out`; `true` once the stream has ended (end of file or past
/// its output limit).
fn drain(
    out: &mut Vec<u8>,
    chunk: &mut [u8],
    mut read: impl FnMut(&mut [u8]) -> io::Result<usize>,
) -> io::Result<bool> {
    loop {
        match read(chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if ErrorCode::of(&e) == Some(ErrorCode::OutputLimit) => return Ok(true),
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_stops_at_would_block_and_end() {
        let mut script = vec![Ok(3), Ok(2), Err(io::ErrorKind::WouldBlock.into())].into_iter();
        let mut out = Vec::new();
        let mut chunk = [7; 8];
        assert!(!drain(&mut out, &mut chunk, |_| script.next().unwrap()).unwrap());
        assert_eq!(out, [7, 7, 7, 7, 7]);

        let mut script = vec![Ok(1), Ok(0)].into_iter();
        assert!(drain(&mut out, &mut chunk, |_| script.next().unwrap()).unwrap());
        assert_eq!(out.len(), 6);

        let limit: io::Error = crate::error::WrtError::new(ErrorCode::OutputLimit, "read".into()).into();
        let mut script = vec![Err(limit)].into_iter();
        assert!(drain(&mut out, &mut chunk, |_| script.next().unwrap()).unwrap());

        let mut script = vec![Err(io::Error::other("boom"))].into_iter();
        assert!(drain(&mut out, &mut chunk, |_| script.next().unwrap()).is_err());
    }
}

//! Write and read: a child's stdin and its stdout or stderr pipes, blocking or not, never past
//! the sandbox's deadline.

use std::time::{Duration, Instant};

use wrt_abi::ErrorCode;
use wrt_host_spawn::{Child, Interest, ReadError, WriteError};
use wrt_text::error_chain;

use super::spawn_state::SpawnState;
use super::{Failure, Served};
use crate::epoch_ticker::DeadlineExceeded;
use crate::stop::Stop;

/// Why a blocking operation on a child stopped without a result.
enum Blocked<E> {
    /// The operation failed.
    Op(E),
    /// Waiting for the pipe failed.
    Poll(wrt_host_spawn::PollError),
    /// The sandbox's deadline passed: the guest is stopped, and its children with it.
    Deadline,
}

/// Repeats the non-blocking `op` until it does something, sleeping in `Child::poll` on
/// `interest` between tries (which also drives the child's own timeout), or until the
/// sandbox's `deadline`. Never waits past the deadline, whatever the child's kill grace.
fn block_on<T, E>(
    child: &mut Child,
    interest: Interest,
    stop: &Stop,
    mut op: impl FnMut(&mut Child) -> Result<Option<T>, E>,
) -> Result<T, Blocked<E>> {
    loop {
        if let Some(done) = op(child).map_err(Blocked::Op)? {
            return Ok(done);
        }
        if stop.passed() {
            return Err(Blocked::Deadline);
        }
        let remaining = stop.deadline().map(|deadline| deadline.saturating_duration_since(Instant::now()));
        child.poll(interest, remaining).map_err(Blocked::Poll)?;
    }
}

fn write_error(err: &WriteError) -> ErrorCode {
    match err {
        WriteError::NotPiped { .. } => ErrorCode::NotPiped,
        WriteError::TimedOut { .. } => ErrorCode::Timeout,
        WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => ErrorCode::BrokenPipe,
        _ => ErrorCode::Io,
    }
}

fn read_error(err: &ReadError) -> ErrorCode {
    match err {
        ReadError::NotPiped { .. } => ErrorCode::NotPiped,
        ReadError::OutputLimit { .. } => ErrorCode::OutputLimit,
        ReadError::TimedOut { .. } => ErrorCode::Timeout,
        _ => ErrorCode::Io,
    }
}

/// Writes `bytes` to the stdin of the child behind `handle`, waiting for room unless
/// `nonblock`: the count written, `None` when a non-blocking write would block, or a failure.
pub(crate) fn write_child(
    spawn: &mut SpawnState,
    stop: &Stop,
    handle: i32,
    nonblock: bool,
    bytes: &[u8],
) -> Served<Option<usize>> {
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.taken[0] {
        return Ok(Err(Failure::new(ErrorCode::NotPiped, format!("the stdin of `{handle}` was taken as a stream"))));
    }
    let stdin = Interest { stdin: true, ..Interest::default() };
    let result = if nonblock {
        let written = entry.child.lock().try_write_stdin(bytes);
        match written {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(Ok(None)),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child.lock(), stdin, stop, |child| child.try_write_stdin(bytes))
    };
    stop.check()?;
    match result {
        Ok(n) => {
            spawn.stream_bytes += n as u64;
            Ok(Ok(Some(n)))
        }
        Err(Blocked::Op(err)) => Ok(Err(Failure::new(write_error(&err), error_chain(&err)))),
        Err(Blocked::Poll(err)) => Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

/// Reads from `stream` (1: stdout, 2: stderr) of the child behind `handle` into `buf`, waiting
/// for output unless `nonblock`: the count read (0 at end of file, at most `i32::MAX`), `None`
/// when a non-blocking read would block, or a failure.
pub(crate) fn read_child(
    spawn: &mut SpawnState,
    stop: &Stop,
    handle: i32,
    stream: i32,
    nonblock: bool,
    buf: &mut [u8],
) -> Served<Option<usize>> {
    // At most i32::MAX bytes, so the count fits the core ABI's return value.
    let buf_len = buf.len().min(i32::MAX as usize);
    let buf = &mut buf[..buf_len];
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.taken[stream as usize] {
        let message = format!("stream {stream} of `{handle}` was taken as a stream");
        return Ok(Err(Failure::new(ErrorCode::NotPiped, message)));
    }
    let interest = Interest { stdout: stream == 1, stderr: stream == 2, ..Interest::default() };
    let try_read = |child: &mut Child, buf: &mut [u8]| match stream {
        1 => child.try_read_stdout(buf),
        _ => child.try_read_stderr(buf),
    };
    let result = if nonblock {
        let read = try_read(&mut entry.child.lock(), buf);
        match read {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(Ok(None)),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child.lock(), interest, stop, |child| try_read(child, buf))
    };
    // What a call saw after the deadline (an end of file, because the child's own timeout ended it)
    // never reaches the guest; the guest stops with the timeout.
    stop.check()?;
    match result {
        Ok(n) => {
            spawn.stream_bytes += n as u64;
            Ok(Ok(Some(n)))
        }
        Err(Blocked::Op(err)) => Ok(Err(Failure::new(read_error(&err), error_chain(&err)))),
        Err(Blocked::Poll(err)) => Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

/// Which of `wanted` is ready on the child behind `handle`, waiting until `user_deadline` (and
/// never past the sandbox's). A reaped child's exit is always ready.
pub(crate) fn poll(
    spawn: &mut SpawnState,
    stop: &Stop,
    handle: i32,
    wanted: Interest,
    user_deadline: Option<Instant>,
) -> Served<Interest> {
    let deadline = crate::epoch_ticker::earliest(user_deadline, stop.deadline());
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let ready = if entry.outcome.is_some() {
        // Reaped already: the exit is ready, and the pipes may still hold output.
        let streams = Interest { exit: false, ..wanted };
        let mut ready = if streams.is_empty() {
            Interest::default()
        } else {
            let polled = entry.child.lock().poll(streams, Some(Duration::ZERO));
            match polled {
                Ok(ready) => ready,
                Err(err) => return Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
            }
        };
        ready.exit = wanted.exit;
        ready
    } else {
        let polled = entry.child.lock().poll(wanted, deadline.map(|d| d.saturating_duration_since(Instant::now())));
        match polled {
            Ok(ready) => ready,
            Err(err) => return Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
        }
    };
    stop.check()?;
    Ok(Ok(ready))
}

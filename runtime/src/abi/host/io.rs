//! `write`, `close_stdin`, `read` and `poll`: a child's pipes, blocking or not, never past the
//! sandbox's deadline.

use std::time::{Duration, Instant};

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_abi::consts::{INTEREST_ALL, INTEREST_EXITED, INTEREST_STDERR, INTEREST_STDIN, INTEREST_STDOUT};
use wrt_host_spawn::{Child, Interest, ReadError, WriteError, error_chain};

use super::super::memory;
use super::{NONBLOCK, Result, with_memory};
use crate::deadline::DeadlineExceeded;
use crate::deadline::{check_deadline, earliest, until};
use crate::state::GuestState;

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
    deadline: Option<Instant>,
    mut op: impl FnMut(&mut Child) -> std::result::Result<Option<T>, E>,
) -> std::result::Result<T, Blocked<E>> {
    loop {
        if let Some(done) = op(child).map_err(Blocked::Op)? {
            return Ok(done);
        }
        let remaining = match deadline {
            Some(deadline) if Instant::now() >= deadline => return Err(Blocked::Deadline),
            Some(deadline) => Some(deadline.saturating_duration_since(Instant::now())),
            None => None,
        };
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

pub(super) fn write(mut caller: Caller<'_, GuestState>, handle: i32, ptr: i32, len: i32, flags: i32) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if flags & !NONBLOCK != 0 {
            return Ok(state.fail(ErrorCode::InvalidArgument, format!("unknown write flags {flags:#x}")));
        }
        let bytes =
            try_code!(state, memory::slice(data, ptr, len), "write buffer {ptr:#x}+{len:#x} is outside linear memory");
        write_child(state, handle, flags, bytes)
    })
}

/// Writes `bytes` to the stdin of the child behind `handle` (`flags` checked by the caller):
/// the count written, or an error return.
pub(crate) fn write_child(state: &mut GuestState, handle: i32, flags: i32, bytes: &[u8]) -> Result<i32> {
    let deadline = state.deadline;
    let entry = match state.spawn.children.get_mut(handle) {
        Ok(entry) => entry,
        Err(code) => return Ok(state.fail(code, format!("`{handle}` is not a handle"))),
    };
    if entry.taken[0] {
        return Ok(state.fail(ErrorCode::NotPiped, format!("the stdin of `{handle}` was taken as a stream")));
    }
    let stdin = Interest { stdin: true, ..Interest::default() };
    let result = if flags & NONBLOCK != 0 {
        let written = entry.child.lock().try_write_stdin(bytes);
        match written {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(ErrorCode::WouldBlock.to_return()),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child.lock(), stdin, deadline, |child| child.try_write_stdin(bytes))
    };
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(DeadlineExceeded.into());
    }
    match result {
        Ok(n) => {
            state.spawn.stream_bytes += n as u64;
            Ok(i32::try_from(n).unwrap_or(i32::MAX))
        }
        Err(Blocked::Op(err)) => Ok(state.fail(write_error(&err), error_chain(&err))),
        Err(Blocked::Poll(err)) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

pub(super) fn close_stdin(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    let state = caller.data_mut();
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let mut child = entry.child.lock();
    if !child.has_stdin() || entry.taken[0] {
        drop(child);
        return Ok(state.fail(ErrorCode::NotPiped, "stdin is not piped, taken, or already closed"));
    }
    child.close_stdin();
    Ok(0)
}

pub(super) fn read(
    mut caller: Caller<'_, GuestState>,
    handle: i32,
    stream: i32,
    ptr: i32,
    len: i32,
    flags: i32,
) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if let Err(ret) = check_read_args(state, stream, flags) {
            return Ok(ret);
        }
        let buf = try_code!(
            state,
            memory::slice_mut(data, ptr, len),
            "read buffer {ptr:#x}+{len:#x} is outside linear memory"
        );
        read_child(state, handle, stream, flags, buf)
    })
}

/// Checks the stream and flags of a read.
pub(in crate::abi) fn check_read_args(state: &mut GuestState, stream: i32, flags: i32) -> std::result::Result<(), i32> {
    if flags & !NONBLOCK != 0 || !(1..=2).contains(&stream) {
        return Err(state.fail(ErrorCode::InvalidArgument, format!("bad stream {stream} or flags {flags:#x}")));
    }
    Ok(())
}

/// Reads from `stream` of the child behind `handle` into `buf` (stream and flags checked by the
/// caller): the count read (0 at end of file), or an error return.
pub(crate) fn read_child(state: &mut GuestState, handle: i32, stream: i32, flags: i32, buf: &mut [u8]) -> Result<i32> {
    // At most i32::MAX bytes, so the count fits the return value.
    let buf_len = buf.len().min(i32::MAX as usize);
    let buf = &mut buf[..buf_len];
    let deadline = state.deadline;
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.taken[stream as usize] {
        return Ok(state.fail(ErrorCode::NotPiped, format!("stream {stream} of `{handle}` was taken as a stream")));
    }
    let interest = Interest { stdout: stream == 1, stderr: stream == 2, ..Interest::default() };
    let try_read = |child: &mut Child, buf: &mut [u8]| match stream {
        1 => child.try_read_stdout(buf),
        _ => child.try_read_stderr(buf),
    };
    let result = if flags & NONBLOCK != 0 {
        let read = try_read(&mut entry.child.lock(), buf);
        match read {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(ErrorCode::WouldBlock.to_return()),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child.lock(), interest, deadline, |child| try_read(child, buf))
    };
    // What a call saw after the deadline (an end of file, because the child's own timeout ended it)
    // never reaches the guest; the guest stops with the timeout.
    check_deadline(state)?;
    match result {
        Ok(n) => {
            state.spawn.stream_bytes += n as u64;
            Ok(i32::try_from(n).unwrap_or(i32::MAX))
        }
        Err(Blocked::Op(err)) => Ok(state.fail(read_error(&err), error_chain(&err))),
        Err(Blocked::Poll(err)) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

pub(super) fn poll(mut caller: Caller<'_, GuestState>, handle: i32, interest: i32, timeout_ms: i64) -> Result<i32> {
    let state = caller.data_mut();
    if interest as u32 & !INTEREST_ALL != 0 || interest == 0 {
        return Ok(state.fail(ErrorCode::InvalidArgument, format!("bad poll interest {interest:#x}")));
    }
    let user_deadline = until(timeout_ms);
    let deadline = earliest(user_deadline, state.deadline);
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let wanted = Interest {
        stdin: interest as u32 & INTEREST_STDIN != 0,
        stdout: interest as u32 & INTEREST_STDOUT != 0,
        stderr: interest as u32 & INTEREST_STDERR != 0,
        exit: interest as u32 & INTEREST_EXITED != 0,
    };
    let ready = if entry.outcome.is_some() {
        // Reaped already: the exit is ready, and the pipes may still hold output.
        let streams = Interest { exit: false, ..wanted };
        let mut ready = if streams.is_empty() {
            Interest::default()
        } else {
            let polled = entry.child.lock().poll(streams, Some(Duration::ZERO));
            match polled {
                Ok(ready) => ready,
                Err(err) => return Ok(state.fail(ErrorCode::Io, error_chain(&err))),
            }
        };
        ready.exit = wanted.exit;
        ready
    } else {
        let polled = entry.child.lock().poll(wanted, deadline.map(|d| d.saturating_duration_since(Instant::now())));
        match polled {
            Ok(ready) => ready,
            Err(err) => return Ok(state.fail(ErrorCode::Io, error_chain(&err))),
        }
    };
    let bit = |set: bool, bit: u32| if set { bit } else { 0 };
    let bits = bit(ready.stdin, INTEREST_STDIN)
        | bit(ready.stdout, INTEREST_STDOUT)
        | bit(ready.stderr, INTEREST_STDERR)
        | bit(ready.exit, INTEREST_EXITED);
    check_deadline(state)?;
    Ok(bits as i32)
}

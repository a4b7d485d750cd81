//! `kill`, `release` and `pty_resize`: signal a child's process group, let go of its handle,
//! or resize its pseudo-terminal.

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_host_spawn::{ResizeError, Signal, error_chain};

use super::Result;
use crate::state::GuestState;

pub(super) fn kill(mut caller: Caller<'_, GuestState>, handle: i32, signal: i32) -> Result<i32> {
    kill_handle(caller.data_mut(), handle, signal)
}

/// Sends `signal` to the process group of the child behind `handle`: 0 or an error return.
/// Both ABIs kill here.
pub(crate) fn kill_handle(state: &mut GuestState, handle: i32, signal: i32) -> Result<i32> {
    let signal = match Signal::try_from(signal) {
        Ok(signal) if (1..=31).contains(&(signal as i32)) => signal,
        _ => {
            return Ok(
                state.fail(ErrorCode::InvalidArgument, format!("`{signal}` is not a signal number from 1 to 31"))
            );
        }
    };
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.outcome.is_some() {
        return Ok(0);
    }
    let killed = entry.child.lock().kill(signal);
    match killed {
        Ok(()) => Ok(0),
        Err(err) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
    }
}

pub(super) fn release(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    release_handle(caller.data_mut(), handle)
}

/// Frees `handle`, killing and reaping a child still running: 0 or an error return. Both ABIs
/// release here.
pub(crate) fn release_handle(state: &mut GuestState, handle: i32) -> Result<i32> {
    let entry = try_code!(state, state.spawn.children.remove(handle), "`{handle}` is not a handle");
    if entry.outcome.is_none() {
        let mut child = entry.child.lock();
        let _ = child.kill(Signal::SIGKILL);
        let _ = child.wait();
    }
    Ok(0)
}

pub(super) fn pty_resize(mut caller: Caller<'_, GuestState>, handle: i32, rows: i32, cols: i32) -> Result<i32> {
    pty_resize_handle(caller.data_mut(), handle, rows, cols)
}

/// Resizes the pseudo-terminal of the child behind `handle`: 0 or an error return. Both ABIs
/// resize here.
pub(crate) fn pty_resize_handle(state: &mut GuestState, handle: i32, rows: i32, cols: i32) -> Result<i32> {
    let size = |n: i32| u16::try_from(n).ok().filter(|&n| n > 0);
    let (Some(rows), Some(cols)) = (size(rows), size(cols)) else {
        let message = format!("`{rows}` × `{cols}` is not a terminal size (1 to 65535 each)");
        return Ok(state.fail(ErrorCode::InvalidArgument, message));
    };
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let resized = entry.child.lock().pty_resize(rows, cols);
    match resized {
        Ok(()) => Ok(0),
        Err(err @ ResizeError::NotPty { .. }) => {
            Ok(state.fail(ErrorCode::NotPiped, format!("child `{handle}`: {}", error_chain(&err))))
        }
        Err(err) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
    }
}

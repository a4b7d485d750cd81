//! Kill, release and resize: signal a child's process group, let go of its handle, or resize
//! its pseudo-terminal.

use wrt_abi::ErrorCode;
use wrt_host_spawn::{ResizeError, Signal};
use wrt_text::error_chain;

use super::spawn_state::SpawnState;
use super::{Failure, Served};

/// Sends `signal` to the process group of the child behind `handle`.
pub(crate) fn kill(spawn: &mut SpawnState, handle: i32, signal: i32) -> Served<()> {
    let signal = match Signal::try_from(signal) {
        Ok(signal) if (1..=31).contains(&(signal as i32)) => signal,
        _ => {
            let message = format!("`{signal}` is not a signal number from 1 to 31");
            return Ok(Err(Failure::new(ErrorCode::InvalidArgument, message)));
        }
    };
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.outcome.is_some() {
        return Ok(Ok(()));
    }
    let killed = entry.child.lock().kill(signal);
    Ok(killed.map_err(|err| Failure::new(ErrorCode::Io, error_chain(&err))))
}

/// Frees `handle`, killing and reaping a child still running.
pub(crate) fn release(spawn: &mut SpawnState, handle: i32) -> Served<()> {
    let entry = tried!(spawn.children.remove(handle), "`{handle}` is not a handle");
    if entry.outcome.is_none() {
        let mut child = entry.child.lock();
        let _ = child.kill(Signal::SIGKILL);
        let _ = child.wait();
    }
    Ok(Ok(()))
}

/// Resizes the pseudo-terminal of the child behind `handle`.
pub(crate) fn pty_resize(spawn: &mut SpawnState, handle: i32, rows: i32, cols: i32) -> Served<()> {
    let size = |n: i32| u16::try_from(n).ok().filter(|&n| n > 0);
    let (Some(rows), Some(cols)) = (size(rows), size(cols)) else {
        let message = format!("`{rows}` × `{cols}` is not a terminal size (1 to 65535 each)");
        return Ok(Err(Failure::new(ErrorCode::InvalidArgument, message)));
    };
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let resized = entry.child.lock().pty_resize(rows, cols);
    Ok(resized.map_err(|err| match err {
        ResizeError::NotPty { .. } => {
            Failure::new(ErrorCode::NotPiped, format!("child `{handle}`: {}", error_chain(&err)))
        }
        _ => Failure::new(ErrorCode::Io, error_chain(&err)),
    }))
}

//! `kill`, `release` and `pty_resize` of `wrt_v1`, answered by the process service
//! (`process_service::control`).

use wasmtime::Caller;

use super::Result;
use crate::guest_state::GuestState;
use crate::process_service::{self, Served};

/// A service answer without a value as a return code: 0, or the failure's code with its message
/// recorded as the last error.
fn code(state: &mut GuestState, served: Served<()>) -> Result<i32> {
    Ok(match served? {
        Ok(()) => 0,
        Err(failure) => state.fail_with(failure),
    })
}

pub(super) fn kill(mut caller: Caller<'_, GuestState>, handle: i32, signal: i32) -> Result<i32> {
    let state = caller.data_mut();
    let served = process_service::control::kill(&mut state.spawn, handle, signal);
    code(state, served)
}

pub(super) fn release(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    let state = caller.data_mut();
    let served = process_service::control::release(&mut state.spawn, handle);
    code(state, served)
}

pub(super) fn pty_resize(mut caller: Caller<'_, GuestState>, handle: i32, rows: i32, cols: i32) -> Result<i32> {
    let state = caller.data_mut();
    let served = process_service::control::pty_resize(&mut state.spawn, handle, rows, cols);
    code(state, served)
}

//! `wait` and `wait_any` of `wrt_v1`: the arguments are read from linear memory, the process
//! service waits (`process_service::wait`), and the status record is written back.

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_abi::consts::MAX_WAIT_ANY;
use wrt_abi::status::STATUS_LEN;

use super::super::guest_memory::with_memory;
use super::super::memory;
use super::super::status;
use super::Result;
use crate::epoch_ticker::until;
use crate::guest_state::GuestState;
use crate::process_service;

pub(super) fn wait(mut caller: Caller<'_, GuestState>, handle: i32, timeout_ms: i64, status_ptr: i32) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        let status_range = try_code!(
            state,
            memory::range(data.len(), status_ptr, STATUS_LEN as i32),
            "status record at {status_ptr:#x} is outside linear memory"
        );
        match process_service::wait::wait(&mut state.spawn, &state.stop, handle, until(timeout_ms))? {
            Ok(outcome) => {
                data[status_range].copy_from_slice(&status::encode(&outcome));
                Ok(0)
            }
            Err(failure) => Ok(state.fail_with(failure)),
        }
    })
}

pub(super) fn wait_any(
    mut caller: Caller<'_, GuestState>,
    handles_ptr: i32,
    count: i32,
    timeout_ms: i64,
    status_ptr: i32,
) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if !(1..=MAX_WAIT_ANY).contains(&count) {
            return Ok(state
                .fail(ErrorCode::InvalidArgument, format!("wait_any takes 1 to {MAX_WAIT_ANY} handles, not {count}")));
        }
        let bytes = try_code!(
            state,
            memory::slice(data, handles_ptr, count * 4),
            "handle array {handles_ptr:#x}+{count}×4 is outside linear memory"
        );
        let handles: Vec<i32> = bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let status_range = try_code!(
            state,
            memory::range(data.len(), status_ptr, STATUS_LEN as i32),
            "status record at {status_ptr:#x} is outside linear memory"
        );
        match process_service::wait::wait_any(&mut state.spawn, &state.stop, &handles, until(timeout_ms))? {
            Ok((index, outcome)) => {
                data[status_range].copy_from_slice(&status::encode(&outcome));
                Ok(index as i32)
            }
            Err(failure) => Ok(state.fail_with(failure)),
        }
    })
}

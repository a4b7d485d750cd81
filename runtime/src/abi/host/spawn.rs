//! `spawn` and `run` of `wrt_v1`: the request is read from linear memory and decoded, then
//! handed to the process service (`process_service::spawn`).

use wasmtime::Caller;
use wrt_abi::request;
use wrt_abi::status::RUN_STATUS_LEN;

use super::super::guest_memory::with_memory;
use super::super::memory;
use super::super::status;
use super::Result;
use crate::guest_state::GuestState;
use crate::process_service;

pub(super) fn spawn(mut caller: Caller<'_, GuestState>, req_ptr: i32, req_len: i32) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        let bytes = try_request!(
            state,
            &[],
            memory::slice(data, req_ptr, req_len),
            "spawn request {req_ptr:#x}+{req_len:#x} is outside linear memory"
        );
        let request =
            try_request!(state, request::program_bytes(bytes), request::decode(bytes), "malformed spawn request");
        Ok(match process_service::spawn::spawn(&mut state.spawn, &state.stop, &request)? {
            Ok(handle) => handle,
            Err(failure) => state.fail_with(failure),
        })
    })
}

pub(super) fn run(
    mut caller: Caller<'_, GuestState>,
    req_ptr: i32,
    req_len: i32,
    io_ptr: i32,
    status_ptr: i32,
) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        // For the audit record of a request that fails before the spawner sees it.
        let program =
            memory::slice(data, req_ptr, req_len).map(|b| request::program_bytes(b).to_vec()).unwrap_or_default();
        let io = try_request!(
            state,
            &program,
            memory::slice(data, io_ptr, 24),
            "io record at {io_ptr:#x} is outside linear memory"
        );
        let field = |i: usize| i32::from_le_bytes([io[i * 4], io[i * 4 + 1], io[i * 4 + 2], io[i * 4 + 3]]);
        let [stdin_ptr, stdin_len, stdout_ptr, stdout_cap, stderr_ptr, stderr_cap] = std::array::from_fn(field);
        let stdin = try_request!(
            state,
            &program,
            memory::slice(data, stdin_ptr, stdin_len),
            "stdin buffer {stdin_ptr:#x}+{stdin_len:#x} is outside linear memory"
        );
        let stdout_range = try_request!(
            state,
            &program,
            memory::range(data.len(), stdout_ptr, stdout_cap),
            "stdout buffer {stdout_ptr:#x}+{stdout_cap:#x} is outside linear memory"
        );
        let stderr_range = try_request!(
            state,
            &program,
            memory::range(data.len(), stderr_ptr, stderr_cap),
            "stderr buffer {stderr_ptr:#x}+{stderr_cap:#x} is outside linear memory"
        );
        let status_range = try_request!(
            state,
            &program,
            memory::range(data.len(), status_ptr, RUN_STATUS_LEN as i32),
            "status record at {status_ptr:#x} is outside linear memory"
        );
        let bytes = try_request!(
            state,
            &program,
            memory::slice(data, req_ptr, req_len),
            "spawn request {req_ptr:#x}+{req_len:#x} is outside linear memory"
        );
        let request = try_request!(state, &program, request::decode(bytes), "malformed spawn request");
        let caps = [stdout_range.len(), stderr_range.len()];
        let room = state.buffer_room();
        let output = match process_service::spawn::run(&mut state.spawn, &state.stop, room, &request, stdin, caps)? {
            Ok(output) => output,
            Err(failure) => return Ok(state.fail_with(failure)),
        };
        let (stdout_len, stderr_len) = (output.stdout.len(), output.stderr.len());
        data[stdout_range.start..stdout_range.start + stdout_len].copy_from_slice(&output.stdout);
        data[stderr_range.start..stderr_range.start + stderr_len].copy_from_slice(&output.stderr);
        data[status_range].copy_from_slice(&status::encode_run(&output.outcome, stdout_len as u32, stderr_len as u32));
        Ok(0)
    })
}

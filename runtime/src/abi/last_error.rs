//! The guest's last error: every failing `wrt_v1` call records a message beside the code it
//! returns, and the `last_error` host function copies that message out (docs/abi.md, "Errors").

use wasmtime::Caller;
use wrt_abi::ErrorCode;

use super::guest_memory::with_memory;
use super::memory;
use crate::guest_state::GuestState;
use crate::process_service::Failure;

impl GuestState {
    /// Records `message` as the last error and returns `code` as a host function's result.
    pub(crate) fn fail(&mut self, code: ErrorCode, message: impl Into<String>) -> i32 {
        self.last_error = message.into();
        code.to_return()
    }

    /// Records a service failure as the last error and returns its code.
    pub(crate) fn fail_with(&mut self, failure: Failure) -> i32 {
        self.fail(failure.code, failure.message)
    }

    /// Fails a spawn request that never reached the spawner: `SpawnState::refuse_request` (which
    /// writes its audit record), recorded as the last error.
    pub(crate) fn fail_request(&mut self, code: ErrorCode, program: &[u8], message: String) -> i32 {
        let failure = self.spawn.refuse_request(code, program, message);
        self.fail_with(failure)
    }
}

/// `last_error(ptr, len)`: copies up to `len` bytes of the last error's message to `ptr` and
/// returns the message's whole length.
pub(super) fn last_error(mut caller: Caller<'_, GuestState>, ptr: i32, len: i32) -> wasmtime::Result<i32> {
    with_memory(&mut caller, |data, state| {
        let message = state.last_error.as_bytes();
        let buf = match memory::slice_mut(data, ptr, len) {
            Ok(buf) => buf,
            Err(code) => return Ok(code.to_return()),
        };
        let n = message.len().min(buf.len());
        buf[..n].copy_from_slice(&message[..n]);
        Ok(i32::try_from(message.len()).unwrap_or(i32::MAX))
    })
}

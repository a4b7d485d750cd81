//! The guest's exported memory, as every host function of `wrt_v1` that reads or writes guest
//! memory reaches it.

use wasmtime::{Caller, Memory};
use wrt_abi::ErrorCode;

use crate::guest_state::GuestState;

/// The guest's exported memory, or an `OUT_OF_BOUNDS` return when it has none.
pub(super) fn guest_memory(caller: &mut Caller<'_, GuestState>) -> Result<Memory, i32> {
    if let Some(memory) = caller.data().memory {
        return Ok(memory);
    }
    match caller.get_export("memory").and_then(|e| e.into_memory()) {
        Some(memory) => Ok(memory),
        None => Err(caller.data_mut().fail(ErrorCode::OutOfBounds, "the guest exports no `memory`")),
    }
}

/// Runs `f` on the guest's linear memory and state: the prelude of every host function that
/// reads or writes guest memory. A guest that exports no `memory` gets `OUT_OF_BOUNDS` instead.
pub(super) fn with_memory(
    caller: &mut Caller<'_, GuestState>,
    f: impl FnOnce(&mut [u8], &mut GuestState) -> wasmtime::Result<i32>,
) -> wasmtime::Result<i32> {
    match guest_memory(caller) {
        Ok(memory) => {
            let (data, state) = memory.data_and_store_mut(caller);
            f(data, state)
        }
        Err(ret) => Ok(ret),
    }
}

//! The host functions of `wrt_v1`. Each one checks every pointer, length, handle and flag the
//! guest passes, and answers a guest mistake with an error code: never a panic, never a trap.
//! The only traps are the sandbox's own deadline passing while the guest waits.
//!
//! One file per concept: [`spawn`] (`spawn`, `run`), [`io`] (`write`, `close_stdin`, `read`,
//! `poll`), [`wait`] (`wait`, `wait_any`), [`control`] (`kill`, `release`, `pty_resize`), and
//! `last_error` in `abi::last_error`; the helpers every host function shares live here.

pub(crate) mod control;
pub(crate) mod io;
pub(crate) mod spawn;
pub(crate) mod wait;

use wasmtime::{Caller, Linker, Memory};
use wrt_abi::ErrorCode;

use self::control::{kill, pty_resize, release};
pub(super) use self::io::{check_read_args, read_child, write_child};
use self::io::{close_stdin, poll, read, write};
use self::spawn::{run, spawn};
use self::wait::{wait, wait_any};
use crate::state::GuestState;

/// Non-blocking flag of `write` and `read`.
pub(super) const NONBLOCK: i32 = wrt_abi::consts::NONBLOCKING;

type Result<T> = wasmtime::Result<T>;

/// Defines every function of `wrt_v1` in `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: crate::host_fn::Mode) -> Result<()> {
    let m = super::MODULE;
    linker.func_wrap(m, "spawn", spawn)?;
    linker.func_wrap(m, "write", write)?;
    linker.func_wrap(m, "close_stdin", close_stdin)?;
    linker.func_wrap(m, "read", read)?;
    linker.func_wrap(m, "poll", poll)?;
    linker.func_wrap(m, "wait", wait)?;
    linker.func_wrap(m, "wait_any", wait_any)?;
    linker.func_wrap(m, "kill", kill)?;
    linker.func_wrap(m, "release", release)?;
    linker.func_wrap(m, "pty_resize", pty_resize)?;
    linker.func_wrap(m, "run", run)?;
    linker.func_wrap(m, "last_error", super::last_error::last_error)?;
    super::buffers::add_to_linker(linker, mode)?;
    Ok(())
}

/// The guest's exported memory, or an `OUT_OF_BOUNDS` return when it has none.
pub(super) fn guest_memory(caller: &mut Caller<'_, GuestState>) -> std::result::Result<Memory, i32> {
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
    f: impl FnOnce(&mut [u8], &mut GuestState) -> Result<i32>,
) -> Result<i32> {
    match guest_memory(caller) {
        Ok(memory) => {
            let (data, state) = memory.data_and_store_mut(caller);
            f(data, state)
        }
        Err(ret) => Ok(ret),
    }
}

//! The host functions of `wrt_v1`. Each one checks every pointer, length, handle and flag the
//! guest passes, and answers a guest mistake with an error code: never a panic, never a trap.
//! The only traps are the sandbox's own deadline passing while the guest waits.
//!
//! One file per concept: [`spawn`] (`spawn`, `run`), [`io`] (`write`, `close_stdin`, `read`,
//! `poll`), [`wait`] (`wait`, `wait_any`), [`control`] (`kill`, `release`, `pty_resize`), and
//! `last_error` in `abi::last_error`; the guest's memory in `abi::guest_memory`.

pub(crate) mod control;
pub(crate) mod io;
pub(crate) mod spawn;
pub(crate) mod wait;

use wasmtime::Linker;

use self::control::{kill, pty_resize, release};
pub(super) use self::io::{check_read_args, read_child, write_child};
use self::io::{close_stdin, poll, read, write};
use self::spawn::{run, spawn};
use self::wait::{wait, wait_any};
use crate::guest_state::GuestState;

/// Non-blocking flag of `write` and `read`.
pub(super) const NONBLOCK: i32 = wrt_abi::consts::NONBLOCKING;

type Result<T> = wasmtime::Result<T>;

/// Defines the functions of `wrt_v1` on children in `linker`.
pub(super) fn add_to_linker(linker: &mut Linker<GuestState>) -> Result<()> {
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
    Ok(())
}

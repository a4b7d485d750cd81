//! `proc_exit` for every status a guest can pass. wasmtime-wasi refuses statuses of 126 or more
//! with an error that would read as a trap; wrt passes the status on as the guest's exit, and
//! the embedder decides what it means (`wrt run` exits with its low 8 bits, as POSIX `exit`).

use wasmtime::Linker;

use crate::guest_state::GuestState;

/// Replaces WASI's `proc_exit` in `linker`, which already holds the WASI functions.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let defined = linker
        .func_wrap("wasi_snapshot_preview1", "proc_exit", |status: i32| -> wasmtime::Result<()> {
            Err(wasmtime_wasi::I32Exit(status).into())
        })
        .map(|_| ());
    linker.allow_shadowing(false);
    defined
}

//! What one WASI preview 1 call may make the host allocate on the guest's behalf, kept within
//! the fixed overhead of the memory limit (docs/abi.md, "Memory limit"). wasmtime-wasi copies a
//! call's arguments into host memory whole, and sizes them from the guest's numbers, so the
//! wrappers here bound those numbers before WASI's own functions (`wasi::original`) see them:
//!
//! - a path longer than [`MAX_PATH`] bytes is refused with `ENAMETOOLONG`, in every function
//!   that takes one (both paths of `path_link`, `path_rename` and `path_symlink`);
//! - `random_get` is filled in pieces of at most [`MAX_HOST_COPY`] bytes;
//! - `poll_oneoff` with more than [`MAX_SUBSCRIPTIONS`] subscriptions is refused with `EINVAL`
//!   (wasmtime-wasi holds about 600 bytes per subscription while it polls).
//!
//! The rest need no wrapper: file reads and writes go straight between the file and linear
//! memory (the context lets WASI block the guest's thread, see `wasi::ctx`), `fd_pread` reads
//! at most 64 KiB at a time, stdout and stderr go straight from linear memory while they are
//! wrt's own (`wasi::direct_writes`), and a page at a time otherwise.

use wasmtime::{Caller, Linker, Val};

use super::original;
use crate::guest_state::GuestState;
use crate::host_fn::{Mode, define};

/// The longest path a WASI call takes, in bytes: Linux's `PATH_MAX`, past which the kernel
/// refuses a path anyway.
pub(crate) const MAX_PATH: u32 = 4096;
/// The most bytes of random data the host makes at once, for `random_get` (in pieces) and for a
/// component's `get-random-bytes` (its limit): 1 MiB.
pub(crate) const MAX_HOST_COPY: u32 = 1 << 20;
/// The most subscriptions one `poll_oneoff` takes.
pub(crate) const MAX_SUBSCRIPTIONS: u32 = 1024;

/// WASI preview 1's `errno` values the wrappers return.
const EINVAL: i32 = 28;
const ENAMETOOLONG: i32 = 37;

/// The functions that take paths, and which of their parameters are path lengths.
const PATHS: &[(&str, &[usize])] = &[
    ("path_create_directory", &[2]),
    ("path_filestat_get", &[3]),
    ("path_filestat_set_times", &[3]),
    ("path_link", &[3, 6]),
    ("path_open", &[3]),
    ("path_readlink", &[2]),
    ("path_remove_directory", &[2]),
    ("path_rename", &[2, 5]),
    ("path_symlink", &[1, 4]),
    ("path_unlink_file", &[2]),
];

/// Wraps WASI's path functions and `random_get` in `linker`, which already holds the WASI
/// functions (`poll_oneoff`'s wrapper, in `wasi::blocking_calls`, asks [`check_subscriptions`]).
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: Mode) -> wasmtime::Result<()> {
    for &(name, lengths) in PATHS {
        original::shadow_new(linker, mode, name, move |mut caller, params| {
            Box::pin(async move {
                let too_long = lengths.iter().any(|&at| params[at].unwrap_i32().cast_unsigned() > MAX_PATH);
                match too_long {
                    true => Ok(ENAMETOOLONG),
                    false => original::call(&mut caller, name, params).await,
                }
            })
        })?;
    }
    original::shadow(
        linker,
        "random_get",
        |linker| define!(linker, mode, original::WASI, "random_get", random_get, (buf: i32, len: i32)),
    )
}

/// The errno for a `poll_oneoff` of `count` subscriptions, if it is refused.
pub(crate) fn check_subscriptions(count: i32) -> Option<i32> {
    (count.cast_unsigned() > MAX_SUBSCRIPTIONS).then_some(EINVAL)
}

/// Fills `buf..buf+len` a piece at a time with WASI's own `random_get`, which makes the bytes
/// in host memory before it copies them. A piece out of bounds traps, as the whole would.
async fn random_get(mut caller: Caller<'_, GuestState>, buf: i32, len: i32) -> wasmtime::Result<i32> {
    let (buf, len) = (buf.cast_unsigned(), len.cast_unsigned());
    if buf.checked_add(len).is_none() {
        return Err(wasmtime::Error::msg(format!("`random_get` of {len} bytes at {buf:#x} overflows linear memory")));
    }
    let mut done = 0;
    loop {
        let piece = (len - done).min(MAX_HOST_COPY);
        let at = (buf + done).cast_signed();
        let errno = original::call(&mut caller, "random_get", &[Val::I32(at), Val::I32(piece.cast_signed())]).await?;
        done += piece;
        if errno != 0 || done == len {
            return Ok(errno);
        }
    }
}

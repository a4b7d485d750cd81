//! `fd_readdir` that lists a directory once per pass, not once per call.
//!
//! WASI's own `fd_readdir` lists the whole directory, and looks up every entry's inode, on every
//! call, then skips the entries before the call's cookie. A guest reads a directory a buffer at
//! a time (Rust's standard library, wasi-libc), so a directory of `n` entries costs `n` lookups
//! per call and `n²/k` in all: 2,000 files read 4 KiB at a time make 66,000 `statx` calls.
//!
//! The wrapper here lists the directory with WASI's own function once, into host memory, when a
//! pass starts (cookie 0, or a cookie for a descriptor it holds no listing of), and answers the
//! calls that follow from that listing: the bytes a call returns are the bytes WASI's own would
//! have written for the same cookie at the moment of listing (the listing is the entries in
//! WASI's encoding, cut at the buffer's end as WASI cuts them). A pass sees the directory as it
//! was when the pass started, as POSIX allows a directory stream to (entries added or removed
//! during a pass may or may not be returned). A call with cookie 0 starts a new pass: it lists
//! the directory again. `fd_close` and `fd_renumber` drop the listings of the descriptors they
//! end (`wasi::direct_writes`).
//!
//! Host memory: the listings of `guest_state::listings`, at most 512 KiB in all. A directory whose
//! listing is longer is read through WASI's own function, call by call, as before. Anything
//! unusual (an error, a buffer out of bounds, a shared memory) is also left to WASI's own
//! function, so the guest sees its errors exactly.

use wasmtime::{Caller, Linker, Val};
use wasmtime_wasi::p1::wasi_snapshot_preview1 as p1;

use super::original;
use crate::guest_state::GuestState;
use crate::guest_state::listings::{Entries, Listing, MAX_LISTED};
use crate::host_fn::{Mode, define};

/// The size of the first listing tried when the guest's buffer is smaller.
const FIRST_TRY: u32 = 16 << 10;

/// Wraps WASI's `fd_readdir` in `linker`, which already holds the WASI functions.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: Mode) -> wasmtime::Result<()> {
    original::shadow(
        linker,
        "fd_readdir",
        |linker| define!(linker, mode, original::WASI, "fd_readdir", fd_readdir, (fd: i32, buf: i32, len: i32, cookie: i64, used: i32)),
    )
}

async fn fd_readdir(
    mut caller: Caller<'_, GuestState>,
    fd: i32,
    buf: i32,
    len: i32,
    cookie: i64,
    used: i32,
) -> wasmtime::Result<i32> {
    let params = [Val::I32(fd), Val::I32(buf), Val::I32(len), Val::I64(cookie), Val::I32(used)];
    let cookie = cookie.cast_unsigned();
    let listed = match caller.data().listings.get(fd) {
        Some(listing) if cookie != 0 => listing.entries.is_some(),
        Some(Listing { entries: None, .. }) => false,
        _ => list(&mut caller, fd, len.cast_unsigned()).await?,
    };
    if listed && answer(&mut caller, fd, buf, len, cookie, used) {
        return Ok(0);
    }
    original::call(&mut caller, "fd_readdir", &params).await
}

/// Lists `fd` afresh with WASI's own function into host memory and keeps the listing; `false`
/// when there is no listing to answer from (WASI's own function answers the call).
async fn list(caller: &mut Caller<'_, GuestState>, fd: i32, len: u32) -> wasmtime::Result<bool> {
    caller.data_mut().listings.end(fd);
    let mut size = len.clamp(FIRST_TRY, MAX_LISTED);
    loop {
        caller.data_mut().listings.make_room(size as usize);
        // The listing, then where WASI stores its length.
        let mut host = vec![0u8; size as usize + 4];
        let mode = caller.data().mode;
        let mut memory = wiggle::GuestMemory::Unshared(&mut host);
        let listing = p1::fd_readdir(wasi(caller)?, &mut memory, fd, 0, size.cast_signed(), 0, size.cast_signed());
        let errno = match mode {
            Mode::Sync => wasmtime_wasi::runtime::in_tokio(listing)?,
            Mode::Async => listing.await?,
        };
        if errno != 0 {
            return Ok(false);
        }
        let length = u32::from_le_bytes(host[size as usize..].try_into().expect("four bytes"));
        if length < size {
            host.truncate(length as usize);
            host.shrink_to_fit();
            let entries = Entries::parse(host).filter(|entries| entries.size() <= MAX_LISTED as usize);
            let found = entries.is_some();
            caller.data_mut().listings.keep(Listing { fd, entries });
            return Ok(found);
        }
        if size == MAX_LISTED {
            caller.data_mut().listings.keep(Listing { fd, entries: None });
            return Ok(false);
        }
        size = size.saturating_mul(8).min(MAX_LISTED);
    }
}

/// Writes the answer to a call from `fd`'s listing into guest memory; `false` when it cannot
/// (the buffer or the length's place out of bounds, or a shared memory).
fn answer(caller: &mut Caller<'_, GuestState>, fd: i32, buf: i32, len: i32, cookie: u64, used: i32) -> bool {
    let Some(wasmtime::Extern::Memory(memory)) = caller.get_export("memory") else {
        return false;
    };
    let (memory, state) = memory.data_and_store_mut(&mut *caller);
    let Some(Listing { entries: Some(entries), .. }) = state.listings.get(fd) else {
        return false;
    };
    let bytes = entries.at_cookie(cookie, len.cast_unsigned());
    let (buf, used) = (buf.cast_unsigned() as usize, used.cast_unsigned() as usize);
    let (Some(target), Some(_)) = (buf.checked_add(bytes.len()), used.checked_add(4)) else {
        return false;
    };
    if target > memory.len() || used + 4 > memory.len() {
        return false;
    }
    memory[buf..target].copy_from_slice(bytes);
    let length = u32::try_from(bytes.len()).expect("a listing is at most MAX_LISTED bytes");
    memory[used..used + 4].copy_from_slice(&length.to_le_bytes());
    true
}

/// The guest's WASI context.
fn wasi<'a>(caller: &'a mut Caller<'_, GuestState>) -> wasmtime::Result<&'a mut wasmtime_wasi::p1::WasiP1Ctx> {
    caller.data_mut().wasi.as_deref_mut().ok_or_else(|| wasmtime::Error::msg("WASI is not available"))
}

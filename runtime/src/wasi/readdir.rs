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
//! end (`wasi::stdio`).
//!
//! Host memory: at most [`MAX_LISTED`] bytes of listings in all (the oldest listing makes room
//! for a new one), the listing being made included, and at most [`MAX_LISTINGS`] listings. A
//! directory whose listing is longer is read through WASI's own function, call by call, as
//! before. Anything unusual (an error, a buffer out of bounds, a shared memory) is also left to
//! WASI's own function, so the guest sees its errors exactly.

use wasmtime::{Caller, Linker, Val};
use wasmtime_wasi::p1::wasi_snapshot_preview1 as p1;

use super::original;
use crate::host_fn::{Mode, define};
use crate::state::GuestState;

/// The most bytes of listings kept at once, and so the longest listing (about 13,000 entries
/// of 10-byte names): 512 KiB.
pub(crate) const MAX_LISTED: u32 = 512 << 10;
/// The most listings kept at once (one per descriptor being read).
pub(crate) const MAX_LISTINGS: usize = 4;
/// The size of a `dirent` in WASI's encoding: `d_next` (u64), `d_ino` (u64), `d_namlen` (u32),
/// `d_type` (u8), padding.
const DIRENT: usize = 24;
/// The size of the first listing tried when the guest's buffer is smaller.
const FIRST_TRY: u32 = 16 << 10;

/// The listings a guest's store keeps.
#[derive(Default)]
pub(crate) struct Listings {
    listings: Vec<Listing>,
}

/// One descriptor's listing: its entries in WASI's encoding, or a note that it was too long.
struct Listing {
    fd: i32,
    /// The listing, or `None` when it is longer than [`MAX_LISTED`].
    entries: Option<Entries>,
}

struct Entries {
    bytes: Vec<u8>,
    /// Where each entry starts in `bytes`: entry `i` is the one cookie `i` starts at.
    starts: Vec<u32>,
}

impl Listings {
    /// Drops the listing of `fd`, which was closed or renumbered.
    pub(crate) fn end(&mut self, fd: i32) {
        self.listings.retain(|listing| listing.fd != fd);
    }

    fn get(&self, fd: i32) -> Option<&Listing> {
        self.listings.iter().find(|listing| listing.fd == fd)
    }

    /// The host memory the listings hold.
    fn held(&self) -> usize {
        self.listings.iter().filter_map(|listing| listing.entries.as_ref()).map(Entries::size).sum()
    }

    /// Drops the oldest listings until `bytes` more fit within [`MAX_LISTED`] and one more
    /// within [`MAX_LISTINGS`].
    fn make_room(&mut self, bytes: usize) {
        while !self.listings.is_empty()
            && (self.held() + bytes > MAX_LISTED as usize || self.listings.len() >= MAX_LISTINGS)
        {
            self.listings.remove(0);
        }
    }

    fn keep(&mut self, listing: Listing) {
        self.end(listing.fd);
        self.make_room(listing.entries.as_ref().map_or(0, Entries::size));
        self.listings.push(listing);
    }
}

impl Entries {
    /// The host memory the listing holds.
    fn size(&self) -> usize {
        self.bytes.len() + self.starts.len() * size_of::<u32>()
    }

    /// The entries of `bytes`, a complete listing in WASI's encoding, or `None` if `bytes` is
    /// not one (entry `i`'s `d_next` is `i + 1`).
    fn parse(bytes: Vec<u8>) -> Option<Self> {
        let mut starts = Vec::new();
        let mut at = 0usize;
        while at < bytes.len() {
            let header = bytes.get(at..at + DIRENT)?;
            let next = u64::from_le_bytes(header[0..8].try_into().ok()?);
            let name_len = u32::from_le_bytes(header[16..20].try_into().ok()?) as usize;
            if next != starts.len() as u64 + 1 {
                return None;
            }
            starts.push(u32::try_from(at).ok()?);
            at = at.checked_add(DIRENT + name_len)?;
        }
        (at == bytes.len()).then_some(Entries { bytes, starts })
    }

    /// What a call with `cookie` and a buffer of `len` bytes returns.
    fn at_cookie(&self, cookie: u64, len: u32) -> &[u8] {
        let start = usize::try_from(cookie)
            .ok()
            .and_then(|cookie| self.starts.get(cookie))
            .map_or(self.bytes.len(), |&start| start as usize);
        let rest = &self.bytes[start..];
        &rest[..rest.len().min(len as usize)]
    }
}

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
    caller.data_mut().wasi.as_mut().ok_or_else(|| wasmtime::Error::msg("WASI is not available"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirent(next: u64, name: &str) -> Vec<u8> {
        let mut entry = vec![0u8; DIRENT];
        entry[0..8].copy_from_slice(&next.to_le_bytes());
        entry[16..20].copy_from_slice(&(name.len() as u32).to_le_bytes());
        entry.extend_from_slice(name.as_bytes());
        entry
    }

    fn listing(names: &[&str]) -> Vec<u8> {
        names.iter().zip(1..).flat_map(|(name, next)| dirent(next, name)).collect()
    }

    #[test]
    fn a_cookie_starts_the_answer_at_its_entry_and_the_buffer_cuts_it() {
        let bytes = listing(&[".", "..", "alpha", "b"]);
        let entries = Entries::parse(bytes.clone()).expect("a listing");
        assert_eq!(entries.at_cookie(0, 4096), &bytes[..]);
        let third = DIRENT + 1 + DIRENT + 2;
        assert_eq!(entries.at_cookie(2, 4096), &bytes[third..]);
        assert_eq!(entries.at_cookie(2, 30), &bytes[third..third + 30], "cut inside the name, as WASI cuts");
        assert!(entries.at_cookie(4, 4096).is_empty(), "past the last entry");
        assert!(entries.at_cookie(u64::MAX, 4096).is_empty());
    }

    #[test]
    fn bytes_that_are_not_a_listing_give_none() {
        let mut bytes = listing(&[".", ".."]);
        assert!(Entries::parse(bytes[..bytes.len() - 1].to_vec()).is_none(), "a cut name");
        bytes[0] = 7;
        assert!(Entries::parse(bytes).is_none(), "a d_next out of order");
        assert!(Entries::parse(Vec::new()).is_some_and(|entries| entries.starts.is_empty()));
    }

    #[test]
    fn listings_stay_within_their_bytes_and_count() {
        let mut listings = Listings::default();
        let names: Vec<String> = (0..1500).map(|i| format!("{i:0>100}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = Entries::parse(listing(&names)).expect("a listing");
        assert!(big.size() > MAX_LISTED as usize / 4);
        for fd in 3..7 {
            listings.keep(Listing { fd, entries: Entries::parse(big.bytes.clone()) });
            assert!(listings.held() <= MAX_LISTED as usize, "{} bytes held", listings.held());
        }
        assert!(listings.get(3).is_none() && listings.get(6).is_some(), "the oldest made room");
        listings.make_room(MAX_LISTED as usize);
        assert_eq!(listings.held(), 0, "a listing of the most bytes is made alone");
    }

    #[test]
    fn a_closed_descriptor_loses_its_listing_and_the_oldest_makes_room() {
        let mut listings = Listings::default();
        for fd in 3..3 + MAX_LISTINGS as i32 + 1 {
            listings.keep(Listing { fd, entries: None });
        }
        assert!(listings.get(3).is_none(), "the oldest made room");
        assert!(listings.get(4).is_some());
        listings.end(4);
        assert!(listings.get(4).is_none());
        assert_eq!(listings.listings.len(), MAX_LISTINGS - 1);
    }
}

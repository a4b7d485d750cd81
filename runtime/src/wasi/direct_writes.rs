//! `fd_write` to a core module's standard output and error while they are wrt's own streams
//! ([`crate::GuestOutput::Inherit`]): the bytes go from linear memory to the descriptor with
//! `writev`, all of a call's buffers at once. WASI's own `fd_write` copies the first non-empty
//! buffer into host memory and writes it a page at a time, flushing after each: about 25,000
//! `write` calls for 100 MB, where this makes about 1,600 into a 64 KiB pipe.
//!
//! What the guest sees is what WASI's own gives, with every buffer written rather than the first:
//! the call blocks until all the bytes are written, and returns how many; a closed pipe is `EIO`
//! (as WASI reports `EPIPE` on a stream); a descriptor wrt's own process has closed takes the
//! bytes and discards them (as Rust's standard output does). Anything out of bounds or misaligned
//! goes to WASI's own, which traps as the specification says.
//!
//! A discarded stream ([`crate::GuestOutput::Null`]) takes every write here too, as WASI's own
//! does, without the trip through WASI's own function.
//!
//! The guest's descriptors 1 and 2 are wrt's streams until the guest closes or renumbers them:
//! `fd_close` and `fd_renumber` are wrapped to notice, and from then on that descriptor's writes
//! go to WASI's own, as do writes to any other descriptor and to a captured or discarded stream.
//!
//! Under a deadline the write blocks only as long as the deadline's interruption allows
//! (`epoch_ticker`): from the deadline on, the blocked `writev` fails with `EINTR` and the guest
//! stops. A process whose `SIGURG` handler is not wrt's has no such interruption, so there the
//! writes go to WASI's own through the deadline's stream (`wasi::blocking_calls`).
//!
//! Host memory: the list of buffers, at most [`MAX_BUFFERS`] of them (16 KiB), per call.

use std::io::{IoSlice, Write};
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use wasmtime::{Caller, Linker, Val};

use super::original;
use crate::epoch_ticker::DeadlineExceeded;
use crate::guest_state::GuestState;
use crate::guest_stdio::Stream;
use crate::host_fn::{Mode, define};
use crate::stop::Stop;

/// The most buffers one call writes (Linux's `IOV_MAX`); the rest of a longer list is left for
/// the guest's next call, which the short count tells it to make.
const MAX_BUFFERS: usize = 1024;
/// The most bytes one `write` to a pipe or socket takes. A write larger than what the reader
/// takes at a time (Python reads 32 KiB) fills the pipe and then wakes for each page the reader
/// frees; writes of 16 KiB kept 100 MB through a pipe to Python at 0.9x of the page-at-a-time
/// writes' wall time, where unbounded ones took 1.6x.
const PIPE_PIECE: usize = 16 << 10;
/// Size and alignment of a WASI `ciovec`: a 32-bit pointer and a 32-bit length.
const CIOVEC: usize = 8;

/// WASI preview 1's `errno` values returned here.
mod errno {
    pub(super) const ACCES: i32 = 2;
    pub(super) const DQUOT: i32 = 19;
    pub(super) const FBIG: i32 = 22;
    pub(super) const INVAL: i32 = 28;
    pub(super) const IO: i32 = 29;
    pub(super) const NOSPC: i32 = 51;
    pub(super) const PERM: i32 = 63;
}

/// Wraps WASI's `fd_write`, `fd_close` and `fd_renumber` in `linker`, which already holds the
/// WASI functions.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: Mode) -> wasmtime::Result<()> {
    original::shadow(
        linker,
        "fd_write",
        |linker| define!(linker, mode, original::WASI, "fd_write", fd_write, (fd: i32, iovs: i32, count: i32, written: i32)),
    )?;
    original::shadow(
        linker,
        "fd_close",
        |linker| define!(linker, mode, original::WASI, "fd_close", fd_close, (fd: i32)),
    )?;
    original::shadow(
        linker,
        "fd_renumber",
        |linker| define!(linker, mode, original::WASI, "fd_renumber", fd_renumber, (from: i32, to: i32)),
    )
}

async fn fd_close(mut caller: Caller<'_, GuestState>, fd: i32) -> wasmtime::Result<i32> {
    caller.data_mut().direct_stdio.end(fd);
    caller.data_mut().listings.end(fd);
    original::call(&mut caller, "fd_close", &[Val::I32(fd)]).await
}

async fn fd_renumber(mut caller: Caller<'_, GuestState>, from: i32, to: i32) -> wasmtime::Result<i32> {
    let direct = &mut caller.data_mut().direct_stdio;
    direct.end(from);
    direct.end(to);
    let listings = &mut caller.data_mut().listings;
    listings.end(from);
    listings.end(to);
    original::call(&mut caller, "fd_renumber", &[Val::I32(from), Val::I32(to)]).await
}

async fn fd_write(
    mut caller: Caller<'_, GuestState>,
    fd: i32,
    iovs: i32,
    count: i32,
    written: i32,
) -> wasmtime::Result<i32> {
    let direct = match caller.data().direct_stdio.stream(fd) {
        Stream::Wasi => false,
        // A deadline or cancel interrupts a direct write with a signal to the guest's thread,
        // which an asynchronous run does not keep (it may move between threads).
        Stream::Host => {
            !caller.data().stop.is_set() || (caller.data().mode == Mode::Sync && crate::sys::interrupt::install())
        }
        Stream::Discard => true,
    };
    if direct && let Some(result) = write_direct(&mut caller, fd, iovs, count, written) {
        return result;
    }
    original::call(&mut caller, "fd_write", &[fd, iovs, count, written].map(Val::I32)).await
}

/// Writes the buffers to `fd` (1 or 2), or drops them for a discarded stream, and stores the
/// count at `written`; `None` when the
/// guest's arguments are out of bounds or misaligned, for WASI's own to report.
fn write_direct(
    caller: &mut Caller<'_, GuestState>,
    fd: i32,
    iovs: i32,
    count: i32,
    written: i32,
) -> Option<wasmtime::Result<i32>> {
    let memory = match caller.data().memory {
        Some(memory) => memory,
        None => caller.get_export("memory")?.into_memory()?,
    };
    let stop = caller.data().stop.clone();
    let data = memory.data(&*caller);
    let (iovs, written) = (iovs.cast_unsigned() as usize, written.cast_unsigned() as usize);
    let count = (count.cast_unsigned() as usize).min(MAX_BUFFERS);
    if iovs % CIOVEC != 0 || written % 4 != 0 || written.checked_add(4)? > data.len() {
        return None;
    }
    let list = data.get(iovs..iovs.checked_add(count * CIOVEC)?)?;
    let mut buffers = Vec::with_capacity(count);
    for ciovec in list.chunks_exact(CIOVEC) {
        let at = u32::from_le_bytes(ciovec[..4].try_into().ok()?) as usize;
        let len = u32::from_le_bytes(ciovec[4..].try_into().ok()?) as usize;
        let bytes = data.get(at..at.checked_add(len)?)?;
        if !bytes.is_empty() {
            buffers.push(IoSlice::new(bytes));
        }
    }
    let total: usize = buffers.iter().map(|b| b.len()).sum();
    let result = match caller.data().direct_stdio.stream(fd) {
        Stream::Discard => Ok(()),
        _ => {
            let at = usize::from(fd == 2);
            let known = caller.data().direct_stdio.pieces[at];
            let (result, piece) = match fd {
                1 => {
                    let mut stdout = std::io::stdout().lock();
                    // Bytes wrt itself printed go first, as they would through WASI's own.
                    let _ = stdout.flush();
                    let piece = known.unwrap_or_else(|| piece_for(&stdout));
                    (write_all(&stdout, &mut buffers, piece, &stop), piece)
                }
                _ => {
                    let stderr = std::io::stderr().lock();
                    let piece = known.unwrap_or_else(|| piece_for(&stderr));
                    (write_all(&stderr, &mut buffers, piece, &stop), piece)
                }
            };
            caller.data_mut().direct_stdio.pieces[at] = Some(piece);
            result
        }
    };
    let errno = match result {
        Ok(()) => 0,
        Err(Failure::Deadline) => return Some(Err(DeadlineExceeded.into())),
        Err(Failure::Errno(errno)) => errno,
    };
    if errno == 0 {
        let total = u32::try_from(total).expect("within 32-bit linear memory");
        memory.data_mut(&mut *caller)[written..written + 4].copy_from_slice(&total.to_le_bytes());
    }
    Some(Ok(errno))
}

enum Failure {
    Deadline,
    /// A WASI `errno`.
    Errno(i32),
}

/// Writes every byte of `buffers` to `out`, at most `piece` bytes a call, blocking as long as it
/// takes or until the call must `stop` (its deadline, or a cancel).
fn write_all(out: &impl AsFd, mut buffers: &mut [IoSlice<'_>], piece: usize, stop: &Stop) -> Result<(), Failure> {
    let past_deadline = || stop.passed();
    while !buffers.is_empty() {
        let whole = buffers.iter().scan(0, |sum, b| {
            *sum += b.len();
            Some(*sum)
        });
        let result = match whole.take_while(|&sum| sum <= piece).count() {
            0 => nix::unistd::write(out, &buffers[0][..piece]),
            fit => nix::sys::uio::writev(out, &buffers[..fit]),
        };
        match result {
            Ok(n) => IoSlice::advance_slices(&mut buffers, n),
            Err(Errno::EINTR) if past_deadline() => return Err(Failure::Deadline),
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                // wrt's stream is non-blocking (its file description is shared with whoever set
                // that): wait for room.
                let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLOUT)];
                match poll(&mut fds, PollTimeout::NONE) {
                    Err(Errno::EINTR) if past_deadline() => return Err(Failure::Deadline),
                    _ => {}
                }
            }
            // As Rust's standard streams: a closed descriptor takes everything.
            Err(Errno::EBADF) => return Ok(()),
            Err(errno) => return Err(Failure::Errno(wasi_errno(errno))),
        }
        if !buffers.is_empty() && past_deadline() {
            return Err(Failure::Deadline);
        }
    }
    Ok(())
}

/// The most bytes one write call takes on `out`: [`PIPE_PIECE`] for a pipe or socket, no limit
/// for anything else.
fn piece_for(out: &impl AsFd) -> usize {
    use nix::sys::stat::{SFlag, fstat};
    match fstat(out.as_fd()) {
        Ok(stat) => {
            let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
            if kind == SFlag::S_IFIFO || kind == SFlag::S_IFSOCK { PIPE_PIECE } else { usize::MAX }
        }
        Err(_) => usize::MAX,
    }
}

/// The WASI `errno` WASI's own `fd_write` reports for a failed write to a stream.
fn wasi_errno(errno: Errno) -> i32 {
    match errno {
        Errno::EACCES => errno::ACCES,
        Errno::EDQUOT => errno::DQUOT,
        Errno::EFBIG => errno::FBIG,
        Errno::EINVAL => errno::INVAL,
        Errno::ENOSPC => errno::NOSPC,
        Errno::EPERM => errno::PERM,
        // A closed pipe (`EPIPE`) and the rest.
        _ => errno::IO,
    }
}

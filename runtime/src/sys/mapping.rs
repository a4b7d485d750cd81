//! An anonymous virtual-memory reservation that can be excluded from `fork()`.

use std::num::NonZeroUsize;
use std::ptr::NonNull;

use nix::errno::Errno;
use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, mprotect, munmap};

/// A private anonymous mapping reserved `PROT_NONE` and made readable and writable from its
/// start as it grows. It never moves and is unmapped on drop.
///
/// With `dontfork`, the whole range is marked `MADV_DONTFORK` right after it is mapped, so a
/// `fork()` of the host copies none of its page tables. Nothing ever remaps inside the range
/// (`MAP_FIXED` would drop the flag); growth only changes protection.
#[derive(Debug)]
pub(crate) struct Reservation {
    base: NonNull<u8>,
    len: usize,
    accessible: usize,
}

// SAFETY: `Reservation` owns its mapping exclusively; the raw pointer is an address, not a
// shared borrow, and every mutation goes through `&mut self`.
unsafe impl Send for Reservation {}
// SAFETY: `&Reservation` only exposes the base address and sizes, which are plain values.
unsafe impl Sync for Reservation {}

/// The host page size.
pub(crate) fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|size| usize::try_from(size).ok())
        .unwrap_or(4096)
}

/// Rounds `len` up to a multiple of the host page size, or `None` on overflow.
pub(crate) fn round_to_pages(len: usize) -> Option<usize> {
    let page = page_size();
    len.checked_add(page - 1).map(|n| n / page * page)
}

impl Reservation {
    /// Reserves `len` bytes (rounded up to whole pages, at least one page) of inaccessible
    /// address space.
    pub(crate) fn new(len: usize, dontfork: bool) -> Result<Self, Errno> {
        let len = round_to_pages(len.max(1)).ok_or(Errno::ENOMEM)?;
        let length = NonZeroUsize::new(len).ok_or(Errno::EINVAL)?;
        // SAFETY: no address hint and no `MAP_FIXED`, so the kernel picks a fresh range and no
        // existing mapping is replaced.
        let base = unsafe {
            mmap_anonymous(None, length, ProtFlags::PROT_NONE, MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE)
        }?;
        let reservation = Self { base: base.cast(), len, accessible: 0 };
        if dontfork {
            // SAFETY: `base..base+len` is the mapping made just above and owned by `reservation`.
            unsafe { madvise(base, len, MmapAdvise::MADV_DONTFORK) }?;
        }
        Ok(reservation)
    }

    /// Makes the first `len` bytes (rounded up to pages) readable and writable. Shrinking is not
    /// supported: a smaller `len` than what is already accessible changes nothing.
    pub(crate) fn make_accessible(&mut self, len: usize) -> Result<(), Errno> {
        let len = round_to_pages(len).ok_or(Errno::ENOMEM)?;
        if len > self.len {
            return Err(Errno::ENOMEM);
        }
        if len <= self.accessible {
            return Ok(());
        }
        // `accessible` is page-aligned and below `len`, so the start stays inside the mapping.
        let start = self.base.as_ptr().wrapping_add(self.accessible);
        let start = NonNull::new(start.cast()).ok_or(Errno::EINVAL)?;
        // SAFETY: `start..start+(len-accessible)` lies inside this reservation (checked above);
        // raising protection does not invalidate any reference, as none point past `accessible`.
        unsafe { mprotect(start, len - self.accessible, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE) }?;
        self.accessible = len;
        Ok(())
    }

    /// Discards every byte made accessible: the next read of any of them sees a fresh zero
    /// page. Protection stays as it is (the next user sets it with
    /// [`Reservation::set_accessible`]), and nothing is remapped, so `MADV_DONTFORK` stays. The
    /// caller must hold no reference into the range: the guest memory that used it is gone.
    pub(crate) fn discard(&mut self) -> Result<(), Errno> {
        if self.accessible == 0 {
            return Ok(());
        }
        // SAFETY: `base..base+accessible` lies inside this mapping; `&mut self` and the caller's
        // promise mean nothing references those bytes, so dropping their contents is sound.
        unsafe { madvise(self.base.cast(), self.accessible, MmapAdvise::MADV_DONTNEED) }
    }

    /// Makes exactly the first `len` bytes (rounded up to pages) readable and writable, and
    /// everything after them inaccessible: for a reservation handed to a new memory, whose
    /// previous user may have left more, or less, accessible.
    pub(crate) fn set_accessible(&mut self, len: usize) -> Result<(), Errno> {
        let len = round_to_pages(len).ok_or(Errno::ENOMEM)?;
        if len > self.len {
            return Err(Errno::ENOMEM);
        }
        if len < self.accessible {
            let start = NonNull::new(self.base.as_ptr().wrapping_add(len).cast()).ok_or(Errno::EINVAL)?;
            // SAFETY: `start..start+(accessible-len)` lies inside this mapping (`len` is below
            // `accessible`, which is at most `self.len`); lowering protection invalidates no
            // reference, as `&mut self` and the caller hold none past `len`.
            unsafe { mprotect(start, self.accessible - len, ProtFlags::PROT_NONE) }?;
            self.accessible = len;
        }
        self.make_accessible(len)
    }

    /// The first byte of the reservation.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// The reservation's size in bytes (whole pages).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes that are readable and writable from the start.
    #[cfg(test)]
    pub(crate) fn accessible(&self) -> usize {
        self.accessible
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with this base and length, and nothing borrows
        // it past the lifetime of `self`.
        let result = unsafe { munmap(self.base.cast(), self.len) };
        debug_assert!(result.is_ok(), "munmap of a reservation failed: {result:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::vm_flags_of;

    #[test]
    fn dontfork_flag_is_set_only_when_asked() {
        let with = Reservation::new(1 << 20, true).unwrap();
        let without = Reservation::new(1 << 20, false).unwrap();
        let flags = vm_flags_of(with.as_ptr() as usize).unwrap();
        assert!(flags.split(' ').any(|f| f == "dc"), "{flags}");
        let flags = vm_flags_of(without.as_ptr() as usize).unwrap();
        assert!(!flags.split(' ').any(|f| f == "dc"), "{flags}");
    }

    #[test]
    fn growth_keeps_the_base_and_refuses_past_the_end() {
        let mut r = Reservation::new(4 * page_size(), true).unwrap();
        let base = r.as_ptr();
        r.make_accessible(page_size() + 1).unwrap();
        assert_eq!(r.accessible(), 2 * page_size());
        r.make_accessible(4 * page_size()).unwrap();
        assert_eq!(r.as_ptr(), base);
        assert_eq!(r.make_accessible(5 * page_size()), Err(Errno::ENOMEM));
        assert_eq!(r.make_accessible(usize::MAX), Err(Errno::ENOMEM));
    }
}

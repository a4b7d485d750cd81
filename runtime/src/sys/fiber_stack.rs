//! wasmtime's `StackCreator` for the fibers of asynchronous runs: each stack is one mapping,
//! a guard page below it, marked `MADV_DONTFORK` like guest memory (a fork of the host copies
//! no guest's stack), and recycled across runs instead of mapped and unmapped twice per run
//! (instantiation and the call each run on a fiber).
//!
//! A stack comes back reset: every byte a fiber touched is zeroed, so the next run reads zeros,
//! never a previous run's frames. At most [`IDLE_STACKS`] stacks wait for reuse; the rest are
//! unmapped.

use std::num::NonZeroUsize;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use nix::errno::Errno;
use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, mprotect, munmap};
use wasmtime::{StackCreator, StackMemory};

use super::mapping::{page_size, round_to_pages};

/// Stacks kept mapped between runs: as many as runs usually in flight on a small server.
const IDLE_STACKS: usize = 64;

/// The stacks of one runtime's fibers.
#[derive(Debug)]
pub(crate) struct StackPool {
    dontfork: bool,
    idle: Mutex<Vec<Mapping>>,
}

/// One stack's mapping: a guard page at `base`, the stack above it up to `base + len`.
#[derive(Debug)]
struct Mapping {
    base: NonNull<std::ffi::c_void>,
    len: usize,
}

// SAFETY: a `Mapping` owns its range; nothing else refers to it, so it may move between threads.
unsafe impl Send for Mapping {}
// SAFETY: a shared `Mapping` only hands out addresses, never access to the bytes.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps a stack of `size` bytes (whole pages) above a guard page.
    fn new(size: usize, dontfork: bool) -> Result<Self, Errno> {
        let guard = page_size();
        let len = size.checked_add(guard).ok_or(Errno::ENOMEM)?;
        let length = NonZeroUsize::new(len).ok_or(Errno::EINVAL)?;
        // SAFETY: no address hint and no `MAP_FIXED`, so the kernel picks a fresh range and no
        // existing mapping is replaced.
        let base = unsafe {
            mmap_anonymous(
                None,
                length,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE,
            )
        }?;
        let mapping = Self { base, len };
        // SAFETY: the first page of the mapping made above, which nothing references yet.
        unsafe { mprotect(base, guard, ProtFlags::PROT_NONE) }?;
        if dontfork {
            // SAFETY: `base..base+len` is the mapping made above, owned by `mapping`.
            unsafe { madvise(base, len, MmapAdvise::MADV_DONTFORK) }?;
        }
        Ok(mapping)
    }

    fn size(&self) -> usize {
        self.len - page_size()
    }

    /// Zeroes every byte of the stack a fiber touched, keeping the pages: the next run reads
    /// zeros without faulting fresh pages in (discarding them with `MADV_DONTNEED` made every
    /// run fault its stack in again, which cost more than the rest of a small run). The pages
    /// touched are those resident (`mincore`), from the lowest one up to the top, since a stack
    /// grows down. The caller holds no reference into the stack (the fiber that ran on it is
    /// gone).
    fn discard(&mut self) -> Result<(), Errno> {
        let page = page_size();
        let pages = self.size() / page;
        let stack = self.base.as_ptr().cast::<u8>().wrapping_add(page);
        let mut resident = vec![0u8; pages];
        // SAFETY: `stack..stack+size` is the page-aligned stack part of this mapping, and
        // `resident` has one byte for each of its pages.
        if unsafe { nix::libc::mincore(stack.cast(), self.size(), resident.as_mut_ptr()) } != 0 {
            return Err(Errno::last());
        }
        if let Some(lowest) = resident.iter().position(|r| r & 1 != 0) {
            // SAFETY: pages `lowest..pages` of the stack are readable and writable, and
            // `&mut self` with the caller's promise means nothing refers to them.
            unsafe { std::ptr::write_bytes(stack.wrapping_add(lowest * page), 0, (pages - lowest) * page) };
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with this base and length, and nothing borrows
        // it past the lifetime of `self`.
        let result = unsafe { munmap(self.base, self.len) };
        debug_assert!(result.is_ok(), "munmap of a fiber stack failed: {result:?}");
    }
}

impl StackPool {
    pub(crate) fn new(dontfork: bool) -> Arc<Self> {
        Arc::new(Self { dontfork, idle: Mutex::default() })
    }

    fn take(&self, size: usize) -> Result<Mapping, Errno> {
        let size = round_to_pages(size.max(1)).ok_or(Errno::ENOMEM)?;
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = idle.iter().rposition(|m| m.size() == size) {
            return Ok(idle.swap_remove(at));
        }
        drop(idle);
        Mapping::new(size, self.dontfork)
    }

    fn give(&self, mut mapping: Mapping) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_STACKS && mapping.discard().is_ok() {
            idle.push(mapping);
        }
    }

    /// Stacks waiting for reuse.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// A stack handed to wasmtime: given back to its pool when wasmtime drops it.
struct PooledStack {
    mapping: Option<Mapping>,
    pool: Arc<StackPool>,
}

impl PooledStack {
    fn mapping(&self) -> &Mapping {
        self.mapping.as_ref().expect("a stack holds its mapping until dropped")
    }
}

impl Drop for PooledStack {
    fn drop(&mut self) {
        if let Some(mapping) = self.mapping.take() {
            self.pool.give(mapping);
        }
    }
}

/// A creator of pooled stacks, for `Config::with_host_stack`.
#[derive(Debug, Clone)]
pub(crate) struct PooledStacks(pub(crate) Arc<StackPool>);

// SAFETY: every stack is page aligned, zero filled (fresh, or discarded when it came back),
// has a guard page below it, and stays mapped until wasmtime drops it.
unsafe impl StackCreator for PooledStacks {
    fn new_stack(&self, size: usize, _zeroed: bool) -> wasmtime::Result<Box<dyn StackMemory>> {
        let mapping = self
            .0
            .take(size)
            .map_err(|errno| wasmtime::Error::msg(format!("failed to map a fiber stack of {size} bytes: {errno}")))?;
        Ok(Box::new(PooledStack { mapping: Some(mapping), pool: Arc::clone(&self.0) }))
    }
}

// SAFETY: `top` is the page-aligned end of the mapping, `range` the stack's bytes and
// `guard_range` the `PROT_NONE` page below them, all valid until the stack is dropped.
unsafe impl StackMemory for PooledStack {
    fn top(&self) -> *mut u8 {
        let mapping = self.mapping();
        mapping.base.as_ptr().cast::<u8>().wrapping_add(mapping.len)
    }

    fn range(&self) -> Range<usize> {
        let mapping = self.mapping();
        let base = mapping.base.as_ptr() as usize;
        base + page_size()..base + mapping.len
    }

    fn guard_range(&self) -> Range<*mut u8> {
        let base = self.mapping().base.as_ptr().cast::<u8>();
        base..base.wrapping_add(page_size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::vm_flags_of;

    #[test]
    fn a_reused_stack_is_zero_guarded_and_dontfork() {
        let creator = PooledStacks(StackPool::new(true));
        let size = 16 * page_size();
        let stack = creator.new_stack(size, false).unwrap();
        let range = stack.range();
        assert_eq!(range.len(), size);
        assert_eq!(stack.top() as usize, range.end);
        assert_eq!(stack.guard_range().end as usize, range.start);
        // SAFETY: `range` is the stack's own readable and writable memory, unused by any fiber.
        unsafe { std::ptr::write_bytes(range.start as *mut u8, 0x5a, size) };
        drop(stack);
        assert_eq!(creator.0.idle(), 1);
        let again = creator.new_stack(size, false).unwrap();
        assert_eq!(again.range(), range, "the stack was reused");
        // SAFETY: as above.
        let bytes = unsafe { std::slice::from_raw_parts(range.start as *const u8, size) };
        assert!(bytes.iter().all(|&b| b == 0), "the previous run's frames are gone");
        for addr in [range.start - 1, range.start, range.end - 1] {
            let flags = vm_flags_of(addr).unwrap();
            assert!(flags.split(' ').any(|f| f == "dc"), "{addr:#x}: {flags}");
        }
        let guard = vm_flags_of(range.start - 1).unwrap();
        assert!(!guard.split(' ').any(|f| f == "rd" || f == "wr"), "the guard page is accessible: {guard}");
    }
}

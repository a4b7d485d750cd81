//! wasmtime's `StackCreator` for the fibers of asynchronous runs: each stack is one mapping,
//! a guard page below it, marked `MADV_DONTFORK` like guest memory (a fork of the host copies
//! no guest's stack), and recycled across runs instead of mapped and unmapped twice per run
//! (instantiation and the call each run on a fiber).
//!
//! A recycled stack is not cleared, as the thread's own stack is not between synchronous runs:
//! what a previous run's frames left there is out of every guest's reach (wasm reads only its
//! own memories, tables and globals, and frames read only what they wrote), and clearing it
//! cost a system call per run (finding the pages touched, or discarding them), about a
//! fifth of a small asynchronous run. When wasmtime asks for a zeroed stack, it gets a fresh
//! mapping. At most [`IDLE_STACKS`] stacks wait for reuse; the rest are unmapped.
//!
//! Every fiber of a run counts against the run's [`FiberCount`], at most [`MAX_RUN_FIBERS`] at
//! once. A host function that calls back into its guest asynchronously (`call_async`) starts a
//! fiber of its own, with a fresh stack and a fresh wasm stack limit, so a guest that
//! re-enters it without end would otherwise take a stack per level until the process runs out
//! of mappings: every other run's next fiber, memory or child would fail too.

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use nix::errno::Errno;
use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, mprotect, munmap};
use wasmtime::{StackCreator, StackMemory};

use super::mapping::{page_size, round_to_pages};

/// Stacks kept mapped between runs: as many as runs usually in flight on a small server.
const IDLE_STACKS: usize = 64;

/// The most fibers (so stacks) one run holds at once: its call, and calls back into the guest
/// from host functions (the guest's collector, the embedder's functions) nested in it, and the
/// one stack wasmtime keeps for the next call.
pub(crate) const MAX_RUN_FIBERS: usize = 32;

/// The fibers one run holds: counted while the run's calls are polled ([`FiberCount::polling`]),
/// and refused past [`MAX_RUN_FIBERS`].
#[derive(Debug, Default)]
pub(crate) struct FiberCount(Arc<AtomicUsize>);

thread_local! {
    /// The count of the run whose call this thread is polling, borrowed for the poll (null
    /// outside every poll): set and restored by [`FiberCount::polling`] only.
    static POLLING: Cell<*const Arc<AtomicUsize>> = const { Cell::new(std::ptr::null()) };
}

/// Puts back the count an outer poll on this thread had set, when a poll ends or unwinds.
struct RestorePolling(*const Arc<AtomicUsize>);

impl Drop for RestorePolling {
    fn drop(&mut self) {
        POLLING.set(self.0);
    }
}

impl FiberCount {
    /// Runs `poll` (a poll of one of the run's calls) with the stacks it takes counted here.
    /// A poll costs two thread-local writes, no reference count.
    pub(crate) fn polling<R>(&self, poll: impl FnOnce() -> R) -> R {
        let _restore = RestorePolling(POLLING.replace(&raw const self.0));
        poll()
    }

    /// The fibers the run holds now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// One fiber counted against its run, until dropped.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One more fiber for the run being polled on this thread, if any: `Err` past
/// [`MAX_RUN_FIBERS`].
fn count_fiber() -> Result<Option<Counted>, String> {
    let current = POLLING.get();
    if current.is_null() {
        return Ok(None);
    }
    // SAFETY: a non-null `POLLING` was set by `FiberCount::polling` from a borrow of its count
    // that lasts until the guard puts the previous value back, on return or unwind; this runs
    // inside that poll, on its thread, so the count is alive.
    let counted = Counted(Arc::clone(unsafe { &*current }));
    if counted.0.fetch_add(1, Ordering::Relaxed) >= MAX_RUN_FIBERS {
        return Err(format!("the guest nested more than {MAX_RUN_FIBERS} calls into itself through host functions"));
    }
    Ok(Some(counted))
}

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

    /// A stack of `size` bytes: an idle one of that size, unless `zeroed` asks for a fresh one.
    fn take(&self, size: usize, zeroed: bool) -> Result<Mapping, Errno> {
        let size = round_to_pages(size.max(1)).ok_or(Errno::ENOMEM)?;
        if !zeroed {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = idle.iter().rposition(|m| m.size() == size) {
                return Ok(idle.swap_remove(at));
            }
        }
        Mapping::new(size, self.dontfork)
    }

    fn give(&self, mapping: Mapping) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_STACKS {
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
    /// Counted against the run that took it, if any.
    _run: Option<Counted>,
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

// SAFETY: every stack is page aligned, zero filled when `zeroed` asks for it (a fresh mapping),
// has a guard page below it, and stays mapped until wasmtime drops it.
unsafe impl StackCreator for PooledStacks {
    fn new_stack(&self, size: usize, zeroed: bool) -> wasmtime::Result<Box<dyn StackMemory>> {
        let run = count_fiber().map_err(wasmtime::Error::msg)?;
        let mapping = self
            .0
            .take(size, zeroed)
            .map_err(|errno| wasmtime::Error::msg(format!("failed to map a fiber stack of {size} bytes: {errno}")))?;
        Ok(Box::new(PooledStack { mapping: Some(mapping), pool: Arc::clone(&self.0), _run: run }))
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
    fn stacks_are_reused_guarded_and_dontfork_and_fresh_when_asked_zeroed() {
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

        let zeroed = creator.new_stack(size, true).unwrap();
        assert_ne!(zeroed.range(), range, "a stack asked zeroed is never a used one");
        assert_eq!(creator.0.idle(), 1);
        // SAFETY: the fresh stack's own memory, unused by any fiber.
        let bytes = unsafe { std::slice::from_raw_parts(zeroed.range().start as *const u8, size) };
        assert!(bytes.iter().all(|&b| b == 0), "a fresh stack reads zeros");

        let again = creator.new_stack(size, false).unwrap();
        assert_eq!(again.range(), range, "the stack was reused");
        assert_eq!(creator.0.idle(), 0);
        for addr in [range.start - 1, range.start, range.end - 1] {
            let flags = vm_flags_of(addr).unwrap();
            assert!(flags.split(' ').any(|f| f == "dc"), "{addr:#x}: {flags}");
        }
        let guard = vm_flags_of(range.start - 1).unwrap();
        assert!(!guard.split(' ').any(|f| f == "rd" || f == "wr"), "the guard page is accessible: {guard}");
    }

    #[test]
    fn a_run_holds_at_most_its_share_of_fibers() {
        let creator = PooledStacks(StackPool::new(false));
        let size = 4 * page_size();
        let outside = creator.new_stack(size, false).unwrap();
        let run = FiberCount::default();
        let stacks =
            run.polling(|| (0..MAX_RUN_FIBERS).map(|_| creator.new_stack(size, false).unwrap()).collect::<Vec<_>>());
        assert_eq!(run.held(), MAX_RUN_FIBERS, "a stack taken outside any run counts for none");
        let refused = run.polling(|| creator.new_stack(size, false)).map(|_| ()).unwrap_err();
        assert!(refused.to_string().contains("nested more than"), "{refused}");
        assert_eq!(run.held(), MAX_RUN_FIBERS, "a refused stack is not counted");
        assert!(creator.new_stack(size, false).is_ok(), "other runs, and none, are not limited");
        drop(stacks);
        assert_eq!(run.held(), 0);
        assert!(run.polling(|| creator.new_stack(size, false)).is_ok());
        drop(outside);
    }

    #[test]
    fn nested_and_unwound_polls_count_against_the_right_run() {
        let creator = PooledStacks(StackPool::new(false));
        let size = 4 * page_size();
        let (outer, inner) = (FiberCount::default(), FiberCount::default());
        let stacks = outer.polling(|| {
            let first = creator.new_stack(size, false).unwrap();
            let nested = inner.polling(|| creator.new_stack(size, false).unwrap());
            let after = creator.new_stack(size, false).unwrap();
            [first, nested, after]
        });
        assert_eq!((outer.held(), inner.held()), (2, 1), "the outer run's count is back after the inner poll");

        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.polling(|| -> () { panic!("a poll that panics") })
        }));
        assert!(unwound.is_err());
        let outside = creator.new_stack(size, false).unwrap();
        assert_eq!(inner.held(), 1, "after a poll unwound, a stack taken outside every run counts for none");
        drop((stacks, outside));
        assert_eq!((outer.held(), inner.held()), (0, 0));
    }

    #[test]
    fn the_docs_give_the_limit_of_fibers() {
        let said = format!("at most {MAX_RUN_FIBERS} fibers");
        for (doc, text) in [
            ("docs/design.md", include_str!("../../../docs/design.md")),
            ("instance/asynchronous.rs", include_str!("../instance/asynchronous.rs")),
        ] {
            let text: Vec<&str> = text.split_whitespace().filter(|word| *word != "///").collect();
            assert!(text.join(" ").contains(&said), "{doc} does not say {said:?}");
        }
    }
}

//! The memory behind host buffers (external memory): blocks carved from anonymous mappings
//! that, like linear memory, are marked `MADV_DONTFORK`, so a `fork()` of the host never copies
//! their page tables however many buffers the guest holds.
//!
//! Blocks of up to [`MAX_POOLED`] bytes come in power-of-two size classes from 1 MiB slabs and
//! go back to their class's free list when dropped, so a guest that churns through buffers
//! reuses warm pages instead of faulting in fresh ones. Larger blocks get a mapping of their own,
//! unmapped when dropped.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use super::mapping::Reservation;

/// The smallest size class.
const MIN_CLASS_SHIFT: u32 = 6;
/// The largest pooled size class; larger blocks are mapped on their own.
const MAX_CLASS_SHIFT: u32 = 20;
/// The largest pooled block.
pub(crate) const MAX_POOLED: usize = 1 << MAX_CLASS_SHIFT;
const CLASSES: usize = (MAX_CLASS_SHIFT - MIN_CLASS_SHIFT + 1) as usize;
/// The size of a slab carved into blocks of one class.
const SLAB: usize = 1 << 20;

/// The pooled blocks of one sandbox instance.
#[derive(Debug)]
pub(crate) struct BufferPool {
    dontfork: bool,
    inner: Mutex<PoolInner>,
}

#[derive(Debug, Default)]
struct PoolInner {
    /// Free block addresses by class.
    free: [Vec<usize>; CLASSES],
    /// Every slab, kept until the pool is dropped (after its last block).
    slabs: Vec<Reservation>,
}

impl BufferPool {
    pub(crate) fn new(dontfork: bool) -> Arc<Self> {
        Arc::new(Self { dontfork, inner: Mutex::new(PoolInner::default()) })
    }

    /// Bytes of address space mapped for pooled blocks (free or not).
    #[cfg(test)]
    fn mapped(&self) -> usize {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).slabs.len() * SLAB
    }
}

/// A block of at least the requested size, readable and writable, owned by one buffer. Its
/// bytes are not initialised: a fresh block is zero, a reused one holds old bytes.
#[derive(Debug)]
pub(crate) struct Block {
    ptr: NonNull<u8>,
    cap: usize,
    origin: Origin,
}

#[derive(Debug)]
enum Origin {
    Pooled { pool: Arc<BufferPool>, class: usize },
    Own(#[expect(dead_code, reason = "owned only to be unmapped on drop")] Reservation),
}

// SAFETY: a `Block` exclusively owns its bytes (a pool hands each free block to one `Block`).
// The bytes are only read and written through the methods below, which wrt-runtime calls from
// host functions holding the guest's `&mut Store`: one thread at a time, never concurrently.
// Dropping a block on another thread (wasmtime may drop externref data anywhere) only returns
// its address to the pool under the pool's mutex.
unsafe impl Send for Block {}
// SAFETY: see `Send`: the crate never accesses one block's bytes from two threads at once.
unsafe impl Sync for Block {}

impl Block {
    /// A block of at least `len` bytes (at least one), or `None` when the host cannot map one.
    pub(crate) fn new(pool: &Arc<BufferPool>, len: usize) -> Option<Self> {
        let len = len.max(1);
        if len > MAX_POOLED {
            let mut reservation = Reservation::new(len, pool.dontfork).ok()?;
            reservation.make_accessible(len).ok()?;
            let ptr = NonNull::new(reservation.as_ptr())?;
            return Some(Self { ptr, cap: len, origin: Origin::Own(reservation) });
        }
        let shift = len.next_power_of_two().trailing_zeros().max(MIN_CLASS_SHIFT);
        let class = (shift - MIN_CLASS_SHIFT) as usize;
        let cap = 1usize << shift;
        let mut inner = pool.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.free[class].is_empty() {
            let mut slab = Reservation::new(SLAB, pool.dontfork).ok()?;
            slab.make_accessible(SLAB).ok()?;
            let base = slab.as_ptr() as usize;
            // Pop from the end: hand out the slab's first block first.
            inner.free[class].extend((0..SLAB / cap).rev().map(|i| base + i * cap));
            inner.slabs.push(slab);
        }
        let addr = inner.free[class].pop()?;
        drop(inner);
        let ptr = NonNull::new(addr as *mut u8)?;
        Some(Self { ptr, cap, origin: Origin::Pooled { pool: Arc::clone(pool), class } })
    }

    /// The usable size of the block.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.cap
    }

    /// The address of the first byte (for locating the mapping, for example in smaps).
    #[cfg(test)]
    fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Whether `offset..offset+len` lies inside the block.
    fn contains(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.cap)
    }

    /// Copies `self[offset..offset+dst.len()]` into `dst`.
    ///
    /// # Panics
    ///
    /// When the range leaves the block: callers check ranges against the buffer first.
    pub(crate) fn copy_out(&self, offset: usize, dst: &mut [u8]) {
        assert!(self.contains(offset, dst.len()), "block range checked by the caller");
        // SAFETY: the source range lies inside this block's readable mapping (asserted above);
        // `dst` is a distinct Rust slice (linear memory or host memory, never a block's bytes,
        // which are only reachable through raw pointers), so the ranges do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) };
    }

    /// Copies `src` into `self[offset..offset+src.len()]`.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn copy_in(&self, offset: usize, src: &[u8]) {
        assert!(self.contains(offset, src.len()), "block range checked by the caller");
        // SAFETY: the destination lies inside this block's writable mapping (asserted above), no
        // Rust reference to the block's bytes exists (they are only reached through raw
        // pointers, one call at a time), and `src` is not a block's bytes, so no overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(offset), src.len()) };
    }

    /// Sets `self[offset..offset+len]` to zero.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn zero(&self, offset: usize, len: usize) {
        assert!(self.contains(offset, len), "block range checked by the caller");
        // SAFETY: the range lies inside this block's writable mapping (asserted above) and no
        // Rust reference to the block's bytes exists.
        unsafe { std::ptr::write_bytes(self.ptr.as_ptr().add(offset), 0, len) };
    }

    /// Copies `src[src_offset..+len]` to `dst[dst_offset..+len]`; the two may be the same block
    /// and the ranges may overlap.
    ///
    /// # Panics
    ///
    /// When a range leaves its block.
    pub(crate) fn copy_between(dst: &Block, dst_offset: usize, src: &Block, src_offset: usize, len: usize) {
        assert!(dst.contains(dst_offset, len) && src.contains(src_offset, len), "block ranges checked by the caller");
        // SAFETY: both ranges lie inside their blocks' mappings (asserted above); `ptr::copy`
        // allows overlap, and no Rust reference to either block's bytes exists.
        unsafe { std::ptr::copy(src.ptr.as_ptr().add(src_offset), dst.ptr.as_ptr().add(dst_offset), len) };
    }

    /// Calls `f` with `self[offset..offset+len]` as a slice.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn with_bytes<R>(&self, offset: usize, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(self.contains(offset, len), "block range checked by the caller");
        // SAFETY: the range lies inside this block's readable mapping (asserted above). The
        // slice lives only during `f`, which receives no access to any buffer (it cannot reach
        // the store), so nothing writes to these bytes while the slice exists.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(offset), len) };
        f(bytes)
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Origin::Pooled { pool, class } = &self.origin {
            let mut inner = pool.inner.lock().unwrap_or_else(PoisonError::into_inner);
            inner.free[*class].push(self.ptr.as_ptr() as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::vm_flags_of;

    #[test]
    fn classes_round_up_and_blocks_are_reused() {
        let pool = BufferPool::new(true);
        let a = Block::new(&pool, 100).unwrap();
        assert_eq!(a.capacity(), 128);
        assert_eq!(Block::new(&pool, 0).unwrap().capacity(), 64);
        let addr = a.addr();
        drop(a);
        let b = Block::new(&pool, 120).unwrap();
        assert_eq!(b.addr(), addr, "a freed block is handed out again");
        assert_eq!(pool.mapped(), 2 * SLAB, "one slab per class used");
    }

    #[test]
    fn large_blocks_have_their_own_mapping() {
        let pool = BufferPool::new(true);
        let big = Block::new(&pool, MAX_POOLED + 1).unwrap();
        assert_eq!(big.capacity(), MAX_POOLED + 1);
        big.copy_in(MAX_POOLED, &[7]);
        let mut out = [0];
        big.copy_out(MAX_POOLED, &mut out);
        assert_eq!(out, [7]);
        assert_eq!(pool.mapped(), 0);
    }

    #[test]
    fn memory_is_dontfork_only_when_asked() {
        for dontfork in [true, false] {
            let pool = BufferPool::new(dontfork);
            for len in [4096, 4 << 20] {
                let block = Block::new(&pool, len).unwrap();
                block.zero(0, len);
                let flags = vm_flags_of(block.addr()).unwrap();
                assert_eq!(flags.split(' ').any(|f| f == "dc"), dontfork, "{len}: {flags}");
            }
        }
    }

    #[test]
    fn copies_within_and_between_blocks() {
        let pool = BufferPool::new(true);
        let a = Block::new(&pool, 16).unwrap();
        a.copy_in(0, b"0123456789");
        Block::copy_between(&a, 2, &a, 0, 8);
        a.with_bytes(0, 10, |bytes| assert_eq!(bytes, b"0101234567"));
        let b = Block::new(&pool, 16).unwrap();
        Block::copy_between(&b, 0, &a, 5, 5);
        let mut out = [0; 5];
        b.copy_out(0, &mut out);
        assert_eq!(&out, b"34567");
    }

    #[test]
    #[should_panic(expected = "checked by the caller")]
    fn out_of_range_is_a_bug_not_ub() {
        let pool = BufferPool::new(true);
        let a = Block::new(&pool, 64).unwrap();
        a.copy_in(60, b"12345");
    }
}

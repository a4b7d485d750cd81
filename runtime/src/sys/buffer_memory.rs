//! The memory behind host buffers (external memory): blocks carved from anonymous mappings
//! that, like linear memory, are marked `MADV_DONTFORK`, so a `fork()` of the host never copies
//! their page tables however many buffers the guest holds.
//!
//! Blocks of up to [`MAX_POOLED`] bytes come in power-of-two size classes from 1 MiB slabs of
//! one class each; a freed block goes back to its slab, so a guest that churns through buffers
//! reuses warm pages instead of faulting in fresh ones. Slabs whose blocks are all free stay
//! mapped and warm up to a budget (at least [`MIN_RETAIN_EMPTY`]; the sandbox sizes it to its
//! young generation) and count in the footprint; past the budget, and whenever
//! [`BufferPool::trim`] is called (at the memory limit), they are unmapped.
//! Larger blocks get a mapping of their own, unmapped when dropped.
//!
//! The pool's **footprint** (bytes of every slab and own mapping, plus a fixed overhead per
//! block for the host's bookkeeping) is what buffers really cost the host, fragmentation
//! included; the sandbox's memory limit applies to it.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::mapping::Reservation;
use super::memory_pool::{MemoryPool, Slot};

/// The smallest size class.
const MIN_CLASS_SHIFT: u32 = 6;
/// The largest pooled size class; larger blocks are mapped on their own.
const MAX_CLASS_SHIFT: u32 = 20;
/// The largest pooled block.
pub(crate) const MAX_POOLED: usize = 1 << MAX_CLASS_SHIFT;
const CLASSES: usize = (MAX_CLASS_SHIFT - MIN_CLASS_SHIFT + 1) as usize;
/// The size of a slab carved into blocks of one class.
const SLAB: usize = 1 << 20;
/// The least bytes of empty slabs kept mapped for reuse.
pub(crate) const MIN_RETAIN_EMPTY: u64 = 32 << 20;
/// What the host's bookkeeping of one block (and the buffer around it) costs, counted in the
/// footprint so that many tiny buffers cannot hide their cost.
pub(crate) const BLOCK_OVERHEAD: usize = 128;

/// The blocks of one sandbox instance.
#[derive(Debug)]
pub(crate) struct BufferPool {
    /// The runtime's pool of slabs, shared by every guest: slabs come from it and go back to
    /// it, reset (`MADV_DONTNEED`), when unmapped here.
    slabs: Arc<MemoryPool>,
    /// Bytes of empty slabs kept mapped for reuse.
    retain_empty: u64,
    /// Bytes mapped for blocks, plus [`BLOCK_OVERHEAD`] per live block.
    ///
    /// This and the three counters below change only under `inner`'s lock (through the methods
    /// that say so), so a change is a plain load and store rather than a locked
    /// read-modify-write: one less bus lock for each, on every buffer made or freed. They are
    /// atomics so that the sandbox can read them without the lock.
    footprint: AtomicU64,
    /// The most `footprint` has been.
    peak: AtomicU64,
    /// Bytes of mapped slabs whose blocks are all free.
    empty: AtomicU64,
    /// Free blocks in mapped slabs, by class: what [`BufferPool::growth_for`] reads without
    /// taking the lock, kept beside the free lists it counts.
    free_blocks: [AtomicUsize; CLASSES],
    /// The [`CLASSES`] size classes, by class; empty until the first pooled block, so that a
    /// run whose guest takes no buffer builds and drops none of them.
    inner: Mutex<Classes>,
}

/// The size classes, by class.
type Classes = Vec<Class>;

/// The slabs of one size class.
#[derive(Debug, Default)]
struct Class {
    /// Slabs by index; an unmapped slab's slot is reused.
    slabs: Vec<Slab>,
    /// Indices of mapped slabs that may have free blocks (checked when taken).
    partial: Vec<usize>,
}

#[derive(Debug, Default)]
struct Slab {
    /// `None` once given back to the runtime's slab pool.
    mapping: Option<Slot>,
    /// Indices of its free blocks.
    free: Vec<u32>,
    live: u32,
}

impl BufferPool {
    /// A pool keeping up to `retain_empty` bytes (at least [`MIN_RETAIN_EMPTY`]) of empty slabs
    /// warm: enough for the guest's young generation to cycle through warm pages.
    pub(crate) fn new(slabs: Arc<MemoryPool>, retain_empty: u64) -> Arc<Self> {
        Arc::new(Self {
            slabs,
            retain_empty: retain_empty.max(MIN_RETAIN_EMPTY),
            footprint: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            empty: AtomicU64::new(0),
            free_blocks: std::array::from_fn(|_| AtomicUsize::new(0)),
            inner: Mutex::new(Vec::new()),
        })
    }

    /// Bytes the pool's blocks cost the host now.
    pub(crate) fn footprint(&self) -> u64 {
        self.footprint.load(Ordering::Relaxed)
    }

    /// The most bytes the pool's blocks cost the host at once.
    pub(crate) fn peak_footprint(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Adds `bytes` to the footprint. Only under the lock.
    fn grow(&self, bytes: u64) {
        let now = self.footprint.load(Ordering::Relaxed) + bytes;
        self.footprint.store(now, Ordering::Relaxed);
        if now > self.peak.load(Ordering::Relaxed) {
            self.peak.store(now, Ordering::Relaxed);
        }
    }

    /// Takes `bytes` from the footprint. Only under the lock.
    fn shrink(&self, bytes: u64) {
        self.footprint.store(self.footprint.load(Ordering::Relaxed) - bytes, Ordering::Relaxed);
    }

    /// Counts one more empty slab. Only under the lock.
    fn more_empty(&self) {
        self.empty.store(self.empty.load(Ordering::Relaxed) + SLAB as u64, Ordering::Relaxed);
    }

    /// Counts one empty slab fewer. Only under the lock.
    fn fewer_empty(&self) {
        self.empty.store(self.empty.load(Ordering::Relaxed) - SLAB as u64, Ordering::Relaxed);
    }

    /// How much the footprint would grow to hand out a block of `len` bytes.
    pub(crate) fn growth_for(&self, len: usize) -> u64 {
        let overhead = BLOCK_OVERHEAD as u64;
        let Some(class) = class_of(len) else {
            return overhead + round_to_pages(len) as u64;
        };
        let has_free = self.free_blocks[class].load(Ordering::Relaxed) > 0;
        overhead + if has_free { 0 } else { SLAB as u64 }
    }

    /// Counts `blocks` more free blocks of `class` in mapped slabs. Only under the lock.
    fn more_free(&self, class: usize, blocks: usize) {
        let counter = &self.free_blocks[class];
        counter.store(counter.load(Ordering::Relaxed) + blocks, Ordering::Relaxed);
    }

    /// Counts `blocks` fewer free blocks of `class` in mapped slabs. Only under the lock.
    fn fewer_free(&self, class: usize, blocks: usize) {
        let counter = &self.free_blocks[class];
        counter.store(counter.load(Ordering::Relaxed) - blocks, Ordering::Relaxed);
    }

    /// The pool's lock, held.
    fn lock(&self) -> MutexGuard<'_, Classes> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether every class's count of free blocks is that of its mapped slabs' free lists.
    #[cfg(test)]
    fn free_counts_match(&self) -> bool {
        let classes = self.lock();
        classes.iter().enumerate().all(|(class, c)| {
            let listed: usize = c.slabs.iter().filter(|s| s.mapping.is_some()).map(|s| s.free.len()).sum();
            self.free_blocks[class].load(Ordering::Relaxed) == listed
        })
    }

    /// Unmaps every slab whose blocks are all free.
    pub(crate) fn trim(&self) {
        let mut classes = self.lock();
        for (index, class) in classes.iter_mut().enumerate() {
            for slab in &mut class.slabs {
                if slab.live == 0 && slab.mapping.take().is_some() {
                    self.fewer_free(index, slab.free.len());
                    slab.free.clear();
                    self.shrink(SLAB as u64);
                    self.fewer_empty();
                }
            }
        }
    }

    /// Returns block `index` to slab `slab` of `class`, and its overhead to the footprint; a slab
    /// left empty is unmapped when the empty slabs kept already reach the pool's budget.
    fn release(&self, class: usize, slab_index: usize, index: u32) {
        let mut classes = self.lock();
        self.shrink(BLOCK_OVERHEAD as u64);
        let c = &mut classes[class];
        let slab = &mut c.slabs[slab_index];
        slab.live -= 1;
        slab.free.push(index);
        self.more_free(class, 1);
        if slab.live == 0 {
            if self.empty.load(Ordering::Relaxed) + SLAB as u64 > self.retain_empty {
                slab.mapping = None;
                self.fewer_free(class, slab.free.len());
                slab.free.clear();
                self.shrink(SLAB as u64);
                return;
            }
            self.more_empty();
        }
        if slab.free.len() == 1 {
            c.partial.push(slab_index);
        }
    }
}

/// The size class of a pooled block of `len` bytes, or `None` for a block of its own.
fn class_of(len: usize) -> Option<usize> {
    let len = len.max(1);
    (len <= MAX_POOLED)
        .then(|| (len.next_power_of_two().trailing_zeros().max(MIN_CLASS_SHIFT) - MIN_CLASS_SHIFT) as usize)
}

fn round_to_pages(len: usize) -> usize {
    super::mapping::round_to_pages(len).unwrap_or(usize::MAX)
}

/// Copies longer than this go in pieces of this many bytes when the destination lies just past
/// the source ([`copy_bytes`]).
const PIECE: usize = 2048;
/// The period of the addresses whose low bits the slow `memcpy` path compares: 4 KiB.
const ALIAS_PERIOD: usize = 4096;
/// A destination less than this many bytes past its source, modulo [`ALIAS_PERIOD`], takes the
/// slow path ([`copy_bytes`]).
const SLOW_SHIFT: usize = 64;
/// The size of a cache line, which [`Block::start_for`] aligns copies to.
const CACHE_LINE: usize = 64;

/// Copies `len` bytes from `src` to `dst`, which may overlap, as [`std::ptr::copy`] does; but in
/// pieces of [`PIECE`] bytes when the destination lies less than [`SLOW_SHIFT`] bytes past the
/// source modulo 4 KiB. There glibc's copy of large blocks (`rep movsb`) ran about 20× slower on
/// the AMD EPYC machines of the benches (a 120 KiB copy took 45–77 µs, not 2.5–4 µs;
/// docs/benchmarks.md), and pieces this small take its vector loop instead, at full speed. A
/// guest decides where its own bytes lie, so without this a guest's reads and writes of its
/// buffers would be fast or 20× slow by where its allocator put them.
///
/// # Safety
///
/// `src..src+len` must be readable and `dst..dst+len` writable for the duration of the call, and
/// nothing else may access them meanwhile.
unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    let shift = (dst as usize).wrapping_sub(src as usize) % ALIAS_PERIOD;
    if len <= PIECE || shift == 0 || shift >= SLOW_SHIFT {
        // SAFETY: the caller's contract; `ptr::copy` allows overlap.
        unsafe { std::ptr::copy(src, dst, len) };
        return;
    }
    // Front to back when the destination lies below the source, back to front when above: a
    // piece of an overlapping source is then always read before a piece written over it.
    let pieces = len.div_ceil(PIECE);
    let forward = (dst as usize) < (src as usize);
    for i in 0..pieces {
        let at = if forward { i } else { pieces - 1 - i } * PIECE;
        let n = PIECE.min(len - at);
        // SAFETY: `at + n <= len`, so both pieces lie inside the ranges of the caller's contract.
        unsafe { std::ptr::copy(src.add(at), dst.add(at), n) };
    }
}

/// A block of at least the requested size, readable and writable, owned by one buffer. Its
/// bytes are not initialised: a fresh block is zero, a reused one holds old bytes.
#[derive(Debug)]
pub(crate) struct Block {
    ptr: NonNull<u8>,
    cap: usize,
    pool: Arc<BufferPool>,
    origin: Origin,
}

#[derive(Debug)]
enum Origin {
    Pooled { class: usize, slab: usize, index: u32 },
    Own(#[expect(dead_code, reason = "owned only to be unmapped on drop")] Reservation),
}

// SAFETY: a `Block` exclusively owns its bytes (a slab hands each free block to one `Block`).
// Its bytes are only read and written through the methods below, which wrt-runtime calls from
// host functions holding the guest's `&mut Store`: one thread at a time, never concurrently.
// Dropping a block on another thread (wasmtime may drop externref data anywhere) only returns
// it to the pool under the pool's mutex.
unsafe impl Send for Block {}
// SAFETY: see `Send`: the crate never accesses one block's bytes from two threads at once.
unsafe impl Sync for Block {}

impl Block {
    /// A block of at least `len` bytes (at least one), or `None` when the host cannot map one.
    pub(crate) fn new(pool: &Arc<BufferPool>, len: usize) -> Option<Self> {
        let Some(class) = class_of(len) else {
            let len = len.max(1);
            let mut reservation = Reservation::new(len, pool.slabs.dontfork()).ok()?;
            reservation.make_accessible(len).ok()?;
            let ptr = NonNull::new(reservation.as_ptr())?;
            let _locked = pool.lock();
            pool.grow((round_to_pages(len) + BLOCK_OVERHEAD) as u64);
            return Some(Self { ptr, cap: len, pool: Arc::clone(pool), origin: Origin::Own(reservation) });
        };
        let cap = 1usize << (class as u32 + MIN_CLASS_SHIFT);
        let mut classes = pool.lock();
        if classes.is_empty() {
            classes.resize_with(CLASSES, Class::default);
        }
        let c = &mut classes[class];
        // The first slab with a free block; stale entries (unmapped or full) are dropped.
        let mut fresh = false;
        let slab_index = loop {
            match c.partial.last().copied() {
                Some(i) if c.slabs[i].mapping.is_some() && !c.slabs[i].free.is_empty() => break i,
                Some(_) => {
                    c.partial.pop();
                }
                None => {
                    let mut mapping = pool.slabs.take(SLAB).ok()?;
                    mapping.reservation().make_accessible(SLAB).ok()?;
                    pool.grow(SLAB as u64);
                    // Pop from the end: hand out the slab's first block first.
                    let slab = Slab { mapping: Some(mapping), free: (0..(SLAB / cap) as u32).rev().collect(), live: 0 };
                    pool.more_free(class, slab.free.len());
                    let i = match c.slabs.iter().position(|s| s.mapping.is_none()) {
                        Some(vacant) => {
                            c.slabs[vacant] = slab;
                            vacant
                        }
                        None => {
                            c.slabs.push(slab);
                            c.slabs.len() - 1
                        }
                    };
                    c.partial.push(i);
                    fresh = true;
                    break i;
                }
            }
        };
        let slab = &mut c.slabs[slab_index];
        let index = slab.free.pop()?;
        pool.fewer_free(class, 1);
        if slab.live == 0 && !fresh {
            pool.fewer_empty();
        }
        slab.live += 1;
        if slab.free.is_empty() {
            c.partial.pop();
        }
        let base = slab.mapping.as_ref()?.as_ptr();
        // The block lies inside the slab's mapping, so the pointer keeps the mapping's provenance.
        let ptr = NonNull::new(base.wrapping_add(index as usize * cap))?;
        pool.grow(BLOCK_OVERHEAD as u64);
        drop(classes);
        Some(Self { ptr, cap, pool: Arc::clone(pool), origin: Origin::Pooled { class, slab: slab_index, index } })
    }

    /// Whether this is a pooled block of `len`'s size class: what a new block of `len` bytes
    /// would be, so it may stand in for one.
    pub(crate) fn is_class_of(&self, len: usize) -> bool {
        matches!(self.origin, Origin::Pooled { class, .. } if class_of(len) == Some(class))
    }

    /// The usable size of the block.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// The address of the first byte.
    pub(crate) fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Where in the block `len` bytes copied from address `source` should start: at the same
    /// offset in a cache line as `source` when the block has room for that, at 0 otherwise (or
    /// without a source). `memcpy` of a large range runs about a tenth faster between two
    /// addresses at the same offset in their lines than between lines misaligned to each other
    /// (docs/benchmarks.md), and a guest's bytes lie wherever its allocator put them.
    pub(crate) fn start_for(&self, len: usize, source: Option<usize>) -> usize {
        let start = source.map_or(0, |source| source.wrapping_sub(self.addr()) % CACHE_LINE);
        if start.checked_add(len).is_some_and(|end| end <= self.cap) { start } else { 0 }
    }

    /// Whether `offset..offset+len` lies inside the block.
    fn contains(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.cap)
    }

    /// The address of byte `offset` (inside the block).
    fn at(&self, offset: usize) -> *mut u8 {
        self.ptr.as_ptr().wrapping_add(offset)
    }

    /// Copies `self[offset..offset+dst.len()]` into `dst`.
    ///
    /// # Panics
    ///
    /// When the range leaves the block: callers check ranges against the buffer first.
    pub(crate) fn copy_out(&self, offset: usize, dst: &mut [u8]) {
        assert!(self.contains(offset, dst.len()), "block range checked by the caller");
        // SAFETY: the source range lies inside this block's readable mapping (asserted above).
        // `dst` is a Rust slice of linear memory or host memory, never of a block (block bytes
        // are only lent out by `with_bytes`, read-only, to a caller that holds no `&mut` slice
        // at the same time), so the ranges do not overlap.
        unsafe { copy_bytes(dst.as_mut_ptr(), self.at(offset), dst.len()) };
    }

    /// Copies `src` into `self[offset..offset+src.len()]`.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn copy_in(&self, offset: usize, src: &[u8]) {
        assert!(self.contains(offset, src.len()), "block range checked by the caller");
        // SAFETY: the destination lies inside this block's writable mapping (asserted above).
        // No slice of the block is alive: `with_bytes` lends one only for the duration of a
        // closure that cannot reach any buffer (see there), and `src` is not a block's bytes.
        unsafe { copy_bytes(self.at(offset), src.as_ptr(), src.len()) };
    }

    /// Sets `self[offset..offset+len]` to zero.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn zero(&self, offset: usize, len: usize) {
        assert!(self.contains(offset, len), "block range checked by the caller");
        // SAFETY: the range lies inside this block's writable mapping (asserted above) and no
        // slice of the block is alive (see `copy_in`).
        unsafe { std::ptr::write_bytes(self.at(offset), 0, len) };
    }

    /// Copies `src[src_offset..+len]` to `dst[dst_offset..+len]`; the two may be the same block
    /// and the ranges may overlap.
    ///
    /// # Panics
    ///
    /// When a range leaves its block.
    pub(crate) fn copy_between(dst: &Block, dst_offset: usize, src: &Block, src_offset: usize, len: usize) {
        assert!(dst.contains(dst_offset, len) && src.contains(src_offset, len), "block ranges checked by the caller");
        // SAFETY: both ranges lie inside their blocks' mappings (asserted above); `copy_bytes`
        // allows overlap, and no slice of either block is alive (see `copy_in`).
        unsafe { copy_bytes(dst.at(dst_offset), src.at(src_offset), len) };
    }

    /// Calls `f` with `self[offset..offset+len]` as a slice. `f` must not write to any block:
    /// the crate's callers pass closures that hold only a child's pipe, never a buffer.
    ///
    /// # Panics
    ///
    /// When the range leaves the block.
    pub(crate) fn with_bytes<R>(&self, offset: usize, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(self.contains(offset, len), "block range checked by the caller");
        // SAFETY: the range lies inside this block's readable mapping (asserted above). The slice
        // lives only during `f`; nothing writes to block bytes meanwhile, because every write
        // goes through a buffer, and `f` (the only caller writes the slice to a child's stdin)
        // has no access to one: it holds the spawn state, not the guest's buffers.
        let bytes = unsafe { std::slice::from_raw_parts(self.at(offset), len) };
        f(bytes)
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match &self.origin {
            Origin::Pooled { class, slab, index } => self.pool.release(*class, *slab, *index),
            Origin::Own(_) => {
                let _locked = self.pool.lock();
                self.pool.shrink((round_to_pages(self.cap) + BLOCK_OVERHEAD) as u64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::memory_pool::PoolLimits;
    use crate::sys::vm_flags_of;

    fn slab_pool(dontfork: bool) -> Arc<MemoryPool> {
        MemoryPool::new(dontfork, PoolLimits::SLABS)
    }

    const O: u64 = BLOCK_OVERHEAD as u64;

    #[test]
    fn classes_round_up_and_blocks_are_reused() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let a = Block::new(&pool, 100).unwrap();
        assert_eq!(a.capacity(), 128);
        let b = Block::new(&pool, 0).unwrap();
        assert_eq!(b.capacity(), 64);
        assert_eq!(pool.footprint(), 2 * SLAB as u64 + 2 * O, "one slab per class used");
        let addr = a.addr();
        drop(a);
        assert_eq!(pool.growth_for(120), O, "a free block of the class is there");
        let c = Block::new(&pool, 120).unwrap();
        assert_eq!(c.addr(), addr, "a freed block is handed out again");
        drop((b, c));
        assert_eq!(pool.footprint(), 2 * SLAB as u64, "empty slabs stay warm");
        pool.trim();
        assert_eq!(pool.footprint(), 0);
        assert_eq!(pool.growth_for(120), SLAB as u64 + O);
    }

    #[test]
    fn empty_slabs_stay_warm_up_to_a_budget_and_trim_unmaps_them() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let slab = SLAB as u64;
        // Fill 48 slabs of the 128 KiB class, then free everything: 32 MiB of them stay warm.
        let blocks: Vec<Block> = (0..384).map(|_| Block::new(&pool, (64 << 10) + 1).unwrap()).collect();
        assert_eq!(pool.footprint(), 48 * slab + 384 * O);
        drop(blocks);
        assert_eq!(pool.footprint(), MIN_RETAIN_EMPTY);
        // Reusing them costs no new mapping.
        let blocks: Vec<Block> = (0..64).map(|_| Block::new(&pool, 100 << 10).unwrap()).collect();
        assert_eq!(pool.footprint(), MIN_RETAIN_EMPTY + 64 * O);
        drop(blocks);
        // Another class: the warm budget is shared, so freed memory does not pile up by class.
        let blocks: Vec<Block> = (0..64).map(|_| Block::new(&pool, (128 << 10) + 1).unwrap()).collect();
        drop(blocks);
        assert_eq!(pool.footprint(), MIN_RETAIN_EMPTY);
        pool.trim();
        assert_eq!(pool.footprint(), 0);
        // A slab with one live block is kept, and counted whole.
        let blocks: Vec<Block> = (0..16).map(|_| Block::new(&pool, 64 << 10).unwrap()).collect();
        let keep = blocks.into_iter().next();
        assert_eq!(pool.footprint(), slab + O, "one slab, fully free but for one block");
        drop(keep);
        assert_eq!(pool.peak_footprint(), 48 * slab + 384 * O);
        assert!(pool.free_counts_match());
    }

    #[test]
    fn the_lock_free_count_of_free_blocks_follows_the_free_lists() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let small = SLAB as u64 + O;
        assert_eq!(pool.growth_for(100), small, "nothing mapped yet");
        let mut blocks: Vec<Block> = (0..SLAB / 128).map(|_| Block::new(&pool, 100).unwrap()).collect();
        assert!(pool.free_counts_match());
        assert_eq!(pool.growth_for(100), small, "the one slab of the class is full");
        blocks.pop();
        assert!(pool.free_counts_match());
        assert_eq!(pool.growth_for(100), O, "one block is free");
        // Past the warm budget (none here but the minimum), a slab left empty is unmapped.
        let others: Vec<Block> = (0..40).map(|_| Block::new(&pool, 1 << 20).unwrap()).collect();
        drop(others);
        drop(blocks);
        assert!(pool.free_counts_match());
        pool.trim();
        assert!(pool.free_counts_match());
        assert_eq!(pool.growth_for(100), small);
        assert_eq!(pool.growth_for(1 << 20), SLAB as u64 + O);
    }

    #[test]
    fn counters_stay_exact_while_threads_make_and_drop_blocks_at_once() {
        // The counters change by plain stores under the pool's lock: a change made outside it
        // would lose updates here, where four threads make and drop blocks of several classes
        // and blocks mapped on their own at once.
        let pool = BufferPool::new(slab_pool(true), 0);
        std::thread::scope(|scope| {
            for thread in 0..4usize {
                let pool = &pool;
                scope.spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..5_000usize {
                        let len = match (i + thread) % 5 {
                            0 => 64,
                            1 => 1000,
                            2 => 5000,
                            3 => 70_000,
                            _ => MAX_POOLED + 1 + i % 3,
                        };
                        held.push(Block::new(pool, len).unwrap());
                        if held.len() > 8 {
                            held.swap_remove(i % held.len());
                        }
                    }
                });
            }
        });
        assert!(pool.free_counts_match());
        let classes = pool.lock();
        let mapped = classes.iter().flat_map(|c| &c.slabs).filter(|s| s.mapping.is_some()).count() as u64;
        drop(classes);
        assert_eq!(pool.footprint(), mapped * SLAB as u64, "no block is live, so only slabs remain");
        assert_eq!(pool.empty.load(Ordering::Relaxed), mapped * SLAB as u64, "every slab left is empty");
        assert!(pool.peak_footprint() >= round_to_pages(MAX_POOLED + 1) as u64 + O + SLAB as u64);
        pool.trim();
        assert_eq!(pool.footprint(), 0);
    }

    #[test]
    fn large_blocks_have_their_own_mapping() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let big = Block::new(&pool, MAX_POOLED + 1).unwrap();
        assert_eq!(big.capacity(), MAX_POOLED + 1);
        assert_eq!(pool.footprint(), round_to_pages(MAX_POOLED + 1) as u64 + O);
        big.copy_in(MAX_POOLED, &[7]);
        let mut out = [0];
        big.copy_out(MAX_POOLED, &mut out);
        assert_eq!(out, [7]);
        drop(big);
        assert_eq!(pool.footprint(), 0);
    }

    #[test]
    fn memory_is_dontfork_only_when_asked() {
        for dontfork in [true, false] {
            let pool = BufferPool::new(slab_pool(dontfork), 0);
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
        let pool = BufferPool::new(slab_pool(true), 0);
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
    fn copies_just_past_their_source_go_in_pieces_and_stay_exact() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let len = 5 * PIECE + 100;
        let pattern: Vec<u8> = (0..len + 64).map(|i| (i * 7 + i / 251) as u8).collect();
        // Within one block, overlapping, the destination 8 bytes past the source and 8 before.
        for (src, dst) in [(0, 8), (8, 0), (16, 16 + ALIAS_PERIOD), (0, 63), (0, 64)] {
            let block = Block::new(&pool, len + ALIAS_PERIOD + 64).unwrap();
            block.copy_in(0, &pattern);
            let mut expected = vec![0; len + ALIAS_PERIOD + 64];
            block.copy_out(0, &mut expected[..pattern.len()]);
            expected.copy_within(src..src + len, dst);
            Block::copy_between(&block, dst, &block, src, len);
            let mut got = vec![0; pattern.len()];
            block.copy_out(0, &mut got);
            assert_eq!(got[..], expected[..pattern.len()], "{src} -> {dst}");
        }
        // Between linear memory and a block, the block 16 bytes past the source and back.
        let block = Block::new(&pool, len).unwrap();
        let mut memory = vec![0; len + ALIAS_PERIOD];
        let start = block.addr().wrapping_sub(16).wrapping_sub(memory.as_ptr() as usize) % ALIAS_PERIOD;
        memory[start..start + len].copy_from_slice(&pattern[..len]);
        let source = &memory[start..start + len];
        assert_eq!(block.addr().wrapping_sub(source.as_ptr() as usize) % ALIAS_PERIOD, 16);
        block.copy_in(0, source);
        let mut out = vec![0; len];
        block.copy_out(0, &mut out);
        assert_eq!(out, source);
    }

    #[test]
    #[should_panic(expected = "checked by the caller")]
    fn out_of_range_is_a_bug_not_ub() {
        let pool = BufferPool::new(slab_pool(true), 0);
        let a = Block::new(&pool, 64).unwrap();
        a.copy_in(60, b"12345");
    }
}

//! Host buffers: bytes in a DONTFORK [`Block`], charged to the guest's [`Ledger`] while they
//! live, seen by the guest through views (a handle or an `externref`; slices share bytes).

use std::sync::Arc;

use super::accountant::Ledger;
use crate::sys::buffer_memory::{Block, BufferPool};

/// The footprint of host buffers allowed when the sandbox has no memory limit: 4 GiB.
pub(crate) const DEFAULT_EXTERNAL_LIMIT: u64 = 4 << 30;

/// The largest buffer: 1 GiB.
pub(crate) const MAX_BUFFER: usize = 1 << 30;

/// The bytes of one allocation, charged to the ledger until the last view of them is dropped.
#[derive(Debug)]
pub(crate) struct Storage {
    block: Block,
    /// Where the bytes start in the block ([`Block::start_for`]).
    start: usize,
    len: usize,
    ledger: Arc<Ledger>,
}

impl Storage {
    /// `len` bytes (not initialised: callers fill them) charged to `ledger`, placed for a copy
    /// from address `source` ([`Block::start_for`]), or `None` when the host cannot map them.
    pub(crate) fn new(pool: &Arc<BufferPool>, ledger: &Arc<Ledger>, len: usize, source: Option<usize>) -> Option<Self> {
        let block = Block::new(pool, len)?;
        ledger.charge(len as u64);
        let start = block.start_for(len, source);
        Some(Self { block, start, len, ledger: Arc::clone(ledger) })
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        self.ledger.credit(self.len as u64);
    }
}

/// What a handle or an `externref` holds: `len` bytes of a storage from `start`.
/// A storage no buffer holds any more, kept whole for the guest's next buffer of its size
/// class (`external::spares`): its bytes are not charged to the ledger, but its block still
/// counts in the pool's footprint.
#[derive(Debug)]
pub(crate) struct Spare(Arc<Storage>);

impl Spare {
    /// Whether a buffer of `len` bytes may take this storage: its block is what a new block of
    /// `len` bytes would be.
    pub(crate) fn fits(&self, len: usize) -> bool {
        self.0.block.is_class_of(len)
    }

    /// The usable size of its block.
    pub(crate) fn capacity(&self) -> usize {
        self.0.block.capacity()
    }
}

#[derive(Debug, Clone)]
pub(crate) struct BufferView {
    storage: Arc<Storage>,
    start: usize,
    len: usize,
}

impl BufferView {
    /// A view of all of `storage`.
    pub(crate) fn new(storage: Storage) -> Self {
        let (start, len) = (storage.start, storage.len);
        Self { storage: Arc::new(storage), start, len }
    }

    /// The address of the view's first byte, for placing a copy of it ([`Block::start_for`]).
    pub(crate) fn addr(&self) -> usize {
        self.storage.block.addr().wrapping_add(self.start)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole storage of a view that is its only one (no slice, no `externref` and no other
    /// view shares it), uncharged from the ledger, to be made a new buffer later
    /// ([`BufferView::from_spare`]); `None` (and the view dropped as usual) otherwise.
    pub(crate) fn into_spare(self) -> Option<Spare> {
        let mut storage = self.storage;
        let whole = self.start == storage.start && self.len == storage.len;
        let unique = Arc::get_mut(&mut storage)?;
        if !whole {
            return None;
        }
        unique.ledger.credit(unique.len as u64);
        unique.len = 0;
        Some(Spare(storage))
    }

    /// A new buffer of `len` bytes in a spare's storage, charged to the ledger and placed for a
    /// copy from address `source` ([`Block::start_for`]). Its bytes are the old buffer's until
    /// written, as a reused block's are. `len` must fit the block.
    pub(crate) fn from_spare(spare: Spare, len: usize, source: Option<usize>) -> Self {
        let Spare(mut storage) = spare;
        assert!(len <= storage.block.capacity(), "a spare is taken only for its size class");
        // A spare's storage is unique: `into_spare` checked, and nothing cloned it since.
        let unique = Arc::get_mut(&mut storage).expect("a spare's storage is its only reference");
        unique.ledger.charge(len as u64);
        unique.len = len;
        unique.start = unique.block.start_for(len, source);
        let start = unique.start;
        Self { storage, start, len }
    }

    /// Whether `offset..offset+len` lies inside the view.
    pub(crate) fn contains(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.len)
    }

    /// A view of `start..end` sharing these bytes, if the range lies inside.
    pub(crate) fn slice(&self, start: usize, end: usize) -> Option<Self> {
        (start <= end && end <= self.len).then(|| Self {
            storage: Arc::clone(&self.storage),
            start: self.start + start,
            len: end - start,
        })
    }

    /// Copies the view's bytes from `offset` into `dst` (the range must lie inside).
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) {
        assert!(self.contains(offset, dst.len()), "view range checked by the caller");
        self.storage.block.copy_out(self.start + offset, dst);
    }

    /// Copies `src` into the view at `offset` (the range must lie inside).
    pub(crate) fn write(&self, offset: usize, src: &[u8]) {
        assert!(self.contains(offset, src.len()), "view range checked by the caller");
        self.storage.block.copy_in(self.start + offset, src);
    }

    /// Zeroes the whole view.
    pub(crate) fn zero(&self) {
        self.storage.block.zero(self.start, self.len);
    }

    /// Copies all of `src` into this view at `offset` (the range must lie inside; the two may
    /// share bytes).
    pub(crate) fn copy_from(&self, offset: usize, src: &BufferView) {
        assert!(self.contains(offset, src.len), "view range checked by the caller");
        Block::copy_between(&self.storage.block, self.start + offset, &src.storage.block, src.start, src.len);
    }

    /// Calls `f` with the view's bytes from `offset`.
    pub(crate) fn with_bytes<R>(&self, offset: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(offset <= self.len, "view offset checked by the caller");
        self.storage.block.with_bytes(self.start + offset, self.len - offset, f)
    }
}

/// The address a concatenation of `parts` (each its source's address and length, in order) is
/// placed for ([`Storage::new`]): where it would start if its largest part lay at its source's
/// offset in a cache line, so that the largest copy runs between aligned lines. `None` without
/// parts.
pub(crate) fn concat_source(parts: impl IntoIterator<Item = (usize, usize)>) -> Option<usize> {
    let mut offset = 0usize;
    let mut largest: Option<(usize, usize)> = None;
    for (addr, len) in parts {
        if largest.is_none_or(|(_, most)| len > most) {
            largest = Some((addr.wrapping_sub(offset), len));
        }
        offset = offset.wrapping_add(len);
    }
    largest.map(|(start, _)| start)
}

/// A buffer held by wasm as an `externref`: counted in the ledger's `refs` while it lives, so
/// collections know to run wasmtime's collector, which is what drops it.
#[derive(Debug)]
pub(crate) struct RefBuffer {
    pub(crate) view: BufferView,
    ledger: Arc<Ledger>,
}

impl RefBuffer {
    pub(crate) fn new(view: BufferView, ledger: &Arc<Ledger>) -> Self {
        ledger.ref_created();
        Self { view, ledger: Arc::clone(ledger) }
    }
}

impl Drop for RefBuffer {
    fn drop(&mut self) {
        self.ledger.ref_dropped();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::memory_pool::{MemoryPool, PoolLimits};

    #[test]
    fn slices_share_bytes_and_the_last_view_frees_them() {
        let pool = BufferPool::new(MemoryPool::new(true, PoolLimits::SLABS), 0);
        let ledger = Arc::new(Ledger::default());
        let whole = BufferView::new(Storage::new(&pool, &ledger, 1000, None).unwrap());
        whole.zero();
        assert_eq!(ledger.live(), 1000);
        let part = whole.slice(10, 20).unwrap();
        assert!(whole.slice(20, 10).is_none() && whole.slice(0, 1001).is_none());
        part.write(0, b"abc");
        let mut out = [0; 4];
        whole.read(9, &mut out);
        assert_eq!(&out, b"\0abc");
        drop(whole);
        assert_eq!(ledger.live(), 1000, "the slice keeps the bytes");
        drop(part);
        assert_eq!(ledger.live(), 0);
        assert_eq!(ledger.peak(), 1000);
    }

    #[test]
    fn copy_from_an_overlapping_view() {
        let pool = BufferPool::new(MemoryPool::new(true, PoolLimits::SLABS), 0);
        let ledger = Arc::new(Ledger::default());
        let whole = BufferView::new(Storage::new(&pool, &ledger, 8, None).unwrap());
        whole.write(0, b"abcdefgh");
        whole.copy_from(2, &whole.slice(0, 6).unwrap());
        whole.with_bytes(0, |b| assert_eq!(b, b"ababcdef"));
        let r = RefBuffer::new(whole.clone(), &ledger);
        assert_eq!(ledger.refs(), 1);
        drop(r);
        assert_eq!(ledger.refs(), 0);
    }

    #[test]
    fn a_buffer_starts_at_its_sources_offset_in_a_cache_line_where_its_block_has_room() {
        let pool = BufferPool::new(MemoryPool::new(true, PoolLimits::SLABS), 0);
        let ledger = Arc::new(Ledger::default());
        let source = 0x7000_1234_5678usize;
        // 120 KiB in the 128 KiB class: room to spare.
        let placed = BufferView::new(Storage::new(&pool, &ledger, 120 << 10, Some(source)).unwrap());
        assert_eq!(placed.addr() % 64, source % 64);
        assert_ne!(placed.addr() % 64, 0, "the source lies off a line, so the buffer does");
        placed.write(0, &[7; 120 << 10]);
        placed.with_bytes(0, |bytes| assert!(bytes.len() == 120 << 10 && bytes.iter().all(|&b| b == 7)));
        // A buffer that fills its block, or one made from nowhere, starts at the block's start.
        let full = BufferView::new(Storage::new(&pool, &ledger, 1024, Some(source)).unwrap());
        assert_eq!(full.addr() % 1024, 0);
        assert_eq!(BufferView::new(Storage::new(&pool, &ledger, 1000, None).unwrap()).addr() % 1024, 0);
        // Made a spare (whole, at its start) and a buffer again, placed for its new source.
        let spare = placed.into_spare().expect("its only view, whole");
        let again = BufferView::from_spare(spare, 100 << 10, Some(source + 5));
        assert_eq!((again.addr() % 64, again.len()), ((source + 5) % 64, 100 << 10));
        assert_eq!(ledger.live(), (100 << 10) + 1024, "the new buffer and `full`");
        assert!(again.slice(1, 10).unwrap().into_spare().is_none(), "a part is not the storage");
        assert!(again.into_spare().is_some(), "a placed view is whole");
    }

    #[test]
    fn a_concatenation_is_placed_for_its_largest_part() {
        assert_eq!(concat_source([]), None);
        // The 100-byte part lies at 0x1005 and 30 bytes into the concatenation.
        assert_eq!(concat_source([(0x500, 10), (0x900, 20), (0x1005, 100), (0x2000, 99)]), Some(0x1005 - 30));
        // Of two parts as large, the first.
        assert_eq!(concat_source([(0x40, 8), (0x83, 8)]), Some(0x40));
        assert_eq!(concat_source([(3, 1)]), Some(3));
    }
}

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
    len: usize,
    ledger: Arc<Ledger>,
}

impl Storage {
    /// `len` bytes (not initialised: callers fill them) charged to `ledger`, or `None` when the
    /// host cannot map them.
    pub(crate) fn new(pool: &Arc<BufferPool>, ledger: &Arc<Ledger>, len: usize) -> Option<Self> {
        let block = Block::new(pool, len)?;
        ledger.charge(len as u64);
        Some(Self { block, len, ledger: Arc::clone(ledger) })
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
        let len = storage.len;
        Self { storage: Arc::new(storage), start: 0, len }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole storage of a view that is its only one (no slice, no `externref` and no other
    /// view shares it), uncharged from the ledger, to be made a new buffer later
    /// ([`BufferView::from_spare`]); `None` (and the view dropped as usual) otherwise.
    pub(crate) fn into_spare(self) -> Option<Spare> {
        let mut storage = self.storage;
        let whole = self.start == 0 && self.len == storage.len;
        let unique = Arc::get_mut(&mut storage)?;
        if !whole {
            return None;
        }
        unique.ledger.credit(unique.len as u64);
        unique.len = 0;
        Some(Spare(storage))
    }

    /// A new buffer of `len` bytes in a spare's storage, charged to the ledger. Its bytes are
    /// the old buffer's until written, as a reused block's are. `len` must fit the block.
    pub(crate) fn from_spare(spare: Spare, len: usize) -> Self {
        let Spare(mut storage) = spare;
        assert!(len <= storage.block.capacity(), "a spare is taken only for its size class");
        // A spare's storage is unique: `into_spare` checked, and nothing cloned it since.
        if let Some(unique) = Arc::get_mut(&mut storage) {
            unique.ledger.charge(len as u64);
            unique.len = len;
        }
        Self { storage, start: 0, len }
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
        let whole = BufferView::new(Storage::new(&pool, &ledger, 1000).unwrap());
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
        let whole = BufferView::new(Storage::new(&pool, &ledger, 8).unwrap());
        whole.write(0, b"abcdefgh");
        whole.copy_from(2, &whole.slice(0, 6).unwrap());
        whole.with_bytes(0, |b| assert_eq!(b, b"ababcdef"));
        let r = RefBuffer::new(whole.clone(), &ledger);
        assert_eq!(ledger.refs(), 1);
        drop(r);
        assert_eq!(ledger.refs(), 0);
    }
}

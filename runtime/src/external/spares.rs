//! Storages a guest released whole, kept for its next buffers of the same size class: a
//! guest that makes and frees buffers in a loop (a stream's chunks, a page built and dropped)
//! then takes each new buffer without the pool's lock or an allocation of its own.
//!
//! Kept storages are bounded ([`MAX_SPARES`] of them, none of a block over
//! [`MAX_SPARE_BLOCK`]), are not charged to the ledger (they hold no live buffer), and stay in
//! the pool's footprint, as a freed block's warm slab does. At the memory limit they are given
//! back before anything else (`ExternalState::trim`).

use super::buffer::{BufferView, Spare};

/// The most storages kept.
pub(crate) const MAX_SPARES: usize = 8;
/// The largest block kept: 128 KiB, so that spares hold at most 1 MiB.
pub(crate) const MAX_SPARE_BLOCK: usize = 128 << 10;

/// The storages one guest released whole, newest last.
#[derive(Debug, Default)]
pub(crate) struct Spares {
    kept: Vec<Spare>,
}

impl Spares {
    /// Keeps the storage of `view`, a buffer the guest released, when the view was its only
    /// one and there is room; otherwise the view is dropped, and its storage freed when its
    /// last view goes.
    pub(crate) fn keep(&mut self, view: BufferView) {
        if self.kept.len() >= MAX_SPARES {
            return;
        }
        // A larger block goes back to the pool as its storage drops (already uncharged).
        if let Some(spare) = view.into_spare()
            && spare.capacity() <= MAX_SPARE_BLOCK
        {
            if self.kept.capacity() == 0 {
                self.kept.reserve_exact(MAX_SPARES);
            }
            self.kept.push(spare);
        }
    }

    /// Whether a buffer of `len` bytes could take a kept storage.
    pub(crate) fn has_for(&self, len: usize) -> bool {
        self.kept.iter().any(|spare| spare.fits(len))
    }

    /// A new buffer of `len` bytes in the newest kept storage of its size class, if any, placed
    /// for a copy from address `source` ([`BufferView::from_spare`]).
    pub(crate) fn take(&mut self, len: usize, source: Option<usize>) -> Option<BufferView> {
        let index = self.kept.iter().rposition(|spare| spare.fits(len))?;
        Some(BufferView::from_spare(self.kept.swap_remove(index), len, source))
    }

    /// Gives every kept storage back to the pool.
    pub(crate) fn clear(&mut self) {
        self.kept.clear();
    }

    /// How many storages are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::external::accountant::Ledger;
    use crate::external::buffer::Storage;
    use crate::sys::buffer_memory::BufferPool;
    use crate::sys::memory_pool::{MemoryPool, PoolLimits};

    fn setup() -> (Arc<BufferPool>, Arc<Ledger>) {
        (BufferPool::new(MemoryPool::new(true, PoolLimits::SLABS), 0), Arc::new(Ledger::default()))
    }

    fn buffer(pool: &Arc<BufferPool>, ledger: &Arc<Ledger>, len: usize) -> BufferView {
        BufferView::new(Storage::new(pool, ledger, len, None).unwrap())
    }

    #[test]
    fn a_released_storage_is_kept_uncharged_and_taken_by_its_size_class_only() {
        let (pool, ledger) = setup();
        let mut spares = Spares::default();
        let view = buffer(&pool, &ledger, 1000);
        view.write(0, b"old bytes");
        let footprint = pool.footprint();
        spares.keep(view);
        assert_eq!(spares.len(), 1);
        assert_eq!(ledger.live(), 0, "a kept storage holds no live buffer");
        assert_eq!(pool.footprint(), footprint, "its block still counts in the footprint");
        assert!(!spares.has_for(512) && !spares.has_for(1025), "1000 bytes are in the 1 KiB class");
        assert!(spares.take(2000, None).is_none());
        let again = spares.take(1024, None).unwrap();
        assert_eq!((again.len(), ledger.live(), spares.len()), (1024, 1024, 0));
        let mut bytes = [0; 9];
        again.read(0, &mut bytes);
        assert_eq!(&bytes, b"old bytes", "the same block, not yet written");
        drop(again);
        assert_eq!(ledger.live(), 0, "a buffer made from a spare is credited when dropped");
        assert_eq!(ledger.peak(), 1024);
    }

    #[test]
    fn shared_partial_and_large_storages_are_not_kept() {
        let (pool, ledger) = setup();
        let mut spares = Spares::default();
        let whole = buffer(&pool, &ledger, 100);
        let slice = whole.slice(0, 100).unwrap();
        spares.keep(whole);
        assert_eq!(spares.len(), 0, "a slice still shares the storage");
        assert_eq!(ledger.live(), 100);
        spares.keep(slice.slice(1, 50).unwrap());
        assert_eq!(spares.len(), 0, "a part of a storage is not the storage");
        spares.keep(slice);
        assert_eq!(spares.len(), 1, "its last view, whole");
        spares.keep(buffer(&pool, &ledger, MAX_SPARE_BLOCK + 1));
        assert_eq!(spares.len(), 1, "a block over 128 KiB goes back to the pool");
        assert_eq!(ledger.live(), 0);
    }

    #[test]
    fn spares_are_bounded_and_clear_gives_their_blocks_back() {
        let (pool, ledger) = setup();
        let mut spares = Spares::default();
        let views: Vec<BufferView> = (0..MAX_SPARES + 3).map(|_| buffer(&pool, &ledger, 64)).collect();
        for view in views {
            spares.keep(view);
        }
        assert_eq!(spares.len(), MAX_SPARES);
        assert_eq!(ledger.live(), 0);
        spares.clear();
        pool.trim();
        assert_eq!(pool.footprint(), 0, "every block went back, and its slab was unmapped");
    }
}

//! Reservations recycled across runs: a guest's linear memory (and GC heap) goes back to the
//! runtime's pool when its store drops, and the next run takes it again instead of mapping and
//! unmapping a multi-GiB reservation.
//!
//! A reservation comes back reset: every byte the guest could reach is discarded with
//! `madvise(MADV_DONTNEED)` (the next access reads fresh zero pages), and the next memory that
//! takes it sets its protection with `mprotect` to exactly its own size (bytes past it
//! inaccessible again; when the size is the same as before, as when one guest runs again and
//! again, no call at all). Neither remaps the range, so the `MADV_DONTFORK` set when it was
//! first mapped stays on every page of it, for every later guest. The pool is bounded: at most
//! `idle` reservations wait for reuse (the rest are unmapped), and at most `total` exist at
//! once through the pool (past it, memories are mapped and unmapped per run as without a
//! pool: never refused).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use nix::errno::Errno;

use super::mapping::{Reservation, round_to_pages};

/// How many guest memories a runtime keeps for reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLimits {
    /// Reservations kept mapped, reset, between runs. 0 turns the pool off.
    pub idle: usize,
    /// Reservations handed out through the pool at once, idle ones included; memories past it
    /// are not pooled.
    pub total: usize,
}

impl PoolLimits {
    /// The default for host-buffer slabs (1 MiB each): 64 idle, 4,096 in all.
    pub const SLABS: Self = Self { idle: 64, total: 4096 };
}

impl Default for PoolLimits {
    /// 16 idle, 1,024 in all: enough for a server running a few guests per core, while an idle
    /// reservation costs only address space and one kernel mapping entry.
    fn default() -> Self {
        Self { idle: 16, total: 1024 }
    }
}

/// The pool of one runtime.
#[derive(Debug)]
pub(crate) struct MemoryPool {
    dontfork: bool,
    limits: PoolLimits,
    idle: Mutex<Vec<Reservation>>,
    /// Reservations that belong to the pool now: idle or in use.
    pooled: AtomicUsize,
}

/// A reservation taken from (or counted by) the pool: given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    reservation: Option<Reservation>,
    pool: Option<Arc<MemoryPool>>,
}

impl MemoryPool {
    pub(crate) fn new(dontfork: bool, limits: PoolLimits) -> Arc<Self> {
        Arc::new(Self { dontfork, limits, idle: Mutex::default(), pooled: AtomicUsize::new(0) })
    }

    /// A reservation of `len` bytes: an idle one of that size, a new one counted by the pool,
    /// or (past `total`) a new one of its own.
    pub(crate) fn take(self: &Arc<Self>, len: usize) -> Result<Slot, Errno> {
        let len = round_to_pages(len.max(1)).ok_or(Errno::ENOMEM)?;
        if self.limits.idle > 0 {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = idle.iter().rposition(|r| r.len() == len) {
                let reservation = idle.swap_remove(at);
                return Ok(Slot { reservation: Some(reservation), pool: Some(Arc::clone(self)) });
            }
        }
        let reservation = Reservation::new(len, self.dontfork)?;
        let counted = self.limits.idle > 0
            && self
                .pooled
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.limits.total).then_some(n + 1))
                .is_ok();
        Ok(Slot { reservation: Some(reservation), pool: counted.then(|| Arc::clone(self)) })
    }

    /// Takes back a reservation: reset and kept if there is room among the idle ones, unmapped
    /// otherwise (or if it cannot be reset, or the room was taken while it was reset). The reset
    /// runs outside the lock: clearing a large memory takes long, and every instantiation and
    /// every other instance's drop in the runtime waits for the lock.
    fn give(&self, mut reservation: Reservation) {
        let room = |idle: &Vec<Reservation>| idle.len() < self.limits.idle;
        if room(&self.idle.lock().unwrap_or_else(PoisonError::into_inner)) && reservation.discard().is_ok() {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if room(&idle) {
                idle.push(reservation);
                return;
            }
        }
        self.pooled.fetch_sub(1, Ordering::AcqRel);
        drop(reservation);
    }

    /// Whether the pool's reservations are marked `MADV_DONTFORK`.
    pub(crate) fn dontfork(&self) -> bool {
        self.dontfork
    }

    /// Reservations waiting for reuse.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Slot {
    pub(crate) fn reservation(&mut self) -> &mut Reservation {
        self.reservation.as_mut().expect("a slot holds its reservation until dropped")
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.reservation.as_ref().map_or(std::ptr::null_mut(), Reservation::as_ptr)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let (Some(reservation), Some(pool)) = (self.reservation.take(), self.pool.take()) {
            pool.give(reservation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::mapping::page_size;
    use crate::sys::vm_flags_of;

    fn write_secret(slot: &mut Slot) -> usize {
        let len = 4 * page_size();
        slot.reservation().make_accessible(len).unwrap();
        let base = slot.as_ptr();
        // SAFETY: the first `len` bytes of the reservation were just made writable, and this
        // test owns the slot.
        unsafe { std::ptr::write_bytes(base, 0x5a, len) };
        len
    }

    #[test]
    fn a_reused_slot_is_zero_inaccessible_and_still_dontfork() {
        let pool = MemoryPool::new(true, PoolLimits { idle: 1, total: 4 });
        let len = 64 * page_size();
        let mut first = pool.take(len).unwrap();
        let written = write_secret(&mut first);
        let base = first.as_ptr();
        drop(first);
        assert_eq!(pool.idle(), 1);
        let mut second = pool.take(len).unwrap();
        assert_eq!(second.as_ptr(), base, "the slot was reused");
        // The next memory sets its own size: a smaller one leaves the rest inaccessible.
        second.reservation().set_accessible(page_size()).unwrap();
        assert_eq!(second.reservation().accessible(), page_size());
        second.reservation().set_accessible(written).unwrap();
        // SAFETY: `written` bytes from `base` were just made readable.
        let bytes = unsafe { std::slice::from_raw_parts(second.as_ptr(), written) };
        assert!(bytes.iter().all(|&b| b == 0), "the previous guest's bytes are gone");
        for offset in [0, written - 1, written, len - 1] {
            let flags = vm_flags_of(base as usize + offset).unwrap();
            assert!(flags.split(' ').any(|f| f == "dc"), "offset {offset}: {flags}");
        }
    }

    #[test]
    fn the_pool_is_bounded() {
        let pool = MemoryPool::new(false, PoolLimits { idle: 1, total: 2 });
        let len = 4 * page_size();
        let slots: Vec<_> = (0..3).map(|_| pool.take(len).unwrap()).collect();
        assert_eq!(pool.pooled.load(Ordering::Acquire), 2, "the third is its own");
        drop(slots);
        assert_eq!(pool.idle(), 1, "one idle slot kept, the others unmapped");
        assert_eq!(pool.pooled.load(Ordering::Acquire), 1);
        // Another size is never handed a slot of the wrong size.
        let other = pool.take(8 * page_size()).unwrap();
        assert_eq!(pool.idle(), 1);
        drop(other);
        let off = MemoryPool::new(false, PoolLimits { idle: 0, total: 10 });
        drop(off.take(len).unwrap());
        assert_eq!(off.idle(), 0);
    }
}

//! wasmtime's `MemoryCreator` over [`Reservation`]: every linear memory and the GC heap of a
//! guest live in a mapping that can be excluded from `fork()`.

use std::sync::Arc;

use wasmtime::{LinearMemory, MemoryCreator, MemoryType};

use super::memory_pool::{MemoryPool, Slot};

/// Reservation used when wasmtime asks for none (`memory_reservation(0)`): room to grow
/// without moving, since our memories never move.
const FALLBACK_RESERVATION: usize = 64 << 20;

/// Creates guest memories as `PROT_NONE` reservations plus guard, marked `MADV_DONTFORK` when
/// the pool's `dontfork` is set, made accessible with `mprotect` as they grow, never moved. The
/// reservations come from the runtime's [`MemoryPool`] and go back to it, reset, when the
/// memory drops.
///
/// Install with `Config::with_host_memory` together with `memory_init_cow(false)` (wasmtime 49
/// panics on modules with data segments otherwise, wasmtime#10740) and the on-demand allocator
/// (the pooling allocator ignores memory creators).
#[derive(Debug, Clone)]
pub(crate) struct GuestMemoryCreator {
    pub(crate) pool: Arc<MemoryPool>,
}

// SAFETY: every memory returned satisfies `LinearMemory`'s contract (see `GuestMemory`), and
// the creator's only state, the pool, is behind a mutex and atomics.
unsafe impl MemoryCreator for GuestMemoryCreator {
    fn new_memory(
        &self,
        _ty: MemoryType,
        minimum: usize,
        maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        // wasmtime 49 always passes `Some`, but the promise that the maximum fits inside the
        // reservation does not hold when the reservation is small: never reserve less than the
        // minimum, and when no reservation is asked, leave room to grow in place.
        let reserved = match reserved_size_in_bytes {
            Some(0) | None => maximum.unwrap_or(usize::MAX).min(FALLBACK_RESERVATION),
            Some(reserved) => reserved,
        }
        .max(minimum);
        let total = reserved
            .checked_add(guard_size_in_bytes)
            .ok_or_else(|| format!("memory reservation of {reserved} bytes plus guard overflows"))?;
        let mut slot = self
            .pool
            .take(total)
            .map_err(|errno| format!("failed to reserve {total} bytes for guest memory: {errno}"))?;
        slot.reservation()
            .set_accessible(minimum)
            .map_err(|errno| format!("failed to make {minimum} bytes of guest memory accessible: {errno}"))?;
        let capacity = maximum.map_or(reserved, |max| max.min(reserved));
        Ok(Box::new(GuestMemory { slot, size: minimum, capacity }))
    }
}

/// One guest memory. Bytes past `size` up to the end of the reservation plus guard are
/// `PROT_NONE` (except the tail of the last partially used host page), so JIT code that elides
/// bounds checks because of the guard faults, and wasmtime turns the fault into a trap.
#[derive(Debug)]
struct GuestMemory {
    slot: Slot,
    size: usize,
    capacity: usize,
}

// SAFETY: `as_ptr` is the non-null base of a mapping that never moves while `self` lives;
// growth up to `byte_capacity` only changes protection in place; new bytes are zero because
// they come from a fresh anonymous mapping that was never accessible before, or from a pooled
// one whose every accessible byte was discarded (`MADV_DONTNEED`) when its previous memory
// dropped (`Reservation::discard`); `new_memory` sets the protection to exactly the minimum
// (`Reservation::set_accessible`), so every byte past `byte_size` faults as on a fresh one.
unsafe impl LinearMemory for GuestMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.capacity
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        if new_size > self.capacity {
            wasmtime::bail!("guest memory cannot grow to {new_size} bytes: its reservation holds {}", self.capacity);
        }
        self.slot
            .reservation()
            .make_accessible(new_size)
            .map_err(|errno| wasmtime::format_err!("failed to grow guest memory to {new_size} bytes: {errno}"))?;
        self.size = self.size.max(new_size);
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.slot.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::memory_pool::PoolLimits;

    #[test]
    fn small_reservations_still_hold_the_minimum() {
        let creator = GuestMemoryCreator { pool: MemoryPool::new(true, PoolLimits::default()) };
        let ty = MemoryType::new(1, None);
        let mem = creator.new_memory(ty, 1 << 20, None, Some(0), 0).unwrap();
        assert_eq!(mem.byte_size(), 1 << 20);
        assert!(mem.byte_capacity() >= 1 << 20);
        assert!(!mem.as_ptr().is_null());
    }

    #[test]
    fn growth_past_capacity_is_an_error_not_a_move() {
        let creator = GuestMemoryCreator { pool: MemoryPool::new(false, PoolLimits::default()) };
        let ty = MemoryType::new(1, Some(2));
        let mut mem = creator.new_memory(ty, 65536, Some(131072), Some(1 << 30), 1 << 16).unwrap();
        let base = mem.as_ptr();
        mem.grow_to(131072).unwrap();
        assert_eq!(mem.as_ptr(), base);
        assert!(mem.grow_to(196608).is_err());
        assert_eq!(mem.byte_size(), 131072);
    }
}

//! The store's resource limiter: the guest's instances, and linear memories (with the GC heap) and
//! tables that, together with the host's memory for the guest's buffers, stay within the
//! sandbox's memory limit.

use std::sync::Arc;

use wasmtime::ResourceLimiter;

use crate::sys::buffer_memory::BufferPool;

/// What one table element is counted as: a pointer.
const TABLE_ELEMENT: u64 = 8;
/// Table bytes that do not count against the limit (131,072 elements), so that a module's
/// ordinary function table never takes room from its linear memory.
const TABLE_ALLOWANCE: u64 = 1 << 20;

/// What a guest needed to start when the limit refused one of its memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RefusedStart {
    /// Bytes of all its memories (and tables past their allowance) up to the refused one.
    pub(crate) needed: u64,
    /// How many memories those are.
    pub(crate) memories: usize,
}

#[derive(Debug)]
pub(crate) struct Limiter {
    max_memory: Option<u64>,
    /// The guest's host buffers, once it has any (`GuestState::external`).
    buffers: Option<Arc<BufferPool>>,
    /// Bytes of all linear memories (and the GC heap) now.
    linear: u64,
    /// Bytes of all tables now.
    tables: u64,
    /// The most `linear` has been.
    pub(crate) peak_linear: u64,
    /// When the limit refused to create a memory (grow it from nothing): the bytes that memory
    /// and every memory and table created before it need together, and how many memories
    /// that is. A module's start needs them all.
    pub(crate) refused_start: Option<RefusedStart>,
    /// Memories created so far.
    memories: usize,
    /// Growths of linear memory or tables the limit refused (not the module's own maximum),
    /// and host buffers refused for want of room ([`crate::Stats::memory_refusals`]).
    pub(crate) refusals: u64,
    /// How many core instances the guest may have.
    instances: usize,
}

/// Core instances of a core module: the guest, and the trampoline through which the wrappers of
/// WASI functions call WASI's own (`wasi::original`; it defines no memory or table of its own).
pub(crate) const MODULE_INSTANCES: usize = 2;
/// Core instances of a component: fixed by the component itself (a component cannot create
/// instances at run time), so this only bounds what a hostile component can declare; wasmtime's
/// own default.
pub(crate) const COMPONENT_INSTANCES: usize = 10_000;

impl Limiter {
    pub(crate) fn new(max_memory: Option<u64>, instances: usize) -> Self {
        Self {
            max_memory,
            buffers: None,
            linear: 0,
            tables: 0,
            peak_linear: 0,
            refused_start: None,
            memories: 0,
            refusals: 0,
            instances,
        }
    }

    /// Counts the footprint of `buffers`, the guest's host buffers, against the limit.
    pub(crate) fn count_buffers(&mut self, buffers: Arc<BufferPool>) {
        self.buffers = Some(buffers);
    }

    /// The sandbox's memory limit.
    pub(crate) fn max_memory(&self) -> Option<u64> {
        self.max_memory
    }

    /// Bytes of linear memory and tables (past their allowance) now.
    pub(crate) fn wasm_bytes(&self) -> u64 {
        self.linear.saturating_add(self.tables.saturating_sub(TABLE_ALLOWANCE))
    }

    /// Whether growing by `growth` bytes stays within the limit.
    fn fits(&self, linear_growth: u64, table_growth: u64) -> bool {
        let linear = self.linear.saturating_add(linear_growth);
        let tables = self.tables.saturating_add(table_growth).saturating_sub(TABLE_ALLOWANCE);
        self.max_memory.is_none_or(|max| linear.saturating_add(tables).saturating_add(self.buffer_bytes()) <= max)
    }

    /// Bytes the guest's host buffers cost the host now.
    fn buffer_bytes(&self) -> u64 {
        self.buffers.as_ref().map_or(0, |pool| pool.footprint())
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        let growth = desired.saturating_sub(current) as u64;
        if !self.fits(growth, 0) {
            self.refusals += 1;
            if current == 0 {
                let needed = self.wasm_bytes().saturating_add(desired as u64);
                self.refused_start = Some(RefusedStart { needed, memories: self.memories + 1 });
            }
            return Ok(false);
        }
        if current == 0 {
            self.memories += 1;
        }
        self.linear = self.linear.saturating_add(growth);
        self.peak_linear = self.peak_linear.max(self.linear);
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // `memory.grow` returns -1 to the guest, as with any refused growth.
        Ok(())
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        let growth = (desired.saturating_sub(current) as u64).saturating_mul(TABLE_ELEMENT);
        if !self.fits(0, growth) {
            self.refusals += 1;
            return Ok(false);
        }
        self.tables = self.tables.saturating_add(growth);
        Ok(true)
    }

    fn table_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // `table.grow` returns -1 to the guest.
        Ok(())
    }

    fn instances(&self) -> usize {
        self.instances
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::buffer_memory::Block;

    #[test]
    fn buffers_and_tables_count_against_the_limit() {
        let pool = BufferPool::new(crate::sys::memory_pool::MemoryPool::new(true, crate::PoolLimits::SLABS), 0);
        let mut unbuffered = Limiter::new(Some(3 << 20), MODULE_INSTANCES);
        assert!(unbuffered.memory_growing(0, 3 << 20, None).unwrap(), "no buffers: all of it is memory's");
        let mut limiter = Limiter::new(Some(3 << 20), MODULE_INSTANCES);
        limiter.count_buffers(Arc::clone(&pool));
        assert!(limiter.memory_growing(0, 1 << 20, None).unwrap());
        let block = Block::new(&pool, 1000).unwrap();
        // 1 MiB of memory and a 1 MiB slab: 1 MiB minus the block overhead is left.
        assert!(!limiter.memory_growing(1 << 20, 2 << 20, None).unwrap());
        assert!(limiter.table_growing(0, 1 << 17, None).unwrap(), "the allowance");
        assert!(limiter.table_growing(1 << 17, (1 << 17) + 1000, None).unwrap(), "8000 bytes past it fit");
        assert!(!limiter.table_growing((1 << 17) + 1000, (1 << 17) + 200_000, None).unwrap(), "1.6 MB do not");
        assert!(!limiter.table_growing(1 << 17, 1 << 20, None).unwrap(), "8 MiB of table elements");
        drop(block);
        pool.trim();
        assert!(limiter.memory_growing(1 << 20, 2 << 20, None).unwrap());
        assert_eq!(limiter.peak_linear, 2 << 20);
        assert!(!limiter.memory_growing(0, 80, Some(75)).unwrap(), "the memory's own maximum");
    }

    /// A module with two memories that fit the limit one by one but not together: the refusal
    /// names what both need together, never the minimum of the memory refused alone (which fits
    /// the limit).
    #[test]
    fn a_refused_start_counts_every_memory_created_before() {
        let mut limiter = Limiter::new(Some(64 << 20), MODULE_INSTANCES);
        assert!(limiter.memory_growing(0, 40 << 20, None).unwrap());
        assert!(!limiter.memory_growing(0, 40 << 20, None).unwrap());
        assert_eq!(limiter.refused_start, Some(RefusedStart { needed: 80 << 20, memories: 2 }));
    }
}

//! What a guest used: memory, collections, spawns (`wrt run --stats`).

use std::time::Duration;

/// Resource figures of one guest instance, returned in every [`crate::Report`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// The most bytes of linear memory (all memories and the GC heap) the guest had at once.
    pub peak_linear_memory: u64,
    /// The most bytes of host buffers (external memory) the guest held at once.
    pub peak_external: u64,
    /// The most bytes the host held for those buffers at once: their blocks (1 MiB slabs of
    /// power-of-two blocks, or mappings of their own) and bookkeeping. This is what counts
    /// against the memory limit.
    pub peak_buffer_memory: u64,
    /// Bytes of host buffers the guest still held when the run ended.
    pub final_external: u64,
    /// Young collections of external memory the host asked for.
    pub young_collections: u64,
    /// Full collections of external memory the host asked for.
    pub full_collections: u64,
    /// Programs the guest started.
    pub spawns: u64,
    /// Time spent in those collections.
    pub gc_time: Duration,
}

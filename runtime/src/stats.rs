//! What a guest used: memory, collections, spawns (`wrt run --stats`).

use std::time::Duration;

/// Resource figures of one guest instance, returned in every [`crate::Report`].
///
/// Serializes as the object `wrt run --stats=json` prints: the fields by name, with `gc_time`
/// as `gc_seconds`, a number of seconds rounded to the microsecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
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
    /// Spawn requests refused: denied by the policy, or not started (not found, the child
    /// sandbox not applicable on this kernel, the operating system refusing).
    pub spawns_refused: u64,
    /// Bytes copied through the guest for its children's streams: what it wrote to their
    /// stdin and read from their stdout and stderr through the ABI (`write`, `read`,
    /// `write_buffer`, `read_buffer`, and the stdin, stdout and stderr bytes of `run`). Bytes
    /// between the stages of a pipeline never pass through the guest and are not counted.
    pub stream_bytes: u64,
    /// Time spent in those collections.
    #[serde(rename = "gc_seconds", serialize_with = "seconds")]
    pub gc_time: Duration,
    /// Times the sandbox refused the guest memory: a growth of linear memory or a table past
    /// the memory limit (`memory.grow` returned -1; a start that needed more is an
    /// [`InstantiateError::MemoryLimit`](crate::InstantiateError::MemoryLimit)), or a host buffer
    /// for want of room under it (under the default limit of host buffers without one). Not
    /// counted: a growth past the module's own maximum. [`crate::Report::hit_memory_limit`] says
    /// whether there was any.
    pub memory_refusals: u64,
    /// Fuel the guest's code burned, over all calls (0 on a runtime without fuel metering).
    /// A call the timeout stopped counts only up to the guest's last call out of wasm: compiled
    /// code keeps its count in a register between calls, and an interrupted loop never writes
    /// it back.
    pub fuel_consumed: u64,
    /// Wall time from the start of instantiation to now (to the end of the run in a report).
    #[serde(rename = "wall_seconds", serialize_with = "seconds")]
    pub wall_time: Duration,
    /// CPU time (user and system) of the threads that ran the guest, while they ran it:
    /// instantiation and every call, host calls included, children not. Zero unless the run
    /// measured it ([`RunOptions::measure_cpu_time`](crate::RunOptions::measure_cpu_time)).
    #[serde(rename = "cpu_seconds", serialize_with = "seconds")]
    pub cpu_time: Duration,
}

/// `duration` as seconds, rounded to the microsecond.
fn seconds<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((duration.as_secs_f64() * 1e6).round() / 1e6)
}

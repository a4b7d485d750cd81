//! The report of a finished run, and what an instance used so far.

use std::time::Duration;

use super::Instance;
use crate::capture::Capture;
use crate::external::accountant::Ledger;
use crate::outcome::Outcome;
use crate::stats::Stats;

/// What a finished run returns: how it ended and what it wrote to captured streams.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// How the guest ended.
    pub outcome: Outcome,
    /// Captured standard output (empty unless captured).
    pub stdout: Vec<u8>,
    /// Captured standard error (empty unless captured).
    pub stderr: Vec<u8>,
    /// Whether the guest wrote more to its captured standard output than the capture's limit
    /// (see [`crate::GuestOutput::Capture`]): `stdout` holds the first `limit` bytes. For a
    /// [`crate::GuestOutput::Writer`]: whether the writer failed (a write or a flush), so bytes
    /// the guest wrote were lost.
    pub stdout_truncated: bool,
    /// The same for standard error.
    pub stderr_truncated: bool,
    /// What the guest used: memory, collections, spawns, time, fuel.
    pub stats: Stats,
}

impl Report {
    /// Whether the sandbox refused the guest memory at least once during the run (a growth
    /// past the memory limit, or a host buffer; see [`Stats::memory_refusals`]). A guest that
    /// ended badly after such a refusal most likely ran out of memory.
    pub fn hit_memory_limit(&self) -> bool {
        self.stats.memory_refusals > 0
    }
}

impl Instance {
    /// What the guest used so far: memory, collections, spawns.
    pub fn stats(&self) -> Stats {
        let state = self.store.data();
        let external = state.external.as_deref();
        let accountant = external.map(|external| &external.accountant);
        let ledger = |figure: fn(&Ledger) -> u64| accountant.map_or(0, |a| figure(&a.ledger));
        Stats {
            peak_linear_memory: state.limiter.peak_linear,
            peak_external: ledger(Ledger::peak),
            peak_buffer_memory: external.map_or(0, |external| external.pool.peak_footprint()),
            final_external: ledger(Ledger::live),
            young_collections: accountant.map_or(0, |a| a.young_collections),
            full_collections: accountant.map_or(0, |a| a.full_collections),
            spawns: state.spawn.spawns,
            spawns_refused: state.spawn.refused,
            stream_bytes: state.spawn.stream_bytes
                + state.spawn.shared_stream_bytes.as_ref().map_or(0, |b| b.load(std::sync::atomic::Ordering::Relaxed)),
            gc_time: accountant.map_or(Duration::ZERO, |a| a.gc_time),
            memory_refusals: state.limiter.refusals,
            fuel_consumed: self.fuel_consumed,
            wall_time: self.started.elapsed(),
            cpu_time: self.cpu_time.unwrap_or_default(),
        }
    }

    /// Ends the instance and returns the report of a run that ended with `outcome`.
    pub fn into_report(mut self, outcome: Outcome) -> Report {
        // A collection a component pulled last has ended with the run.
        crate::collector::settle_pulled(self.store.data_mut());
        let take = |capture: &Option<Capture>| capture.as_ref().map(Capture::contents).unwrap_or_default();
        let truncated = |capture: &Option<Capture>| capture.as_ref().is_some_and(Capture::truncated);
        let captured = &self.captured;
        for capture in [&captured.stdout, &captured.stderr].into_iter().flatten() {
            // A failure marks the stream truncated, which the report says.
            let _ = capture.flush();
        }
        Report {
            stdout: take(&captured.stdout),
            stderr: take(&captured.stderr),
            stdout_truncated: truncated(&captured.stdout),
            stderr_truncated: truncated(&captured.stderr),
            outcome,
            stats: self.stats(),
        }
    }
}

//! The accountant: counts a guest's external bytes and decides, before each allocation, which
//! collection (if any) to ask for, following the [`GcPolicy`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::gc_policy::GcPolicy;

/// The external bytes of one guest, shared with every buffer so that a buffer freed anywhere
/// (released by the guest, or dropped by wasmtime's collector) is credited back at once.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    live: AtomicU64,
    peak: AtomicU64,
    /// Buffers held as `externref`: only wasmtime's collector frees them.
    refs: AtomicU64,
}

impl Ledger {
    /// Bytes of live buffers.
    pub(crate) fn live(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// The most live bytes seen.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Buffers held as `externref`.
    pub(crate) fn refs(&self) -> u64 {
        self.refs.load(Ordering::Relaxed)
    }

    pub(crate) fn charge(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        // A new peak is rare: read first, so that the common case takes no second bus lock.
        if live > self.peak.load(Ordering::Relaxed) {
            self.peak.fetch_max(live, Ordering::Relaxed);
        }
    }

    pub(crate) fn credit(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    pub(crate) fn ref_created(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn ref_dropped(&self) {
        self.refs.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A kind of collection, as passed to the guest's `wrt_gc(kind)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Reclaim what was allocated since the last collection.
    Young = 0,
    /// Reclaim everything unreachable.
    Full = 1,
}

/// The policy's state for one guest.
#[derive(Debug)]
pub(crate) struct Accountant {
    pub(crate) policy: GcPolicy,
    pub(crate) ledger: Arc<Ledger>,
    /// Bytes allocated since the last collection.
    young_bytes: u64,
    /// Bytes the guest's collector allocated during the running collection: young afterwards.
    allocated_while_collecting: u64,
    /// The lowest live count since the last full collection.
    low_since_full: u64,
    /// The soft limit `S`, from the live bytes after the last full collection.
    soft_limit: u64,
    /// The young trigger in effect: the policy's `Y`, or more while the guest's collections
    /// are expensive ([`GcPolicy::paced_young_trigger`]), never above `S/2` (whatever `S` is
    /// now), unless the policy was built unclamped for experiments.
    young_trigger: u64,
    /// When the last collection ended.
    last_ended: Option<Instant>,
    /// Whether the last young collection took more than its share of the guest's time.
    slow_before: bool,
    pub(crate) young_collections: u64,
    pub(crate) full_collections: u64,
    pub(crate) gc_time: Duration,
    /// Whether a collection is running (the guest's collector may allocate or release).
    pub(crate) collecting: bool,
}

impl Accountant {
    pub(crate) fn new(policy: GcPolicy) -> Self {
        let soft_limit = policy.soft_limit_after(0);
        let young_trigger = policy.young_trigger_for(soft_limit);
        Self {
            policy,
            ledger: Arc::default(),
            young_bytes: 0,
            allocated_while_collecting: 0,
            low_since_full: 0,
            soft_limit,
            young_trigger,
            last_ended: None,
            slow_before: false,
            young_collections: 0,
            full_collections: 0,
            gc_time: Duration::ZERO,
            collecting: false,
        }
    }

    /// The collection to run before allocating `request` bytes, if any. Never during a
    /// collection, and never when the policy is disabled.
    pub(crate) fn before_alloc(&mut self, request: u64) -> Option<Kind> {
        let live = self.ledger.live();
        self.low_since_full = self.low_since_full.min(live);
        if !self.policy.is_enabled() || self.collecting {
            return None;
        }
        // A full collection also reclaims the young generation, so it comes first.
        if live - self.low_since_full.min(live) >= self.soft_limit {
            return Some(Kind::Full);
        }
        (self.young_bytes >= self.young_trigger && self.young_bytes >= request).then_some(Kind::Young)
    }

    /// Records an allocation of `bytes` that was charged to the ledger.
    pub(crate) fn allocated(&mut self, bytes: u64) {
        if self.collecting {
            self.allocated_while_collecting = self.allocated_while_collecting.saturating_add(bytes);
        } else {
            self.young_bytes = self.young_bytes.saturating_add(bytes);
        }
    }

    /// Records a finished collection, which took `took` and ended now.
    pub(crate) fn collected(&mut self, kind: Kind, took: Duration) {
        let ended = Instant::now();
        let since = self.last_ended.map(|last| ended.saturating_duration_since(last).saturating_sub(took));
        self.last_ended = Some(ended);
        self.record(kind, took, since);
    }

    /// Records a collection that took `took`, `since` after the one before it ended (`None` for
    /// the first).
    fn record(&mut self, kind: Kind, took: Duration, since: Option<Duration>) {
        let live = self.ledger.live();
        // What the collector itself allocated survived it: it is the new young generation.
        self.young_bytes = std::mem::take(&mut self.allocated_while_collecting);
        self.gc_time += took;
        match kind {
            Kind::Young => {
                self.young_collections += 1;
                self.low_since_full = self.low_since_full.min(live);
                if let Some(since) = since {
                    let (trigger, slow) = self.policy.paced_young_trigger(
                        self.young_trigger,
                        self.soft_limit,
                        (took, since),
                        self.slow_before,
                    );
                    (self.young_trigger, self.slow_before) = (trigger, slow);
                }
            }
            Kind::Full => {
                self.full_collections += 1;
                self.low_since_full = live;
                self.soft_limit = self.policy.soft_limit_after(live);
                // `S` may have grown, so `Y` may (but never past `S/2`, nor below `Y`).
                let (least, most) = self.policy.young_trigger_bounds(self.soft_limit);
                self.young_trigger = self.young_trigger.clamp(least, most);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// A guest that allocates `chunk` bytes at a time and frees them all whenever collected,
    /// except `survive` bytes per collection; returns (young, full) collection counts.
    fn simulate(policy: GcPolicy, total: u64, chunk: u64, survive: u64) -> (u64, u64, u64) {
        let mut a = Accountant::new(policy);
        let mut garbage = 0;
        let mut peak = 0;
        let mut allocated = 0;
        while allocated < total {
            if let Some(kind) = a.before_alloc(chunk) {
                // The collector frees the garbage; `survive` bytes of it live on.
                let freed = garbage - garbage.min(survive);
                a.ledger.credit(freed);
                garbage = 0;
                a.collected(kind, Duration::ZERO);
            }
            a.ledger.charge(chunk);
            a.allocated(chunk);
            garbage += chunk;
            allocated += chunk;
            peak = peak.max(a.ledger.live());
        }
        (a.young_collections, a.full_collections, peak)
    }

    #[test]
    fn short_lived_buffers_get_young_collections_only() {
        // The burst workload: 2e4 iterations of ~250 KiB that all die young.
        let (young, full, peak) = simulate(GcPolicy::default(), 20_000 * 250 * 1024, 250 * 1024, 0);
        assert!(young > 250, "{young}");
        assert_eq!(full, 0);
        assert!(peak <= GcPolicy::DEFAULT_YOUNG_TRIGGER + 250 * 1024, "{peak}");
    }

    #[test]
    fn survivors_bring_full_collections_and_s_grows() {
        // 1 MiB of every collection survives: live grows, and full collections keep it in check.
        let (young, full, _) = simulate(GcPolicy::default(), 4096 * MIB, 256 * 1024, MIB);
        assert!(full >= 1, "{full}");
        assert!(young > 10 * full, "{young} young, {full} full");
    }

    #[test]
    fn disabled_never_collects() {
        let (young, full, peak) = simulate(GcPolicy::disabled(), 1024 * MIB, MIB, 0);
        assert_eq!((young, full), (0, 0));
        assert_eq!(peak, 1024 * MIB);
    }

    #[test]
    fn young_needs_at_least_the_request() {
        let mut a = Accountant::new(GcPolicy::default());
        a.ledger.charge(16 * MIB);
        a.allocated(16 * MIB);
        assert_eq!(a.before_alloc(32 * MIB), None, "one huge request does not thrash");
        assert_eq!(a.before_alloc(MIB), Some(Kind::Young));
        a.collecting = true;
        assert_eq!(a.before_alloc(MIB), None, "no collection inside a collection");
    }

    #[test]
    fn what_the_collector_allocates_is_young_afterwards() {
        let mut a = Accountant::new(GcPolicy::default());
        a.allocated(20 * MIB);
        a.collecting = true;
        a.allocated(MIB);
        a.collecting = false;
        a.collected(Kind::Young, Duration::ZERO);
        a.allocated(15 * MIB);
        assert_eq!(a.before_alloc(1), Some(Kind::Young), "1 + 15 MiB since the collection");
    }

    /// A guest whose young collections take most of its time (a large heap of its own) gets
    /// them less often, up to every `S/2`, and as often as `Y` again once they are cheap; a
    /// policy with a young trigger of its own keeps it.
    #[test]
    fn young_collections_come_less_often_while_they_are_expensive() {
        let (ms, y) = (Duration::from_millis, GcPolicy::DEFAULT_YOUNG_TRIGGER);
        let due_after = |a: &mut Accountant| {
            let mut bytes = 0;
            while a.before_alloc(MIB).is_none() {
                a.allocated(MIB);
                bytes += MIB;
            }
            bytes
        };
        let mut a = Accountant::new(GcPolicy::default());
        assert_eq!(due_after(&mut a), y);
        a.record(Kind::Young, ms(1), None);
        assert_eq!(due_after(&mut a), y, "the first collection has no time before it to compare");
        for _ in 0..6 {
            a.record(Kind::Young, ms(5), Some(ms(1)));
        }
        assert_eq!(due_after(&mut a), 32 * MIB, "S/2");
        for _ in 0..6 {
            a.record(Kind::Young, ms(1), Some(ms(100)));
        }
        assert_eq!(due_after(&mut a), y);

        let mut fixed = Accountant::new(GcPolicy::new(y, 64 * MIB, 2.0).unwrap());
        for _ in 0..6 {
            fixed.record(Kind::Young, ms(5), Some(ms(1)));
        }
        assert_eq!(due_after(&mut fixed), y);
    }

    #[test]
    fn full_when_live_grew_by_s_since_its_low() {
        let mut a = Accountant::new(GcPolicy::default());
        a.ledger.charge(64 * MIB);
        assert_eq!(a.before_alloc(1), Some(Kind::Full));
        a.collected(Kind::Full, Duration::ZERO);
        // 64 MiB survived: S is now 128 MiB, and the low-water mark is 64 MiB.
        a.ledger.charge(100 * MIB);
        assert_eq!(a.before_alloc(1), None);
        a.ledger.charge(28 * MIB);
        assert_eq!(a.before_alloc(1), Some(Kind::Full));
    }
}

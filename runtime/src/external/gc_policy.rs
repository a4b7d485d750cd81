//! When the host asks for collections of a guest's external memory.

use std::time::Duration;

use crate::error::ConfigError;

const MIB: u64 = 1 << 20;

/// The collection policy for a guest's host buffers (external memory).
///
/// - A **young** collection when the bytes allocated since the last collection reach the
///   young trigger `Y` (and at least the size of the request).
/// - A **full** collection when live external bytes grew by the soft limit
///   `S = max(soft_limit, growth_factor × live after the last full collection)` since their
///   lowest point after the last full collection.
/// - At the hard limit (the sandbox's memory limit): full collection, retry, full collection,
///   retry, then the allocation fails with `NO_MEMORY`.
///
/// The default policy's young trigger adapts to the guest's collector: it doubles (up to `S/2`)
/// after the second young collection in a row that took more than a quarter of the guest's time
/// since the one before, and halves (down to `Y`) after one that took less than a sixteenth, so
/// a guest whose collections are expensive (a large heap of its own) collects less often. A
/// policy with an explicit `Y` ([`GcPolicy::new`]) keeps it.
///
/// `Y ≤ S/2` always holds: [`GcPolicy::new`] rejects a young trigger above half the soft limit,
/// and since `S` only grows from there, the invariant holds for every `S`. A young trigger at
/// or above `S` is what made Node 24 reclaim short-lived Buffers with full collections instead
/// of young ones (nodejs/node#63863).
///
/// # Examples
///
/// ```
/// use wrt_runtime::GcPolicy;
///
/// let policy = GcPolicy::new(8 << 20, 64 << 20, 2.0)?;
/// assert_eq!(policy.young_trigger(), 8 << 20);
/// assert!(GcPolicy::new(48 << 20, 64 << 20, 2.0).is_err(), "Y > S/2 is rejected");
/// # Ok::<(), wrt_runtime::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GcPolicy {
    enabled: bool,
    young_trigger: u64,
    soft_limit: u64,
    growth_factor: f64,
    /// Whether `Y` is clamped to `S/2` (always, outside experiments).
    clamp: bool,
    /// Whether the young trigger in effect adapts to the cost of the guest's collections.
    adapts: bool,
}

impl GcPolicy {
    /// The default young trigger `Y`: 2 MiB. The buffers made between two young collections are
    /// the blocks the next ones reuse, so `Y` is a working set, best kept near the CPU's
    /// caches (docs/design.md, "Host buffers and external-memory-aware collection").
    pub const DEFAULT_YOUNG_TRIGGER: u64 = 2 * MIB;
    /// The default floor of the soft limit `S`: 64 MiB (at least 1 MiB is allowed).
    pub const DEFAULT_SOFT_LIMIT: u64 = 64 * MIB;
    /// The default growth factor `f`: 2.
    pub const DEFAULT_GROWTH_FACTOR: f64 = 2.0;
    /// The smallest growth factor allowed: 1.5 (V8's 1.1 makes collections continuous).
    pub const MIN_GROWTH_FACTOR: f64 = 1.5;
    /// An adapting young trigger doubles after the second young collection in a row that took
    /// more than `1 / GROW_SHARE` of the time since the collection before it ended.
    const GROW_SHARE: u32 = 4;
    /// ... and halves after one that took less than `1 / SHRINK_SHARE` of it.
    const SHRINK_SHARE: u32 = 16;

    /// A policy with young trigger `Y = young_trigger`, soft limit floor `soft_limit` and growth
    /// factor `growth_factor`. Its young trigger is `Y` whatever the guest's collections cost.
    ///
    /// # Errors
    ///
    /// [`ConfigError::BadGcPolicy`] when `young_trigger` is zero or above `soft_limit / 2`,
    /// `soft_limit` is below 1 MiB, or `growth_factor` is below
    /// [`GcPolicy::MIN_GROWTH_FACTOR`] or not finite.
    pub fn new(young_trigger: u64, soft_limit: u64, growth_factor: f64) -> Result<Self, ConfigError> {
        let bad = |reason: String| Err(ConfigError::BadGcPolicy { reason });
        if soft_limit < MIB {
            return bad(format!("the soft limit must be at least 1 MiB, not {soft_limit} bytes"));
        }
        if young_trigger == 0 {
            return bad("the young trigger must be at least 1 byte".into());
        }
        if young_trigger > soft_limit / 2 {
            return bad(format!(
                "the young trigger ({young_trigger} bytes) must be at most half the soft limit ({soft_limit} bytes), \
                 or short-lived buffers are reclaimed by full collections"
            ));
        }
        if !growth_factor.is_finite() || growth_factor < Self::MIN_GROWTH_FACTOR {
            return bad(format!("the growth factor must be a number of at least 1.5, not {growth_factor}"));
        }
        Ok(Self { enabled: true, young_trigger, soft_limit, growth_factor, clamp: true, adapts: false })
    }

    /// [`GcPolicy::new`] with the default for each value that is `None`
    /// ([`GcPolicy::DEFAULT_YOUNG_TRIGGER`], [`GcPolicy::DEFAULT_SOFT_LIMIT`],
    /// [`GcPolicy::DEFAULT_GROWTH_FACTOR`]): what `wrt run --gc-young … --gc-soft-limit …
    /// --gc-growth …` asks for when only some of them are given. Without a young trigger, the
    /// default one adapts, as [`GcPolicy::default`]'s does.
    ///
    /// # Errors
    ///
    /// As [`GcPolicy::new`], for the values after the defaults are filled in.
    pub fn with_defaults(
        young_trigger: Option<u64>,
        soft_limit: Option<u64>,
        growth_factor: Option<f64>,
    ) -> Result<Self, ConfigError> {
        let policy = Self::new(
            young_trigger.unwrap_or(Self::DEFAULT_YOUNG_TRIGGER),
            soft_limit.unwrap_or(Self::DEFAULT_SOFT_LIMIT),
            growth_factor.unwrap_or(Self::DEFAULT_GROWTH_FACTOR),
        )?;
        Ok(Self { adapts: young_trigger.is_none(), ..policy })
    }

    /// A policy that never asks for young or soft-limit collections: only the hard limit
    /// collects. For comparison runs (`wrt run --gc off`).
    pub fn disabled() -> Self {
        Self { enabled: false, ..Self::default() }
    }

    /// Like [`GcPolicy::new`] without its checks, for experiments that show the cliff the
    /// `Y ≤ S/2` rule prevents: with `clamp`, the young trigger in effect is still cut to `S/2`
    /// (the construction-time half of the rule); without it, `Y` is used as given. Only with the
    /// `gc-experiments` feature; never for production use.
    #[cfg(feature = "gc-experiments")]
    pub fn experimental(young_trigger: u64, soft_limit: u64, growth_factor: f64, clamp: bool) -> Self {
        Self {
            enabled: true,
            young_trigger: young_trigger.max(1),
            soft_limit: soft_limit.max(1),
            growth_factor,
            clamp,
            adapts: false,
        }
    }

    /// Whether young and soft-limit collections are asked for.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The young trigger `Y`, in bytes: the least it is in effect, when it adapts.
    pub fn young_trigger(&self) -> u64 {
        self.young_trigger
    }

    /// Whether the young trigger in effect adapts to the cost of the guest's collections
    /// (the default policy's does; one given to [`GcPolicy::new`] does not).
    pub fn young_trigger_adapts(&self) -> bool {
        self.adapts
    }

    /// The floor of the soft limit `S`, in bytes.
    pub fn soft_limit(&self) -> u64 {
        self.soft_limit
    }

    /// The growth factor `f` of the soft limit.
    pub fn growth_factor(&self) -> f64 {
        self.growth_factor
    }

    /// The young trigger in effect while the soft limit is `soft_limit`: never above half of
    /// it (by construction), unless built unclamped for experiments.
    pub(crate) fn young_trigger_for(&self, soft_limit: u64) -> u64 {
        if self.clamp { self.young_trigger.min(soft_limit / 2) } else { self.young_trigger }
    }

    /// The least and the most the young trigger in effect may be while the soft limit is
    /// `soft_limit`: [`Self::young_trigger_for`], and `S/2` once it may grow (no bound when the
    /// policy was built unclamped for experiments).
    pub(crate) fn young_trigger_bounds(&self, soft_limit: u64) -> (u64, u64) {
        let least = self.young_trigger_for(soft_limit);
        (least, if self.clamp { (soft_limit / 2).max(least) } else { u64::MAX })
    }

    /// The young trigger in effect after a young collection that took `took`, `since` after the
    /// collection before it ended, when it was `current` and the soft limit is `soft_limit`, and
    /// whether that collection was slow (took more than a quarter of that time): doubled when it
    /// was and so was the one before (`slow_before`: one slow collection is as likely a machine
    /// that paused the guest), halved when it took less than a sixteenth, never below `Y` nor
    /// above what [`Self::young_trigger_for`] allows once it may grow (`S/2`). `Y` itself when
    /// the trigger does not adapt.
    pub(crate) fn paced_young_trigger(
        &self,
        current: u64,
        soft_limit: u64,
        (took, since): (Duration, Duration),
        slow_before: bool,
    ) -> (u64, bool) {
        let (least, most) = self.young_trigger_bounds(soft_limit);
        let slow = took.saturating_mul(Self::GROW_SHARE) > since;
        if !self.adapts {
            return (least, slow);
        }
        let next = if slow && slow_before {
            current.saturating_mul(2)
        } else if took.saturating_mul(Self::SHRINK_SHARE) < since {
            current / 2
        } else {
            current
        };
        (next.clamp(least, most), slow)
    }

    /// `S` after a full collection that left `live_after_full` bytes.
    pub(crate) fn soft_limit_after(&self, live_after_full: u64) -> u64 {
        let grown = (live_after_full as f64 * self.growth_factor).min(u64::MAX as f64) as u64;
        self.soft_limit.max(grown)
    }
}

impl Default for GcPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            young_trigger: Self::DEFAULT_YOUNG_TRIGGER,
            soft_limit: Self::DEFAULT_SOFT_LIMIT,
            growth_factor: Self::DEFAULT_GROWTH_FACTOR,
            clamp: true,
            adapts: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_holds_the_invariant() {
        let p = GcPolicy::default();
        assert!(p.young_trigger() <= p.soft_limit() / 2);
        let fixed = GcPolicy::new(p.young_trigger(), p.soft_limit(), p.growth_factor()).unwrap();
        assert_eq!(GcPolicy { adapts: true, ..fixed }, p);
        assert!(p.young_trigger_adapts() && !fixed.young_trigger_adapts());
    }

    #[test]
    fn rejects_what_breaks_the_invariant() {
        assert!(GcPolicy::new(32 * MIB, 64 * MIB, 2.0).is_ok(), "Y = S/2 is allowed");
        for (y, s, f) in [
            (32 * MIB + 1, 64 * MIB, 2.0),
            (64 * MIB, 64 * MIB, 2.0),
            (128 * MIB, 64 * MIB, 2.0),
            (0, 64 * MIB, 2.0),
            (1, 1024, 2.0),
            (MIB, 64 * MIB, 1.1),
            (MIB, 64 * MIB, f64::NAN),
            (MIB, 64 * MIB, f64::INFINITY),
        ] {
            let err = GcPolicy::new(y, s, f).unwrap_err();
            assert!(matches!(err, ConfigError::BadGcPolicy { .. }), "{y} {s} {f}: {err}");
        }
    }

    #[test]
    fn with_defaults_fills_in_what_is_not_given_and_still_checks() {
        assert_eq!(GcPolicy::with_defaults(None, None, None).unwrap(), GcPolicy::default());
        let p = GcPolicy::with_defaults(Some(MIB), None, Some(3.0)).unwrap();
        assert_eq!((p.young_trigger(), p.soft_limit(), p.growth_factor()), (MIB, 64 * MIB, 3.0));
        assert!(!p.young_trigger_adapts(), "a young trigger given is kept");
        assert!(GcPolicy::with_defaults(None, Some(128 * MIB), None).unwrap().young_trigger_adapts());
        // A young trigger above half the default soft limit is refused, as by `new`.
        let err = GcPolicy::with_defaults(Some(33 * MIB), None, None).unwrap_err();
        assert!(matches!(err, ConfigError::BadGcPolicy { .. }), "{err}");
    }

    #[test]
    fn an_adapting_young_trigger_follows_the_collections_share_of_time_within_y_and_s_half() {
        let p = GcPolicy::default();
        let (y, s) = (p.young_trigger(), p.soft_limit());
        let ms = Duration::from_millis;
        let (slow, fast, between) = ((ms(3), ms(10)), (ms(1), ms(100)), (ms(1), ms(12)));
        let pace = |current, took_since| p.paced_young_trigger(current, s, took_since, true).0;
        assert_eq!(p.paced_young_trigger(y, s, slow, false), (y, true), "one slow collection is not enough");
        assert_eq!(p.paced_young_trigger(y, s, slow, true), (2 * y, true));
        assert_eq!(p.paced_young_trigger(2 * y, s, fast, true), (y, false));
        let mut trigger = y;
        let mut seen = vec![trigger];
        for _ in 0..8 {
            trigger = pace(trigger, slow);
            seen.push(trigger);
        }
        assert_eq!(seen, [y, 2 * y, 4 * y, 8 * y, 16 * y, s / 2, s / 2, s / 2, s / 2], "doubles up to S/2");
        assert_eq!(pace(trigger, between), trigger, "kept between a quarter and a sixteenth");
        assert_eq!(pace(4 * y, between), 4 * y);
        for expected in [8 * y, 4 * y, 2 * y, y, y] {
            trigger = pace(trigger, fast);
            assert_eq!(trigger, expected, "halves down to Y");
        }
        // A larger soft limit (after survivors) lets it grow further; never past S/2.
        assert_eq!(p.paced_young_trigger(s / 2, 4 * s, (ms(2), ms(1)), true).0, s);
        assert_eq!(p.paced_young_trigger(u64::MAX, 4 * s, (ms(2), ms(1)), true).0, 2 * s);
        // A policy with its own young trigger keeps it, however slow its collections.
        let fixed = GcPolicy::new(y, s, 2.0).unwrap();
        assert_eq!(fixed.paced_young_trigger(y, s, (ms(100), ms(1)), true).0, y);
        assert_eq!(fixed.paced_young_trigger(4 * y, s, fast, true).0, y);
    }

    #[test]
    fn soft_limit_grows_with_survivors_and_keeps_its_floor() {
        let p = GcPolicy::default();
        assert_eq!(p.soft_limit_after(0), 64 * MIB);
        assert_eq!(p.soft_limit_after(40 * MIB), 80 * MIB);
        assert_eq!(p.soft_limit_after(u64::MAX), u64::MAX);
    }
}

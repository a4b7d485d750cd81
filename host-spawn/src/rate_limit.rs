//! [`RateLimit`]: how often a sandbox reports refused spawns, so that a guest looping on
//! denied requests cannot flood a terminal or fill a disk with audit records.

use std::time::{Duration, Instant};

/// At most `burst` reports per `window`; the rest are counted and summarised.
///
/// A fixed window: the first event opens it, and the next event after it has passed opens
/// the next one. The count of what was suppressed is handed to the first event let through
/// after the window ([`Verdict::Report`]), or taken with [`RateLimit::take_suppressed`] when
/// the reporter is done (at exit).
///
/// Defaults ([`RateLimit::default`]): 20 reports per 10 seconds.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use wrt_host_spawn::{RateLimit, Verdict};
///
/// let mut limit = RateLimit::new(2, Duration::from_secs(10));
/// let t = Instant::now();
/// assert_eq!(limit.check(t), Verdict::Report { suppressed_before: 0 });
/// assert_eq!(limit.check(t), Verdict::Report { suppressed_before: 0 });
/// assert_eq!(limit.check(t), Verdict::Suppress);
/// assert_eq!(limit.check(t + Duration::from_secs(10)), Verdict::Report { suppressed_before: 1 });
/// assert_eq!(limit.take_suppressed(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct RateLimit {
    burst: u32,
    window: Duration,
    opened: Option<Instant>,
    reported: u32,
    suppressed: u64,
}

/// What to do with one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Report it; first report that `suppressed_before` earlier events were not reported.
    Report {
        /// Events suppressed since the last report.
        suppressed_before: u64,
    },
    /// Do not report it (it is counted).
    Suppress,
}

impl Default for RateLimit {
    fn default() -> Self {
        Self::new(20, Duration::from_secs(10))
    }
}

impl RateLimit {
    /// At most `burst` reports per `window`. A `burst` of 0 suppresses everything.
    pub fn new(burst: u32, window: Duration) -> Self {
        Self { burst, window, opened: None, reported: 0, suppressed: 0 }
    }

    /// Decides about an event that happened at `now`.
    pub fn check(&mut self, now: Instant) -> Verdict {
        let expired = self.opened.is_none_or(|opened| now.saturating_duration_since(opened) >= self.window);
        if expired {
            self.opened = Some(now);
            self.reported = 0;
        }
        if self.reported < self.burst {
            self.reported += 1;
            Verdict::Report { suppressed_before: std::mem::take(&mut self.suppressed) }
        } else {
            self.suppressed += 1;
            Verdict::Suppress
        }
    }

    /// Events suppressed and not yet handed to a [`Verdict::Report`]; resets the count.
    pub fn take_suppressed(&mut self) -> u64 {
        std::mem::take(&mut self.suppressed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppresses_past_the_burst_and_counts() {
        let mut limit = RateLimit::new(3, Duration::from_secs(1));
        let t = Instant::now();
        let verdicts: Vec<_> = (0..10).map(|_| limit.check(t)).collect();
        assert!(verdicts[..3].iter().all(|v| *v == Verdict::Report { suppressed_before: 0 }));
        assert!(verdicts[3..].iter().all(|v| *v == Verdict::Suppress));
        assert_eq!(limit.take_suppressed(), 7);
        assert_eq!(limit.take_suppressed(), 0);
    }

    #[test]
    fn a_new_window_reports_the_count_once() {
        let mut limit = RateLimit::new(1, Duration::from_secs(1));
        let t = Instant::now();
        assert_eq!(limit.check(t), Verdict::Report { suppressed_before: 0 });
        assert_eq!(limit.check(t + Duration::from_millis(500)), Verdict::Suppress);
        assert_eq!(limit.check(t + Duration::from_millis(999)), Verdict::Suppress);
        assert_eq!(limit.check(t + Duration::from_secs(1)), Verdict::Report { suppressed_before: 2 });
        assert_eq!(limit.check(t + Duration::from_secs(1)), Verdict::Suppress);
        assert_eq!(limit.check(t + Duration::from_secs(5)), Verdict::Report { suppressed_before: 1 });
    }

    #[test]
    fn zero_burst_suppresses_everything() {
        let mut limit = RateLimit::new(0, Duration::from_secs(1));
        assert_eq!(limit.check(Instant::now()), Verdict::Suppress);
        assert_eq!(limit.take_suppressed(), 1);
    }
}

//! Timeout escalation: `SIGTERM` to the process group at the deadline, `SIGKILL` after the
//! grace period. The logic is written against two small traits so that it is unit-tested
//! with a mock process and a mock clock.

use std::io;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::outcome::ExitStatus;

/// Waits for the process-group leader to exit, without reaping it.
pub(crate) trait Wait {
    /// Blocks up to `timeout` (`None`: forever); `true` once the leader has exited.
    fn wait_exit(&mut self, timeout: Option<Duration>) -> io::Result<bool>;
}

/// Signals the whole process group.
pub(crate) trait Kill {
    fn kill_group(&mut self, signal: Signal) -> io::Result<()>;

    /// Whether `SIGTERM` would kill the leader outright now (its action is the default and it
    /// does not block it); `false` when that is not known.
    fn term_kills_leader(&mut self) -> bool;
}

/// The current time.
pub(crate) trait Clock {
    fn now(&self) -> Instant;
}

/// The real clock.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Running,
    Terminating { since: Instant },
    Killed,
}

/// A child's deadline and how far its termination has gone.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timer {
    deadline: Option<Instant>,
    grace: Duration,
    stage: Stage,
    /// Whether `SIGTERM` would have killed the leader outright when the timeout sent it.
    term_kills_leader: bool,
}

impl Timer {
    pub(crate) fn new(deadline: Option<Instant>, grace: Duration) -> Self {
        Self { deadline, grace, stage: Stage::Running, term_kills_leader: false }
    }

    /// Whether termination has started: the deadline passed while the leader was still
    /// running. A leader that had already exited when the deadline was checked is not timed
    /// out, however late its exit is collected.
    pub(crate) fn timed_out(&self) -> bool {
        self.stage != Stage::Running
    }

    /// Whether the timeout ended a leader that ended with `status`: termination started, and
    /// `status` is not an exit of the leader's own.
    ///
    /// A leader that exited normally although `SIGTERM` would have killed it outright was
    /// already exiting when the signal came (the kernel drops signals to a process on its way
    /// out, and the deadline's look saw it not yet exited): the timeout did not end it. A
    /// leader that catches, ignores or blocks `SIGTERM` may have exited because of it, and one
    /// killed by a signal after the deadline is taken to have been killed by the timeout's.
    pub(crate) fn ended(&self, status: ExitStatus) -> bool {
        self.timed_out() && !(status.code().is_some() && self.term_kills_leader)
    }

    /// When the next signal is due; `None` if no more are.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        match self.stage {
            Stage::Running => self.deadline,
            Stage::Terminating { since } => Some(since + self.grace),
            Stage::Killed => None,
        }
    }

    /// Sends whatever signal is due at `now`, without blocking.
    ///
    /// At the deadline it first looks (without blocking or reaping) whether the leader has
    /// already exited: then the timeout did not end it, nothing is sent, and the deadline is
    /// disarmed.
    pub(crate) fn poll<P: Kill + Wait>(&mut self, process: &mut P, now: Instant) -> io::Result<()> {
        match self.stage {
            Stage::Running if self.deadline.is_some_and(|d| now >= d) && process.wait_exit(Some(Duration::ZERO))? => {
                self.deadline = None;
            }
            // The stage advances even when a signal fails (EPERM for a child that changed its
            // uid): an error is reported once, and the timer never stalls on it.
            Stage::Running if self.deadline.is_some_and(|d| now >= d) => {
                self.stage = Stage::Terminating { since: now };
                self.term_kills_leader = process.term_kills_leader();
                let term = process.kill_group(Signal::SIGTERM);
                // A stopped process only acts on SIGTERM once continued.
                let cont = process.kill_group(Signal::SIGCONT);
                term.and(cont)?;
            }
            Stage::Terminating { since } if now >= since + self.grace => {
                self.stage = Stage::Killed;
                process.kill_group(Signal::SIGKILL)?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Blocks until the leader exits or `until` passes, sending the timer's signals on the way.
/// Returns whether the leader exited.
pub(crate) fn wait_until<P: Wait + Kill>(
    process: &mut P,
    timer: &mut Timer,
    clock: &impl Clock,
    until: Option<Instant>,
) -> io::Result<bool> {
    loop {
        let now = clock.now();
        timer.poll(process, now)?;
        if until.is_some_and(|u| now >= u) {
            // One last look without blocking.
            return process.wait_exit(Some(Duration::ZERO));
        }
        let due = match (timer.next_due(), until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if process.wait_exit(due.map(|d| d.saturating_duration_since(now)))? {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A clock that only moves when the mock process "sleeps".
    struct MockClock(Cell<Instant>);

    impl Clock for MockClock {
        fn now(&self) -> Instant {
            self.0.get()
        }
    }

    /// A process that exits on its own at `exits_at`, on SIGTERM if `honours_term`, and
    /// always on SIGKILL.
    struct MockProcess<'c> {
        clock: &'c MockClock,
        exits_at: Option<Instant>,
        honours_term: bool,
        signals: Vec<(Signal, Instant)>,
    }

    impl Wait for MockProcess<'_> {
        fn wait_exit(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
            let now = self.clock.now();
            match (self.exits_at, timeout) {
                (Some(exit), _) if exit <= now => Ok(true),
                (Some(exit), None) => {
                    self.clock.0.set(exit);
                    Ok(true)
                }
                (Some(exit), Some(t)) if exit <= now + t => {
                    self.clock.0.set(exit);
                    Ok(true)
                }
                (_, Some(t)) => {
                    self.clock.0.set(now + t);
                    Ok(false)
                }
                (None, None) => panic!("waiting forever for a process that never exits"),
            }
        }
    }

    impl Kill for MockProcess<'_> {
        fn kill_group(&mut self, signal: Signal) -> io::Result<()> {
            let now = self.clock.now();
            self.signals.push((signal, now));
            let dies = signal == Signal::SIGKILL || (signal == Signal::SIGTERM && self.honours_term);
            if dies && self.exits_at.is_none_or(|e| e > now) {
                self.exits_at = Some(now + Duration::from_millis(1));
            }
            Ok(())
        }

        fn term_kills_leader(&mut self) -> bool {
            self.honours_term
        }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// A process every signal fails for (EPERM: it changed its uid).
    struct Unsignallable(Vec<Signal>);

    impl Wait for Unsignallable {
        fn wait_exit(&mut self, _: Option<Duration>) -> io::Result<bool> {
            Ok(false)
        }
    }

    impl Kill for Unsignallable {
        fn kill_group(&mut self, signal: Signal) -> io::Result<()> {
            self.0.push(signal);
            Err(io::Error::from_raw_os_error(libc::EPERM))
        }

        fn term_kills_leader(&mut self) -> bool {
            false
        }
    }

    /// A leader still running when the deadline looks, whose `SIGTERM` would kill it outright
    /// or not (`term_kills`); what it then ends with is up to each test.
    struct AtTheDeadline {
        term_kills: bool,
    }

    impl Wait for AtTheDeadline {
        fn wait_exit(&mut self, _: Option<Duration>) -> io::Result<bool> {
            Ok(false)
        }
    }

    impl Kill for AtTheDeadline {
        fn kill_group(&mut self, _: Signal) -> io::Result<()> {
            Ok(())
        }

        fn term_kills_leader(&mut self) -> bool {
            self.term_kills
        }
    }

    /// The timer of a leader that the deadline found running and sent `SIGTERM`.
    fn terminated(term_kills: bool) -> Timer {
        let start = Instant::now();
        let mut timer = Timer::new(Some(start + secs(1)), secs(2));
        timer.poll(&mut AtTheDeadline { term_kills }, start + secs(1)).unwrap();
        assert!(timer.timed_out());
        timer
    }

    #[test]
    fn a_normal_exit_that_sigterm_would_have_prevented_is_not_ended_by_the_timeout() {
        // `true` exiting as its deadline came: the SIGTERM reached a process already on its way
        // out, and was dropped.
        let timer = terminated(true);
        assert!(!timer.ended(ExitStatus::Exited(0)));
        assert!(timer.ended(ExitStatus::Signaled { signal: libc::SIGTERM, core_dumped: false }));
        assert!(timer.ended(ExitStatus::Signaled { signal: libc::SIGKILL, core_dumped: false }));
    }

    #[test]
    fn a_normal_exit_of_a_leader_that_handles_sigterm_is_ended_by_the_timeout() {
        // A handler that cleans up and exits (`trap 'exit 3' TERM`), or a shell whose job the
        // signal killed: the exit may be the timeout's doing.
        let timer = terminated(false);
        assert!(timer.ended(ExitStatus::Exited(3)));
        assert!(timer.ended(ExitStatus::Signaled { signal: libc::SIGKILL, core_dumped: false }));
    }

    #[test]
    fn no_timeout_ends_nothing() {
        let timer = Timer::new(None, secs(2));
        assert!(!timer.ended(ExitStatus::Exited(0)));
        assert!(!timer.ended(ExitStatus::Signaled { signal: libc::SIGTERM, core_dumped: false }));
    }

    #[test]
    fn a_failing_signal_does_not_stall_the_timer() {
        let start = Instant::now();
        let mut p = Unsignallable(vec![]);
        let mut timer = Timer::new(Some(start + secs(1)), secs(2));
        assert!(timer.poll(&mut p, start + secs(1)).is_err());
        assert!(timer.timed_out());
        // The next step is the kill after the grace, not SIGTERM again.
        assert_eq!(timer.next_due(), Some(start + secs(3)));
        assert!(timer.poll(&mut p, start + secs(2)).is_ok());
        assert!(timer.poll(&mut p, start + secs(3)).is_err());
        assert_eq!(timer.next_due(), None);
        assert!(timer.poll(&mut p, start + secs(9)).is_ok());
        assert_eq!(p.0, [Signal::SIGTERM, Signal::SIGCONT, Signal::SIGKILL]);
    }

    fn setup() -> (MockClock, Instant) {
        let start = Instant::now();
        (MockClock(Cell::new(start)), start)
    }

    #[test]
    fn exit_before_the_deadline_sends_nothing() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: Some(start + secs(1)), honours_term: true, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        assert!(p.signals.is_empty());
        assert!(!timer.timed_out());
        assert_eq!(clock.now(), start + secs(1));
    }

    /// A child that exited before its deadline, but whose exit is only collected after it, was
    /// reported as timed out.
    #[test]
    fn an_exit_collected_after_the_deadline_is_not_a_timeout() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: Some(start + secs(1)), honours_term: true, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(2)), secs(2));
        clock.0.set(start + secs(5));
        timer.poll(&mut p, start + secs(5)).unwrap();
        assert!(p.signals.is_empty());
        assert!(!timer.timed_out());
        assert_eq!(timer.next_due(), None, "the deadline is disarmed");
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        assert!(p.signals.is_empty());
        assert!(!timer.timed_out());
    }

    #[test]
    fn term_at_the_deadline_and_no_kill_if_it_dies() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: None, honours_term: true, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        let sent: Vec<_> = p.signals.iter().map(|&(s, _)| s).collect();
        assert_eq!(sent, [Signal::SIGTERM, Signal::SIGCONT]);
        assert_eq!(p.signals[0].1, start + secs(10));
        assert!(timer.timed_out());
    }

    #[test]
    fn kill_after_the_grace_period_if_term_is_ignored() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: None, honours_term: false, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        assert_eq!(
            p.signals,
            [
                (Signal::SIGTERM, start + secs(10)),
                (Signal::SIGCONT, start + secs(10)),
                (Signal::SIGKILL, start + secs(12)),
            ]
        );
    }

    #[test]
    fn a_shorter_wait_returns_without_signals() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: None, honours_term: true, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        assert!(!wait_until(&mut p, &mut timer, &clock, Some(start + secs(3))).unwrap());
        assert!(p.signals.is_empty());
        assert_eq!(clock.now(), start + secs(3));
    }

    #[test]
    fn no_deadline_waits_for_the_exit() {
        let (clock, start) = setup();
        let mut p =
            MockProcess { clock: &clock, exits_at: Some(start + secs(3600)), honours_term: true, signals: vec![] };
        let mut timer = Timer::new(None, secs(2));
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        assert!(p.signals.is_empty());
    }

    #[test]
    fn polling_escalates_step_by_step() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: None, honours_term: false, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        let mut poll_at = |p: &mut MockProcess<'_>, at: u64| {
            clock.0.set(start + secs(at));
            timer.poll(p, start + secs(at)).unwrap();
            timer.next_due()
        };
        poll_at(&mut p, 9);
        assert!(p.signals.is_empty());
        assert_eq!(poll_at(&mut p, 10), Some(start + secs(12)));
        assert_eq!(p.signals.len(), 2);
        poll_at(&mut p, 11);
        assert_eq!(p.signals.len(), 2);
        assert_eq!(poll_at(&mut p, 12), None);
        assert_eq!(p.signals.last(), Some(&(Signal::SIGKILL, start + secs(12))));
        poll_at(&mut p, 100);
        assert_eq!(p.signals.len(), 3, "nothing more after SIGKILL");
    }

    #[test]
    fn a_wait_ending_mid_grace_resumes_the_escalation_later() {
        let (clock, start) = setup();
        let mut p = MockProcess { clock: &clock, exits_at: None, honours_term: false, signals: vec![] };
        let mut timer = Timer::new(Some(start + secs(10)), secs(2));
        assert!(!wait_until(&mut p, &mut timer, &clock, Some(start + secs(11))).unwrap());
        assert_eq!(p.signals.len(), 2);
        assert!(wait_until(&mut p, &mut timer, &clock, None).unwrap());
        assert_eq!(p.signals.last(), Some(&(Signal::SIGKILL, start + secs(12))));
    }
}

//! How a child ended: the WIT `status` record, as [`ExitStatus`].

use std::fmt;
use std::time::Duration;

use wrt_abi::status::{
    EXITED, FLAG_STDERR_TRUNCATED, FLAG_STDOUT_TRUNCATED, FLAG_TIMED_OUT, SIGNALED, StatusRecord, signal_name,
};

use crate::sys;

/// How a child ended, with what the host measured: like [`std::process::ExitStatus`], plus
/// the timeout and truncation flags, duration, peak memory and CPU times. The same type, with
/// the same `Display`, as the core-module SDK's (`wrt-guest`).
///
/// A child killed by its timeout ended by a signal (`SIGTERM`, or `SIGKILL` after the grace
/// period) or by its own exit after `SIGTERM`; [`timed_out`](Self::timed_out) tells which
/// children the host stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExitStatus(StatusRecord);

impl ExitStatus {
    pub(crate) fn from_wit(status: &sys::Status) -> Self {
        let (how, value) = match status.termination {
            sys::Termination::Exited(code) => (EXITED, code),
            sys::Termination::Signaled(signal) => (SIGNALED, i32::from(signal)),
        };
        let flag = |set: bool, flag: u32| if set { flag } else { 0 };
        Self(StatusRecord {
            how,
            value,
            flags: flag(status.timed_out, FLAG_TIMED_OUT)
                | flag(status.stdout_truncated, FLAG_STDOUT_TRUNCATED)
                | flag(status.stderr_truncated, FLAG_STDERR_TRUNCATED),
            duration_ns: status.duration_ns,
            peak_rss: status.peak_rss,
            user_ns: status.user_ns,
            system_ns: status.system_ns,
        })
    }

    /// Whether the child exited with code 0 (and was not stopped by its timeout).
    pub fn success(&self) -> bool {
        self.code() == Some(0) && !self.timed_out()
    }

    /// The exit code, if the child exited (rather than being killed by a signal).
    pub fn code(&self) -> Option<i32> {
        (self.0.how == EXITED).then_some(self.0.value)
    }

    /// The number of the signal that killed the child (a Linux signal number: 9 is `SIGKILL`,
    /// 15 `SIGTERM`), if one did.
    pub fn signal(&self) -> Option<i32> {
        (self.0.how == SIGNALED).then_some(self.0.value)
    }

    /// Whether the host stopped the child because its timeout passed: the command's, the
    /// policy's, or the time the sandbox itself has left.
    pub fn timed_out(&self) -> bool {
        self.0.flags & FLAG_TIMED_OUT != 0
    }

    /// Whether stdout passed its output limit (or, for [`Command::output`](crate::Command::output),
    /// the capture size) and the rest was dropped.
    pub fn stdout_truncated(&self) -> bool {
        self.0.flags & FLAG_STDOUT_TRUNCATED != 0
    }

    /// Whether stderr passed its output limit, or the capture size, and the rest was dropped.
    pub fn stderr_truncated(&self) -> bool {
        self.0.flags & FLAG_STDERR_TRUNCATED != 0
    }

    /// Wall-clock time from spawn to exit.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.0.duration_ns)
    }

    /// The child's peak resident set size, in bytes.
    pub fn peak_rss(&self) -> u64 {
        self.0.peak_rss
    }

    /// CPU time the child spent in user mode.
    pub fn user_time(&self) -> Duration {
        Duration::from_nanos(self.0.user_ns)
    }

    /// CPU time the child spent in the kernel.
    pub fn system_time(&self) -> Duration {
        Duration::from_nanos(self.0.system_ns)
    }
}

impl fmt::Display for ExitStatus {
    /// Like `std`'s: `exit status: 3`, `signal: 15 (SIGTERM)`, then `, timed out` when it did.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code(), self.signal()) {
            (Some(code), _) => write!(f, "exit status: {code}")?,
            (_, Some(signal)) => match signal_name(signal) {
                Some(name) => write!(f, "signal: {signal} ({name})")?,
                None => write!(f, "signal: {signal}")?,
            },
            _ => write!(f, "unknown status {} ({})", self.0.how, self.0.value)?,
        }
        if self.timed_out() {
            f.write_str(", timed out")?;
        }
        Ok(())
    }
}

/// What a finished child produced: its status and the output captured from its stdout and
/// stderr (empty for a stream that was not piped), like [`std::process::Output`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// How the child ended.
    pub status: ExitStatus,
    /// What the child wrote to stdout.
    pub stdout: Vec<u8>,
    /// What the child wrote to stderr.
    pub stderr: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(termination: sys::Termination, timed_out: bool, truncated: (bool, bool)) -> ExitStatus {
        ExitStatus::from_wit(&sys::Status {
            termination,
            timed_out,
            stdout_truncated: truncated.0,
            stderr_truncated: truncated.1,
            duration_ns: 1_500_000_000,
            peak_rss: 3 << 20,
            user_ns: 7_000,
            system_ns: 9_000,
        })
    }

    #[test]
    fn an_exit() {
        let exit = status(sys::Termination::Exited(3), false, (false, false));
        assert_eq!((exit.code(), exit.signal()), (Some(3), None));
        assert!(!exit.success() && !exit.timed_out() && !exit.stdout_truncated() && !exit.stderr_truncated());
        assert_eq!(exit.duration(), Duration::from_millis(1500));
        assert_eq!(exit.peak_rss(), 3 << 20);
        assert_eq!((exit.user_time(), exit.system_time()), (Duration::from_micros(7), Duration::from_micros(9)));
        assert_eq!(exit.to_string(), "exit status: 3");
        assert!(status(sys::Termination::Exited(0), false, (false, false)).success());
    }

    #[test]
    fn a_signal_and_the_flags() {
        let killed = status(sys::Termination::Signaled(15), true, (true, false));
        assert_eq!((killed.code(), killed.signal()), (None, Some(15)));
        assert!(killed.timed_out() && killed.stdout_truncated() && !killed.stderr_truncated());
        assert_eq!(killed.to_string(), "signal: 15 (SIGTERM), timed out");
        assert!(status(sys::Termination::Exited(0), false, (false, true)).stderr_truncated());
        assert_eq!(status(sys::Termination::Signaled(64), false, (false, false)).to_string(), "signal: 64");
        let timed_out = status(sys::Termination::Exited(0), true, (false, false));
        assert!(!timed_out.success());
        assert_eq!(timed_out.to_string(), "exit status: 0, timed out");
    }
}

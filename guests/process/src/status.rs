//! How a child ended: the WIT `status` record, as [`ExitStatus`].

use wrt_abi::status::{EXITED, FLAG_STDERR_TRUNCATED, FLAG_STDOUT_TRUNCATED, FLAG_TIMED_OUT, SIGNALED, StatusRecord};

use crate::sys;

/// How a child ended: the core-module SDK's type (`wrt_abi::status::ExitStatus`), with the
/// same `Display`.
pub use wrt_abi::status::ExitStatus;

/// The status of a WIT `status` record.
pub(crate) fn from_wit(status: &sys::Status) -> ExitStatus {
    let (how, value) = match status.termination {
        sys::Termination::Exited(code) => (EXITED, code),
        sys::Termination::Signaled(signal) => (SIGNALED, i32::from(signal)),
    };
    let flag = |set: bool, flag: u32| if set { flag } else { 0 };
    ExitStatus::from(StatusRecord {
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
    use std::time::Duration;

    use super::*;

    fn status(termination: sys::Termination, timed_out: bool, truncated: (bool, bool)) -> ExitStatus {
        from_wit(&sys::Status {
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

//! How a child ended: the ABI's status record, decoded.

use std::fmt;
use std::time::Duration;

use wrt_abi::status::{EXITED, FLAG_STDERR_TRUNCATED, FLAG_STDOUT_TRUNCATED, FLAG_TIMED_OUT, SIGNALED, StatusRecord};
pub(crate) use wrt_abi::status::{RUN_STATUS_LEN, STATUS_LEN};

/// How a child ended, with what the host measured: like [`std::process::ExitStatus`], plus
/// the timeout and truncation flags, duration, peak memory and CPU times.
///
/// A child killed by its timeout ended by a signal (`SIGTERM`, or `SIGKILL` after the grace
/// period) or by its own exit after `SIGTERM`; [`timed_out`](Self::timed_out) tells which
/// children the host stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExitStatus(StatusRecord);

impl ExitStatus {
    /// Decodes a status record (the first [`STATUS_LEN`] bytes of `record`).
    pub(crate) fn from_record(record: &[u8]) -> Self {
        Self(StatusRecord::decode(record.first_chunk().expect("a status record")))
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
    /// policy's, or the time the sandbox itself has left (a child never outlives the
    /// sandbox's `--timeout`).
    pub fn timed_out(&self) -> bool {
        self.0.flags & FLAG_TIMED_OUT != 0
    }

    /// Whether stdout passed its output limit, or (for [`Command::output`](crate::Command::output))
    /// the capture buffer, and the rest was dropped.
    pub fn stdout_truncated(&self) -> bool {
        self.0.flags & FLAG_STDOUT_TRUNCATED != 0
    }

    /// Whether stderr passed its output limit, or the capture buffer, and the rest was dropped.
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

/// The name of Linux signal `signal`.
fn signal_name(signal: i32) -> Option<&'static str> {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(signal).ok()?.checked_sub(1).and_then(|i| NAMES.get(i)).copied()
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

    fn record(how: u32, value: i32, flags: u32) -> [u8; RUN_STATUS_LEN] {
        let mut record = [0; RUN_STATUS_LEN];
        record[0..4].copy_from_slice(&how.to_le_bytes());
        record[4..8].copy_from_slice(&value.to_le_bytes());
        record[8..12].copy_from_slice(&flags.to_le_bytes());
        record[16..24].copy_from_slice(&1_500_000_000u64.to_le_bytes());
        record[24..32].copy_from_slice(&(3u64 << 20).to_le_bytes());
        record[32..40].copy_from_slice(&7_000u64.to_le_bytes());
        record[40..48].copy_from_slice(&9_000u64.to_le_bytes());
        record
    }

    #[test]
    fn decodes_an_exit() {
        let status = ExitStatus::from_record(&record(1, 3, 0));
        assert_eq!((status.code(), status.signal()), (Some(3), None));
        assert!(!status.success() && !status.timed_out());
        assert_eq!(status.duration(), Duration::from_millis(1500));
        assert_eq!(status.peak_rss(), 3 << 20);
        assert_eq!(status.user_time(), Duration::from_micros(7));
        assert_eq!(status.system_time(), Duration::from_micros(9));
        assert_eq!(status.to_string(), "exit status: 3");
        assert!(ExitStatus::from_record(&record(1, 0, 0)).success());
    }

    #[test]
    fn decodes_a_signal_and_flags() {
        let status = ExitStatus::from_record(&record(2, 15, 0b111));
        assert_eq!((status.code(), status.signal()), (None, Some(15)));
        assert!(status.timed_out() && status.stdout_truncated() && status.stderr_truncated());
        assert_eq!(status.to_string(), "signal: 15 (SIGTERM), timed out");
        let status = ExitStatus::from_record(&record(2, 9, 0b100));
        assert!(!status.timed_out() && !status.stdout_truncated() && status.stderr_truncated());
        assert_eq!(status.to_string(), "signal: 9 (SIGKILL)");
        assert_eq!(ExitStatus::from_record(&record(2, 64, 0)).to_string(), "signal: 64");
    }

    #[test]
    fn a_timed_out_exit_zero_is_not_success() {
        let status = ExitStatus::from_record(&record(1, 0, 1));
        assert!(!status.success());
        assert_eq!(status.to_string(), "exit status: 0, timed out");
    }

    #[test]
    fn unknown_endings_are_neither_code_nor_signal() {
        let status = ExitStatus::from_record(&record(7, 1, 0));
        assert_eq!((status.code(), status.signal(), status.success()), (None, None, false));
    }
}

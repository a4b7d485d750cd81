//! What happened to a child: [`ChildOutcome`], [`ExitStatus`], [`ResourceUsage`] and [`Output`].

use std::fmt;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::strategy::Strategy;
use crate::sys::RawExit;

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It called `exit` with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled {
        /// The signal number.
        signal: i32,
        /// Whether it dumped core.
        core_dumped: bool,
    },
}

impl ExitStatus {
    pub(crate) fn from_raw(status: i32) -> Self {
        if libc::WIFEXITED(status) {
            Self::Exited(libc::WEXITSTATUS(status))
        } else {
            Self::Signaled { signal: libc::WTERMSIG(status), core_dumped: libc::WCOREDUMP(status) }
        }
    }

    /// The exit code, if it exited.
    pub fn code(self) -> Option<i32> {
        match self {
            Self::Exited(code) => Some(code),
            Self::Signaled { .. } => None,
        }
    }

    /// The signal number, if a signal killed it.
    pub fn signal(self) -> Option<i32> {
        match self {
            Self::Exited(_) => None,
            Self::Signaled { signal, .. } => Some(signal),
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Exited(code) => write!(f, "exit code {code}"),
            Self::Signaled { signal, core_dumped } => {
                write!(f, "signal {signal}")?;
                if let Ok(name) = Signal::try_from(signal) {
                    write!(f, " ({name})")?;
                }
                if core_dumped {
                    f.write_str(" (core dumped)")?;
                }
                Ok(())
            }
        }
    }
}

/// Resource usage of a child and the descendants it waited for, from `wait4`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ResourceUsage {
    /// CPU time in user mode.
    pub user_time: Duration,
    /// CPU time in the kernel.
    pub system_time: Duration,
    /// The child's own peak resident set size in bytes, when it is known. `None` when the
    /// kernel's figure may be the memory of the process that started it: a child started with
    /// `vfork` (`posix_spawn`, the `vfork-exec` strategy) or `fork` carries the peak of that
    /// process's memory into its `execve`, and its figure is the larger of the two; so only a
    /// figure above the spawning process's own peak (by more than 8 MiB, the kernel's counters
    /// being approximate) is the child's. That peak is read when the child is reaped, so a
    /// child whose own peak lies between the spawning process's peak at its start and at its
    /// end is `None` too.
    pub max_rss: Option<u64>,
}

/// Whether a piped stream lost output to its limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Truncated {
    /// Stdout passed its limit.
    pub stdout: bool,
    /// Stderr passed its limit.
    pub stderr: bool,
}

impl Truncated {
    /// Whether either stream was truncated.
    pub fn any(self) -> bool {
        self.stdout || self.stderr
    }
}

/// The result of a reaped child.
///
/// Byte counts and truncation are as of the moment the child was reaped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChildOutcome {
    /// The child's pid (also its process group).
    pub pid: u32,
    /// Exit code or signal.
    pub status: ExitStatus,
    /// The timeout ended the child: it was still running at its deadline, and the timeout's
    /// signals (`SIGTERM`, then `SIGKILL` after the grace period, to its whole process group)
    /// ended it. A child that exited normally although `SIGTERM` would have killed it outright
    /// ended on its own (it was already exiting when the signal came) and is not timed out; one
    /// that catches, ignores or blocks `SIGTERM` and exits after the deadline is.
    pub timed_out: bool,
    /// Which piped streams lost output to their limit.
    pub truncated: Truncated,
    /// Bytes read from stdout (up to the limit).
    pub stdout_bytes: u64,
    /// Bytes read from stderr (up to the limit).
    pub stderr_bytes: u64,
    /// From the spawn until host-spawn saw the child exit.
    pub duration: Duration,
    /// CPU time and peak memory.
    pub rusage: ResourceUsage,
    /// How the child was created.
    pub strategy: Strategy,
}

/// How far a child's peak must exceed its spawner's to be its own: a child started with
/// `CLONE_VM` inherits the spawner's peak, and the kernel's resident-set counters are kept per
/// CPU and summed approximately, so the two figures of one peak can differ by some pages.
const PEAK_SLACK_KIB: u64 = 8 << 10;

/// Whether a child's `ru_maxrss`, `child_kib`, is its own: above its spawner's peak by more than
/// [`PEAK_SLACK_KIB`]. `started_kib` is at most the spawner's peak when the child started; a
/// figure above it is compared with the spawner's peak now (`getrusage`), which is at least the
/// peak then. So a figure is never taken for the child's when it may be the spawner's, and the
/// peak is asked for only when the figure may be the child's (a small child beside a large
/// spawner costs no system call). What this gives up: a child whose own peak lies between the
/// spawner's peak at its start and the spawner's peak at its end is reported as `None`.
fn is_own_peak(child_kib: u64, started_kib: u64) -> bool {
    let above = |peak: u64| child_kib > peak.saturating_add(PEAK_SLACK_KIB);
    above(started_kib) && above(crate::sys::own_peak_kib())
}

impl ChildOutcome {
    /// The outcome of `raw`, for a child started by a process whose own peak resident set
    /// size was at least `spawner_peak_kib` just after the start.
    pub(crate) fn from_raw(
        pid: u32,
        raw: RawExit,
        strategy: Strategy,
        duration: Duration,
        spawner_peak_kib: u64,
    ) -> Self {
        Self {
            pid,
            status: ExitStatus::from_raw(raw.status),
            timed_out: false,
            truncated: Truncated::default(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            duration,
            rusage: ResourceUsage {
                user_time: raw.user_time,
                system_time: raw.system_time,
                max_rss: is_own_peak(raw.max_rss_kib, spawner_peak_kib).then(|| raw.max_rss_kib.saturating_mul(1024)),
            },
            strategy,
        }
    }

    /// Exited with code 0, in time.
    pub fn success(&self) -> bool {
        self.status == ExitStatus::Exited(0) && !self.timed_out
    }
}

/// Everything a one-shot run produced: [`Spawner::output`](crate::Spawner::output) and
/// [`Child::communicate`](crate::Child::communicate).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Output {
    /// How it ended.
    pub outcome: ChildOutcome,
    /// Stdout, up to the output limit (empty unless piped).
    pub stdout: Vec<u8>,
    /// Stderr, up to the output limit (empty unless piped).
    pub stderr: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_status_words() {
        assert_eq!(ExitStatus::from_raw(0), ExitStatus::Exited(0));
        assert_eq!(ExitStatus::from_raw(3 << 8), ExitStatus::Exited(3));
        let killed = ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(killed, ExitStatus::Signaled { signal: libc::SIGKILL, core_dumped: false });
        assert_eq!(killed.to_string(), "signal 9 (SIGKILL)");
        assert_eq!(ExitStatus::from_raw(libc::SIGABRT | 0x80).to_string(), "signal 6 (SIGABRT) (core dumped)");
    }
}

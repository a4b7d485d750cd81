//! The status record `wait`, `wait_any` and `run` write (docs/abi.md, "Status record").
//!
//! ```text
//! 0 how u32 (1 exited, 2 signaled) | 4 value i32 (code or signal) | 8 flags u32 | 12 reserved u32
//! | 16 duration_ns u64 | 24 peak_rss u64 | 32 user_ns u64 | 40 system_ns u64
//! run only: | 48 stdout_len u32 | 52 stderr_len u32
//! ```

/// Size of the record `wait` and `wait_any` write.
pub const STATUS_LEN: usize = 48;
/// Size of the record `run` writes: the status plus the bytes written to each buffer.
pub const RUN_STATUS_LEN: usize = 56;

/// `how` of a child that exited; `value` is its exit code.
pub const EXITED: u32 = 1;
/// `how` of a child killed by a signal; `value` is the signal's number.
pub const SIGNALED: u32 = 2;

/// Flag: the host stopped the child because its timeout passed.
pub const FLAG_TIMED_OUT: u32 = 1 << 0;
/// Flag: stdout passed its output limit and the rest was dropped.
pub const FLAG_STDOUT_TRUNCATED: u32 = 1 << 1;
/// Flag: stderr passed its output limit and the rest was dropped.
pub const FLAG_STDERR_TRUNCATED: u32 = 1 << 2;

/// The fields of a status record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatusRecord {
    /// [`EXITED`] or [`SIGNALED`] (other values from a newer host).
    pub how: u32,
    /// The exit code or the signal's number.
    pub value: i32,
    /// `FLAG_*` bits.
    pub flags: u32,
    /// Wall-clock time from spawn to exit, in nanoseconds.
    pub duration_ns: u64,
    /// The child's own peak resident set size, in bytes; 0 when the host cannot tell it from
    /// the host's own (docs/abi.md, "Status record").
    pub peak_rss: u64,
    /// CPU time in user mode, in nanoseconds.
    pub user_ns: u64,
    /// CPU time in the kernel, in nanoseconds.
    pub system_ns: u64,
}

impl StatusRecord {
    /// The record's bytes.
    pub fn encode(&self) -> [u8; STATUS_LEN] {
        let mut out = [0u8; STATUS_LEN];
        out[0..4].copy_from_slice(&self.how.to_le_bytes());
        out[4..8].copy_from_slice(&self.value.to_le_bytes());
        out[8..12].copy_from_slice(&self.flags.to_le_bytes());
        out[16..24].copy_from_slice(&self.duration_ns.to_le_bytes());
        out[24..32].copy_from_slice(&self.peak_rss.to_le_bytes());
        out[32..40].copy_from_slice(&self.user_ns.to_le_bytes());
        out[40..48].copy_from_slice(&self.system_ns.to_le_bytes());
        out
    }

    /// Decodes the first [`STATUS_LEN`] bytes of a record (a `run` record starts with one).
    pub fn decode(record: &[u8; STATUS_LEN]) -> Self {
        let u32_at = |at: usize| u32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]]);
        let u64_at = |at: usize| u64::from(u32_at(at)) | u64::from(u32_at(at + 4)) << 32;
        Self {
            how: u32_at(0),
            value: u32_at(4) as i32,
            flags: u32_at(8),
            duration_ns: u64_at(16),
            peak_rss: u64_at(24),
            user_ns: u64_at(32),
            system_ns: u64_at(40),
        }
    }

    /// The record `run` writes: this status, then the bytes written to the stdout and stderr
    /// buffers.
    pub fn encode_run(&self, stdout_len: u32, stderr_len: u32) -> [u8; RUN_STATUS_LEN] {
        let mut out = [0u8; RUN_STATUS_LEN];
        out[..STATUS_LEN].copy_from_slice(&self.encode());
        out[48..52].copy_from_slice(&stdout_len.to_le_bytes());
        out[52..56].copy_from_slice(&stderr_len.to_le_bytes());
        out
    }
}

/// The status inside a `run` record.
pub fn run_status(record: &[u8; RUN_STATUS_LEN]) -> &[u8; STATUS_LEN] {
    record.first_chunk().expect("a run record starts with a status record")
}

/// The bytes `run` wrote to the stdout and stderr buffers, from its record.
pub fn run_lengths(record: &[u8; RUN_STATUS_LEN]) -> (u32, u32) {
    let at = |at: usize| u32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]]);
    (at(48), at(52))
}

/// How a child ended, with what the host measured (a [`StatusRecord`]), as both guest SDKs
/// (`wrt-guest`, `wrt-process`) give it: like `std::process::ExitStatus`, plus
/// the timeout and truncation flags, duration, peak memory and CPU times.
///
/// A child killed by its timeout ended by a signal (`SIGTERM`, or `SIGKILL` after the grace
/// period) or by its own exit after `SIGTERM`; [`timed_out`](Self::timed_out) tells which
/// children the host stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExitStatus(StatusRecord);

impl ExitStatus {
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

    /// Whether stdout passed its output limit, or (for the SDKs' `Command::output`) the capture
    /// buffer, and the rest was dropped.
    pub fn stdout_truncated(&self) -> bool {
        self.0.flags & FLAG_STDOUT_TRUNCATED != 0
    }

    /// Whether stderr passed its output limit, or the capture buffer, and the rest was dropped.
    pub fn stderr_truncated(&self) -> bool {
        self.0.flags & FLAG_STDERR_TRUNCATED != 0
    }

    /// Wall-clock time from spawn to exit.
    pub fn duration(&self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0.duration_ns)
    }

    /// The child's own peak resident set size, in bytes; 0 when the host cannot tell it from
    /// the host's own (docs/abi.md, "Status record").
    pub fn peak_rss(&self) -> u64 {
        self.0.peak_rss
    }

    /// CPU time the child spent in user mode.
    pub fn user_time(&self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0.user_ns)
    }

    /// CPU time the child spent in the kernel.
    pub fn system_time(&self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0.system_ns)
    }
}

impl core::fmt::Display for ExitStatus {
    /// Like `std`'s: `exit status: 3`, `signal: 15 (SIGTERM)`, then `, timed out` when it did.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
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

impl From<StatusRecord> for ExitStatus {
    fn from(record: StatusRecord) -> Self {
        Self(record)
    }
}

/// The name of the Linux signal `signal` (`15` is `"SIGTERM"`), or `None` outside 1 to 31.
pub fn signal_name(signal: i32) -> Option<&'static str> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_at_the_documented_offsets() {
        let status = StatusRecord {
            how: SIGNALED,
            value: -3,
            flags: FLAG_TIMED_OUT | FLAG_STDERR_TRUNCATED,
            duration_ns: 1 << 40,
            peak_rss: 3 << 20,
            user_ns: 7_000,
            system_ns: u64::MAX,
        };
        let run = status.encode_run(5, u32::MAX);
        assert_eq!(StatusRecord::decode(run_status(&run)), status);
        assert_eq!(run_lengths(&run), (5, u32::MAX));
        assert_eq!(run[0..4], 2u32.to_le_bytes());
        assert_eq!(run[4..8], (-3i32).to_le_bytes());
        assert_eq!(run[8..12], 5u32.to_le_bytes());
        assert_eq!(run[12..16], [0; 4]);
        assert_eq!(run[16..24], (1u64 << 40).to_le_bytes());
        assert_eq!(run[40..48], u64::MAX.to_le_bytes());
        assert_eq!(run[48..52], 5u32.to_le_bytes());
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(1), Some("SIGHUP"));
        assert_eq!(signal_name(9), Some("SIGKILL"));
        assert_eq!(signal_name(15), Some("SIGTERM"));
        assert_eq!(signal_name(31), Some("SIGSYS"));
        assert_eq!(signal_name(0), None);
        assert_eq!(signal_name(32), None);
        assert_eq!(signal_name(-9), None);
    }
}

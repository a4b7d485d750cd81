//! How a child ended: the ABI's status record, decoded.

pub use wrt_abi::status::ExitStatus;
use wrt_abi::status::StatusRecord;
pub(crate) use wrt_abi::status::{RUN_STATUS_LEN, STATUS_LEN};

/// Decodes a status record (the first [`STATUS_LEN`] bytes of `record`).
pub(crate) fn from_record(record: &[u8]) -> ExitStatus {
    ExitStatus::from(StatusRecord::decode(record.first_chunk().expect("a status record")))
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
        let status = from_record(&record(1, 3, 0));
        assert_eq!((status.code(), status.signal()), (Some(3), None));
        assert!(!status.success() && !status.timed_out());
        assert_eq!(status.duration(), Duration::from_millis(1500));
        assert_eq!(status.peak_rss(), 3 << 20);
        assert_eq!(status.user_time(), Duration::from_micros(7));
        assert_eq!(status.system_time(), Duration::from_micros(9));
        assert_eq!(status.to_string(), "exit status: 3");
        assert!(from_record(&record(1, 0, 0)).success());
    }

    #[test]
    fn decodes_a_signal_and_flags() {
        let status = from_record(&record(2, 15, 0b111));
        assert_eq!((status.code(), status.signal()), (None, Some(15)));
        assert!(status.timed_out() && status.stdout_truncated() && status.stderr_truncated());
        assert_eq!(status.to_string(), "signal: 15 (SIGTERM), timed out");
        let status = from_record(&record(2, 9, 0b100));
        assert!(!status.timed_out() && !status.stdout_truncated() && status.stderr_truncated());
        assert_eq!(status.to_string(), "signal: 9 (SIGKILL)");
        assert_eq!(from_record(&record(2, 64, 0)).to_string(), "signal: 64");
    }

    #[test]
    fn a_timed_out_exit_zero_is_not_success() {
        let status = from_record(&record(1, 0, 1));
        assert!(!status.success());
        assert_eq!(status.to_string(), "exit status: 0, timed out");
    }

    #[test]
    fn unknown_endings_are_neither_code_nor_signal() {
        let status = from_record(&record(7, 1, 0));
        assert_eq!((status.code(), status.signal(), status.success()), (None, None, false));
    }
}

//! The status record `wait` and `run` write (docs/abi.md, "Status record").

use wrt_host_spawn::{ExitStatus, Outcome};

/// Size of the record `wait` writes.
pub(crate) const STATUS_LEN: usize = 48;
/// Size of the record `run` writes.
pub(crate) const RUN_STATUS_LEN: usize = 56;

/// Encodes the first 48 bytes of the record.
pub(crate) fn encode(outcome: &Outcome) -> [u8; STATUS_LEN] {
    let mut out = [0u8; STATUS_LEN];
    let (state, value) = match outcome.status {
        ExitStatus::Exited(code) => (1u32, code),
        ExitStatus::Signaled { signal, .. } => (2u32, signal),
    };
    let flags = u32::from(outcome.timed_out)
        | u32::from(outcome.truncated.stdout) << 1
        | u32::from(outcome.truncated.stderr) << 2;
    let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    out[0..4].copy_from_slice(&state.to_le_bytes());
    out[4..8].copy_from_slice(&value.to_le_bytes());
    out[8..12].copy_from_slice(&flags.to_le_bytes());
    out[16..24].copy_from_slice(&nanos(outcome.duration).to_le_bytes());
    out[24..32].copy_from_slice(&outcome.rusage.max_rss.to_le_bytes());
    out[32..40].copy_from_slice(&nanos(outcome.rusage.user_time).to_le_bytes());
    out[40..48].copy_from_slice(&nanos(outcome.rusage.system_time).to_le_bytes());
    out
}

/// Encodes the record `run` writes: the status plus the bytes written to each buffer.
pub(crate) fn encode_run(outcome: &Outcome, stdout_len: u32, stderr_len: u32) -> [u8; RUN_STATUS_LEN] {
    let mut out = [0u8; RUN_STATUS_LEN];
    out[..STATUS_LEN].copy_from_slice(&encode(outcome));
    out[48..52].copy_from_slice(&stdout_len.to_le_bytes());
    out[52..56].copy_from_slice(&stderr_len.to_le_bytes());
    out
}

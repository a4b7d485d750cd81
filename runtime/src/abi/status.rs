//! The status record `wait` and `run` write (docs/abi.md, "Status record"), from a host-spawn
//! [`ChildOutcome`]; the layout is `wrt-abi`'s.

use wrt_abi::status::{
    EXITED, FLAG_STDERR_TRUNCATED, FLAG_STDOUT_TRUNCATED, FLAG_TIMED_OUT, RUN_STATUS_LEN, SIGNALED, STATUS_LEN,
    StatusRecord,
};
use wrt_host_spawn::{ChildOutcome, ExitStatus};

/// The record of `outcome`.
fn record(outcome: &ChildOutcome) -> StatusRecord {
    let (how, value) = match outcome.status {
        ExitStatus::Exited(code) => (EXITED, code),
        ExitStatus::Signaled { signal, .. } => (SIGNALED, signal),
    };
    let flag = |set: bool, bit: u32| if set { bit } else { 0 };
    let flags = flag(outcome.timed_out, FLAG_TIMED_OUT)
        | flag(outcome.truncated.stdout, FLAG_STDOUT_TRUNCATED)
        | flag(outcome.truncated.stderr, FLAG_STDERR_TRUNCATED);
    let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    StatusRecord {
        how,
        value,
        flags,
        duration_ns: nanos(outcome.duration),
        peak_rss: outcome.rusage.max_rss.unwrap_or(0),
        user_ns: nanos(outcome.rusage.user_time),
        system_ns: nanos(outcome.rusage.system_time),
    }
}

/// Encodes the record `wait` and `wait_any` write.
pub(crate) fn encode(outcome: &ChildOutcome) -> [u8; STATUS_LEN] {
    record(outcome).encode()
}

/// Encodes the record `run` writes: the status plus the bytes written to each buffer.
pub(crate) fn encode_run(outcome: &ChildOutcome, stdout_len: u32, stderr_len: u32) -> [u8; RUN_STATUS_LEN] {
    record(outcome).encode_run(stdout_len, stderr_len)
}

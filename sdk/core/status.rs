//! How a child ended, [`ExitStatus`], and what it produced, [`Output`].
//!
//! Shared by both SDKs (`sdk/core/`): each transport decodes its host's status (the
//! `wrt_v1` status record, or the WIT `status` record) into the same `ExitStatus`.

/// How a child ended: the ABI crate's type (`wrt_abi::status::ExitStatus`), the same for both
/// SDKs, with the same `Display`.
pub use wrt_abi::status::ExitStatus;

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

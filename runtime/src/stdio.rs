//! Where a guest's standard streams go.

/// The guest's standard input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestStdin {
    /// End of file at once.
    #[default]
    Null,
    /// The host process's standard input.
    Inherit,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
}

/// The guest's standard output or error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestOutput {
    /// Written to the host process's stream.
    #[default]
    Inherit,
    /// Discarded.
    Null,
    /// Kept in memory and returned in the run's report ([`crate::Report::stdout`]). Past
    /// `limit` bytes nothing more is kept: the write that crosses the limit keeps what fits and
    /// reports a short count, every later write fails with an I/O error (WASI `EIO`; the guest
    /// is not trapped, though a guest that treats a failed print as fatal may stop), and the
    /// report says the stream was truncated ([`crate::Report::stdout_truncated`]).
    Capture {
        /// The most bytes kept.
        limit: usize,
    },
}

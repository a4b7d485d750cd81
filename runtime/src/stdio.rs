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
    /// Kept in memory and returned in the run's report. A guest that writes more than `limit`
    /// bytes traps.
    Capture {
        /// The most bytes kept.
        limit: usize,
    },
}

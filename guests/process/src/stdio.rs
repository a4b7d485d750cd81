//! What a child's stdin, stdout or stderr is connected to: [`Stdio`].

use crate::sys;

/// What a child's standard stream is connected to, like [`std::process::Stdio`].
///
/// `inherit` hands the child the sandbox's own stream (what `wrt` itself was given), not a
/// pipe to the guest; when the embedder captured or discarded that stream, the host connects
/// the child's to null. Pipelines are [`Child::pipe_into`](crate::Child::pipe_into).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stdio(pub(crate) sys::Stdio);

impl Stdio {
    /// A pipe between the guest and the child: [`Child::stdin`](crate::Child::stdin),
    /// [`stdout`](crate::Child::stdout) or [`stderr`](crate::Child::stderr).
    pub fn piped() -> Self {
        Self(sys::Stdio::Piped)
    }

    /// The sandbox's own stream, or null when the embedder captures or discards it.
    pub fn inherit() -> Self {
        Self(sys::Stdio::Inherit)
    }

    /// Nothing: end of file for stdin, output discarded.
    pub fn null() -> Self {
        Self(sys::Stdio::Null)
    }

    /// For stderr only: the same as the child's stdout (`2>&1`). The spawn fails with
    /// `InvalidInput` if it is given for stdin or stdout.
    pub fn merge_with_stdout() -> Self {
        Self(sys::Stdio::MergeWithStdout)
    }

    /// A pseudo-terminal: every stream given `pty()` is the same terminal, the child's
    /// controlling terminal in a session of its own. The guest reads it through
    /// [`Child::stdout`](crate::Child::stdout) and writes it through
    /// [`Child::stdin`](crate::Child::stdin); [`Child::pty_resize`](crate::Child::pty_resize)
    /// changes its size.
    pub fn pty() -> Self {
        Self(sys::Stdio::Pty)
    }

    /// Whether the guest holds an end of the stream: a pipe, or a pseudo-terminal's master.
    pub(crate) fn is_piped(self) -> bool {
        matches!(self.0, sys::Stdio::Piped | sys::Stdio::Pty)
    }

    pub(crate) fn is_pty(self) -> bool {
        self.0 == sys::Stdio::Pty
    }

    pub(crate) fn is_inherit(self) -> bool {
        self.0 == sys::Stdio::Inherit
    }
}

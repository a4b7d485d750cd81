//! What a child's stdin, stdout or stderr is connected to.

use wrt_abi::request::StdioMode as Mode;

/// What a child's standard stream is connected to, like [`std::process::Stdio`].
///
/// `inherit` hands the child the sandbox's own stream (what `wrt` itself was given), not a
/// pipe to the guest. When the embedder captured or discarded that stream instead, the host
/// connects the child's to null, so a child never writes around the embedder's capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stdio(Mode);

impl Stdio {
    /// A pipe between the guest and the child: [`Child::stdin`](crate::Child::stdin),
    /// [`stdout`](crate::Child::stdout) or [`stderr`](crate::Child::stderr).
    pub fn piped() -> Self {
        Self(Mode::Piped)
    }

    /// The sandbox's own stream (the one `wrt` was started with), or null when the embedder
    /// captures or discards it.
    pub fn inherit() -> Self {
        Self(Mode::Inherit)
    }

    /// Nothing: end of file for stdin, output discarded.
    pub fn null() -> Self {
        Self(Mode::Null)
    }

    pub(crate) fn is_piped(self) -> bool {
        self.0 == Mode::Piped
    }

    pub(crate) fn is_inherit(self) -> bool {
        self.0 == Mode::Inherit
    }

    /// The mode's byte in the spawn request.
    #[cfg(test)]
    pub(crate) fn raw(self) -> u8 {
        self.0.raw()
    }

    /// The mode as the spawn request encodes it.
    pub(crate) fn mode(self) -> Mode {
        self.0
    }
}

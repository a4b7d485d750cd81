//! What a child's stdin, stdout or stderr is connected to: [`Stdio`].
//!
//! Shared by both SDKs (`sdk/core/`).

use wrt_abi::request::StdioMode as Mode;

use crate::child::ChildStdout;
use crate::transport::ChildHandle;

/// What a child's standard stream is connected to, like [`std::process::Stdio`].
///
/// `inherit` hands the child the sandbox's own stream (what `wrt` itself was given), not a
/// pipe to the guest. When the embedder captured or discarded that stream instead, the host
/// connects the child's to null, so a child never writes around the embedder's capture.
///
/// A pipeline connects one child's stdout to the next one's stdin with
/// `Stdio::from(child.stdout.take().unwrap())`, or with
/// [`Child::pipe_into`](crate::Child::pipe_into): the host joins the two children with that
/// pipe, so the bytes never pass through the guest.
///
/// # Examples
///
/// ```no_run
#[doc = concat!("use ", env!("CARGO_CRATE_NAME"), "::{Command, Stdio};")]
///
/// // printf 'b\na\n' | sort
/// let mut first = Command::new("printf").arg("b\\na\\n").stdout(Stdio::piped()).spawn()?;
/// let sorted = Command::new("sort").stdin(Stdio::from(first.stdout.take().unwrap())).output()?;
/// assert_eq!(sorted.stdout, b"a\nb\n");
/// assert!(first.wait()?.success());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Stdio {
    mode: Mode,
    /// For [`Mode::ChildStdout`]: the child whose stdout becomes stdin. Holding it keeps the
    /// child known to the host until the request is sent.
    source: Option<ChildHandle>,
}

impl Stdio {
    const fn of(mode: Mode) -> Self {
        Self { mode, source: None }
    }

    /// A pipe between the guest and the child: [`Child::stdin`](crate::Child::stdin),
    /// [`stdout`](crate::Child::stdout) or [`stderr`](crate::Child::stderr).
    pub fn piped() -> Self {
        Self::of(Mode::Piped)
    }

    /// The sandbox's own stream (the one `wrt` was started with), or null when the embedder
    /// captures or discards it.
    pub fn inherit() -> Self {
        Self::of(Mode::Inherit)
    }

    /// Nothing: end of file for stdin, output discarded.
    pub fn null() -> Self {
        Self::of(Mode::Null)
    }

    /// For stderr only: the same as the child's stdout (`2>&1`), whatever stdout is connected
    /// to; the child's output on both streams arrives in order on one. The spawn fails with
    /// `InvalidInput` if it is given for stdin or stdout.
    pub fn merge_with_stdout() -> Self {
        Self::of(Mode::Stdout)
    }

    /// A pseudo-terminal: every stream given `pty()` is the same terminal, which becomes the
    /// child's controlling terminal in a session of its own. The guest reads what the child
    /// writes to it through [`Child::stdout`](crate::Child::stdout) (or `stderr`, when only
    /// stderr is a terminal) and writes what it reads through
    /// [`Child::stdin`](crate::Child::stdin); [`Child::pty_resize`](crate::Child::pty_resize)
    /// changes its size. The terminal echoes input and ends lines with `\r\n`; closing stdin
    /// does not end the child's input (write `\x04`).
    pub fn pty() -> Self {
        Self::of(Mode::Pty)
    }

    /// Whether the guest holds an end of the stream: a pipe, or a pseudo-terminal's master.
    pub(crate) fn is_piped(&self) -> bool {
        matches!(self.mode, Mode::Piped | Mode::Pty)
    }

    pub(crate) fn is_pty(&self) -> bool {
        self.mode == Mode::Pty
    }

    pub(crate) fn is_inherit(&self) -> bool {
        self.mode == Mode::Inherit
    }

    /// The mode, as the core ABI's spawn request encodes it.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The stdout of the child `source`, as stdin of the next (a pipeline stage).
    pub(crate) fn stdout_of(source: ChildHandle) -> Self {
        Self { mode: Mode::ChildStdout, source: Some(source) }
    }

    /// The child whose stdout this is, for a pipeline.
    pub(crate) fn source(&self) -> Option<&ChildHandle> {
        self.source.as_ref()
    }
}

/// The stdout of another child, as stdin of the next (a pipeline stage): the host connects the
/// two children with that pipe, and the first child's stdout can no longer be read by the
/// guest. If the spawn fails, the pipe stays with the first child.
///
/// # Platform-specific behavior
///
/// On `wasm32-wasip2` the stdout must not have been read by the guest yet: a first read takes
/// its `wasi:io` stream into the guest, and dropping the stream closes the pipe.
impl From<ChildStdout> for Stdio {
    fn from(stdout: ChildStdout) -> Self {
        Self::stdout_of(stdout.into_handle())
    }
}

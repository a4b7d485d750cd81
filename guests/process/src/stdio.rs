//! What a child's stdin, stdout or stderr is connected to: [`Stdio`].

use std::rc::Rc;

use crate::child::ChildStdout;
use crate::sys;

/// What a child's standard stream is connected to, like [`std::process::Stdio`].
///
/// `inherit` hands the child the sandbox's own stream (what `wrt` itself was given), not a
/// pipe to the guest; when the embedder captured or discarded that stream, the host connects
/// the child's to null.
///
/// A pipeline connects one child's stdout to the next one's stdin with
/// `Stdio::from(child.stdout.take().unwrap())` (as in the core-module SDK), or with
/// [`Child::pipe_into`](crate::Child::pipe_into): the host joins the two children, so the bytes
/// never pass through the guest.
///
/// # Examples
///
/// ```no_run
/// use wrt_process::{Command, Stdio};
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
    mode: sys::Stdio,
    /// For the stdout of another child: that child, whose `pipe-into` spawns this one.
    source: Option<Rc<sys::Child>>,
}

impl Stdio {
    const fn of(mode: sys::Stdio) -> Self {
        Self { mode, source: None }
    }

    /// A pipe between the guest and the child: [`Child::stdin`](crate::Child::stdin),
    /// [`stdout`](crate::Child::stdout) or [`stderr`](crate::Child::stderr).
    pub fn piped() -> Self {
        Self::of(sys::Stdio::Piped)
    }

    /// The sandbox's own stream, or null when the embedder captures or discards it.
    pub fn inherit() -> Self {
        Self::of(sys::Stdio::Inherit)
    }

    /// Nothing: end of file for stdin, output discarded.
    pub fn null() -> Self {
        Self::of(sys::Stdio::Null)
    }

    /// For stderr only: the same as the child's stdout (`2>&1`). The spawn fails with
    /// `InvalidInput` if it is given for stdin or stdout.
    pub fn merge_with_stdout() -> Self {
        Self::of(sys::Stdio::MergeWithStdout)
    }

    /// A pseudo-terminal: every stream given `pty()` is the same terminal, the child's
    /// controlling terminal in a session of its own. The guest reads it through
    /// [`Child::stdout`](crate::Child::stdout) and writes it through
    /// [`Child::stdin`](crate::Child::stdin); [`Child::pty_resize`](crate::Child::pty_resize)
    /// changes its size.
    pub fn pty() -> Self {
        Self::of(sys::Stdio::Pty)
    }

    /// Whether the guest holds an end of the stream: a pipe, or a pseudo-terminal's master.
    pub(crate) fn is_piped(&self) -> bool {
        matches!(self.mode, sys::Stdio::Piped | sys::Stdio::Pty)
    }

    pub(crate) fn is_pty(&self) -> bool {
        self.mode == sys::Stdio::Pty
    }

    pub(crate) fn is_inherit(&self) -> bool {
        self.mode == sys::Stdio::Inherit
    }

    /// The mode in the WIT `command` record.
    pub(crate) fn mode(&self) -> sys::Stdio {
        self.mode
    }

    /// The child whose stdout this is, for a pipeline.
    pub(crate) fn source(&self) -> Option<&sys::Child> {
        self.source.as_deref()
    }
}

/// The stdout of another child, as stdin of the next (a pipeline stage): the host connects the
/// two children with that pipe (`pipe-into`), and the first child's stdout can no longer be read
/// by the guest. Its stdout must not have been read by the guest.
impl From<ChildStdout> for Stdio {
    fn from(stdout: ChildStdout) -> Self {
        // The mode is ignored: the host connects stdin to the source.
        Self { mode: sys::Stdio::Null, source: Some(stdout.into_child()) }
    }
}

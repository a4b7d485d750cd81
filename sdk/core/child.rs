//! A running (or finished) host program: [`Child`].
//!
//! Shared by both SDKs (`sdk/core/`). The pipes ([`ChildStdin`], [`ChildStdout`],
//! [`ChildStderr`]) and the loop of [`Child::communicate`] are each crate's own, since they
//! move bytes by different means: `wrt_v1`'s `read`, `write` and `poll`, or `wasi:io` streams
//! and pollables.

use std::io;
use std::time::Duration;

use wrt_abi::{ErrorCode, WrtError};

use crate::command::Command;
pub use crate::pipes::{ChildStderr, ChildStdin, ChildStdout};
use crate::status::{ExitStatus, Output};
use crate::stdio::Stdio;
use crate::transport::{self, ChildHandle};

/// SIGKILL, which [`Child::kill`] sends.
const SIGKILL: i32 = 9;

/// What [`communicate`](crate::communicate::communicate) read from stdout or stderr, and the
/// error that ended the stream early, if one did (reading past the output limit may fail; the
/// status decides whether that is an error).
pub(crate) type Collected = (Vec<u8>, Option<io::Error>);

/// A host program started by [`Command::spawn`], like [`std::process::Child`].
///
/// Its status stays available after it ends: [`wait`](Self::wait) can be called again. When the
/// `Child` and every pipe taken from it are dropped, the host kills the child (`SIGKILL` to its
/// process group) if it is still running and forgets it; when the guest ends, every child is
/// killed. Unlike `std`, dropping a `Child` therefore does not leave the program running.
///
/// # Examples
///
/// ```no_run
/// use std::io::{Read, Write};
#[doc = concat!("use ", env!("CARGO_CRATE_NAME"), "::{Command, Stdio};")]
///
/// let mut child = Command::new("tr").arg("a-z").arg("A-Z").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
/// child.stdin.take().unwrap().write_all(b"shout\n")?; // dropping stdin closes it
/// let mut upper = String::new();
/// child.stdout.as_mut().unwrap().read_to_string(&mut upper)?;
/// assert_eq!(upper, "SHOUT\n");
/// assert!(child.wait()?.success());
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Platform-specific behavior
///
/// On `wasm32-wasip1` the host knows the child by a `wrt_v1` handle, released when the last of
/// the `Child` and its pipes is dropped, and `Child::poll` waits for its pipes. On
/// `wasm32-wasip2` it is a `wrt:process` `child` resource, and `Child::subscribe` gives a
/// `wasi:io` pollable that is ready once it has ended.
#[derive(Debug)]
pub struct Child {
    /// The child's stdin, if it was piped. Dropping it closes the pipe.
    pub stdin: Option<ChildStdin>,
    /// The child's stdout, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The child's stderr, if it was piped.
    pub stderr: Option<ChildStderr>,
    handle: ChildHandle,
}

impl Child {
    /// The child `handle`, spawned with these streams.
    pub(crate) fn new(handle: ChildHandle, stdin: &Stdio, stdout: &Stdio, stderr: &Stdio) -> Self {
        // A terminal on both stdout and stderr is read once, as stdout.
        let stderr_read = stderr.is_piped() && !(stderr.is_pty() && stdout.is_pty());
        Self {
            stdin: stdin.is_piped().then(|| ChildStdin::new(handle.clone())),
            stdout: stdout.is_piped().then(|| ChildStdout::new(handle.clone())),
            stderr: stderr_read.then(|| ChildStderr::new(handle.clone())),
            handle,
        }
    }

    pub(crate) fn handle(&self) -> &ChildHandle {
        &self.handle
    }

    /// The child's number: its process id on the host, or its handle where the host does not
    /// tell the process id.
    ///
    /// # Platform-specific behavior
    ///
    /// On `wasm32-wasip1` the `wrt_v1` ABI does not tell the guest the host's process id: this is
    /// the child's handle, unique for the sandbox's lifetime. On `wasm32-wasip2` it is the
    /// process id (`child.id`).
    pub fn id(&self) -> u32 {
        transport::id(&self.handle)
    }

    /// Sets the window size of the child's pseudo-terminal ([`Stdio::pty`]); the child gets
    /// `SIGWINCH`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`InvalidArgument`](ErrorCode::InvalidArgument)) for 0 rows or columns;
    /// [`NotPiped`](ErrorCode::NotPiped) if no stream of the child is a terminal.
    pub fn pty_resize(&mut self, rows: u16, cols: u16) -> io::Result<()> {
        transport::pty_resize(&self.handle, rows, cols)
    }

    /// Closes stdin (if it is still here), then waits for the child to end, as
    /// [`std::process::Child::wait`] does.
    ///
    /// Output the guest has not read stays readable. Waiting is bounded by the sandbox's own
    /// `--timeout`, which stops the whole guest.
    ///
    /// # Errors
    ///
    /// An error if the host call fails.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        // Without a timeout the host answers with a status (or stops the guest at the
        // sandbox's deadline); a TIMEOUT here would be a host bug, reported as an error.
        transport::wait(&self.handle, None)?.ok_or_else(|| {
            WrtError::new(ErrorCode::Timeout, format!("wait for child {} without a timeout timed out", self.id()))
                .into()
        })
    }

    /// Waits up to `timeout` for the child to end: `Ok(None)` if it is still running (it is not
    /// touched). Stdin stays open. Rounded up to whole milliseconds.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        transport::wait(&self.handle, Some(timeout))
    }

    /// The status if the child has ended, `Ok(None)` if not, without waiting.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        transport::try_wait(&self.handle)
    }

    /// Kills the child with `SIGKILL` (sent to its process group). Killing a child that has
    /// already ended succeeds and does nothing.
    ///
    /// # Errors
    ///
    /// As [`signal`](Self::signal).
    pub fn kill(&mut self) -> io::Result<()> {
        self.signal(SIGKILL)
    }

    /// Sends the Linux signal `signal` (1–31; 15 is `SIGTERM`) to the child's process group.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`InvalidArgument`](ErrorCode::InvalidArgument)) for a signal number out
    /// of range; another error if the host call fails.
    pub fn signal(&mut self, signal: i32) -> io::Result<()> {
        transport::signal(&self.handle, signal)
    }

    /// Starts `cmd` with its stdin connected to this child's stdout (`this | cmd`): the host
    /// joins the two, so the bytes never pass through the guest. [`stdout`](Self::stdout)
    /// must be piped; it is taken if the spawn succeeds. `cmd`'s own stdin setting is ignored;
    /// its stdout and stderr default to inherited. The same as
    /// `cmd.stdin(Stdio::from(self.stdout.take().unwrap())).spawn()`, except that the stdout
    /// stays here when the spawn fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    #[doc = concat!("use ", env!("CARGO_CRATE_NAME"), "::{Command, Stdio};")]
    ///
    /// // printf 'b\na\n' | sort
    /// let mut first = Command::new("printf").arg("b\\na\\n").stdout(Stdio::piped()).spawn()?;
    /// let sorted = first.pipe_into(Command::new("sort").stdout(Stdio::piped()))?.wait_with_output()?;
    /// assert_eq!(sorted.stdout, b"a\nb\n");
    /// assert!(first.wait()?.success());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `BrokenPipe` ([`NotPiped`](ErrorCode::NotPiped)) if stdout is not piped here; otherwise
    /// as [`Command::spawn`] (on `wasm32-wasip2`, `NotPiped` too if the guest has read from
    /// stdout).
    pub fn pipe_into(&mut self, cmd: &mut Command) -> io::Result<Child> {
        if self.stdout.is_none() {
            let context = format!("cannot pipe the stdout of child {}", self.id());
            return Err(WrtError::new(ErrorCode::NotPiped, context).into());
        }
        let stdin = Stdio::stdout_of(self.handle.clone());
        let next = cmd.spawn_with(stdin, cmd.stdout_or(Stdio::inherit()), cmd.stderr_or(Stdio::inherit()))?;
        drop(self.stdout.take());
        Ok(next)
    }

    /// Closes stdin, reads stdout and stderr to their ends (whichever are piped and still
    /// here), then waits, as [`std::process::Child::wait_with_output`] does.
    ///
    /// Both pipes are served as data arrives, so a child that fills one while the guest waits
    /// on the other cannot deadlock. A stream that passes its output limit ends there, and the
    /// status says it was truncated.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait), or a failed read.
    pub fn wait_with_output(self) -> io::Result<Output> {
        self.communicate(&[])
    }

    /// Writes `input` to stdin while reading stdout and stderr, closes stdin, then waits and
    /// returns everything, like Python's `Popen.communicate`. If the child closes its stdin (or
    /// ends) before reading all of `input`, the rest is dropped, as it would be by a pipe.
    ///
    /// # Errors
    ///
    /// `BrokenPipe` (code [`NotPiped`](ErrorCode::NotPiped)) if `input` is not empty and stdin
    /// is not piped (or was taken); otherwise as [`wait_with_output`](Self::wait_with_output).
    pub fn communicate(mut self, input: &[u8]) -> io::Result<Output> {
        let stdin = self.stdin.take();
        if !input.is_empty() && stdin.is_none() {
            let context = format!("cannot write the input of child {}", self.id());
            return Err(WrtError::new(ErrorCode::NotPiped, context).into());
        }
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let [(stdout, stdout_failed), (stderr, stderr_failed)] =
            crate::communicate::communicate(&self.handle, stdin, input, stdout, stderr)?;
        let status = self.wait()?;
        // Reading past the output limit may fail by design; any other failed read is an error.
        for (failed, truncated) in
            [(stdout_failed, status.stdout_truncated()), (stderr_failed, status.stderr_truncated())]
        {
            if let Some(err) = failed.filter(|_| !truncated) {
                return Err(err);
            }
        }
        Ok(Output { status, stdout, stderr })
    }
}

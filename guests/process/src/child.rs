//! A running (or finished) host program: [`Child`].

mod communicate;
mod pipes;

use std::io;
use std::rc::Rc;
use std::time::Duration;

pub use self::pipes::{ChildStderr, ChildStdin, ChildStdout};
use crate::command::Command;
use crate::error::{ErrorCode, from_wit, is, local};
use crate::status::{ExitStatus, Output};
use crate::stdio::Stdio;
use crate::sys;

/// SIGKILL, which [`Child::kill`] sends.
const SIGKILL: u8 = 9;

/// A host program started by [`Command::spawn`], like [`std::process::Child`].
///
/// The child is a `wrt:process` `child` resource. Its status stays available after it ends:
/// [`wait`](Self::wait) can be called again. When the `Child` and every pipe taken from it
/// are dropped, the host kills the child (`SIGKILL` to its process group) if it is still
/// running and reaps it; when the guest ends, every child is killed. Unlike `std`, dropping a
/// `Child` therefore does not leave the program running.
///
/// # Examples
///
/// ```no_run
/// use std::io::{Read, Write};
/// use wrt_process::{Command, Stdio};
///
/// let mut child = Command::new("tr").arg("a-z").arg("A-Z").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
/// child.stdin.take().unwrap().write_all(b"shout\n")?; // dropping stdin closes it
/// let mut upper = String::new();
/// child.stdout.as_mut().unwrap().read_to_string(&mut upper)?;
/// assert_eq!(upper, "SHOUT\n");
/// assert!(child.wait()?.success());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Child {
    /// The child's stdin, if it was piped. Dropping it closes the pipe.
    pub stdin: Option<ChildStdin>,
    /// The child's stdout, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The child's stderr, if it was piped.
    pub stderr: Option<ChildStderr>,
    resource: Rc<sys::Child>,
}

impl Child {
    pub(crate) fn new(resource: sys::Child, stdin: &Stdio, stdout: &Stdio, stderr: &Stdio) -> Self {
        let resource = Rc::new(resource);
        // A terminal on both stdout and stderr is read once, as stdout.
        let stderr_read = stderr.is_piped() && !(stderr.is_pty() && stdout.is_pty());
        Self {
            stdin: stdin.is_piped().then(|| ChildStdin::new(resource.clone())),
            stdout: stdout.is_piped().then(|| ChildStdout::new(resource.clone())),
            stderr: stderr_read.then(|| ChildStderr::new(resource.clone())),
            resource,
        }
    }

    pub(crate) fn resource(&self) -> &sys::Child {
        &self.resource
    }

    /// The child's process id on the host.
    pub fn id(&self) -> u32 {
        self.resource.id()
    }

    /// Sets the window size of the child's pseudo-terminal ([`Stdio::pty`]); the child gets
    /// `SIGWINCH`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`InvalidArgument`](ErrorCode::InvalidArgument)) for 0 rows or columns;
    /// [`NotPiped`](ErrorCode::NotPiped) if no stream of the child is a terminal.
    pub fn pty_resize(&mut self, rows: u16, cols: u16) -> io::Result<()> {
        self.resource
            .pty_resize(rows, cols)
            .map_err(|e| from_wit(e, || format!("cannot resize the terminal of child {}", self.id())))
    }

    /// Closes stdin (if it is still here), then waits for the child to end, as
    /// [`std::process::Child::wait`] does. Output the guest has not read stays readable.
    ///
    /// # Errors
    ///
    /// An error if the host call fails.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        match self.resource.wait(None) {
            Ok(status) => Ok(crate::status::from_wit(&status)),
            Err(err) => Err(from_wit(err, || format!("cannot wait for child {}", self.id()))),
        }
    }

    /// Waits up to `timeout` for the child to end: `Ok(None)` if it is still running (it is not
    /// touched). Stdin stays open. Rounded up to whole milliseconds.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        match self.resource.wait(timeout_ms(Some(timeout))) {
            Ok(status) => Ok(Some(crate::status::from_wit(&status))),
            Err(err) if is(&err, ErrorCode::Timeout) => Ok(None),
            Err(err) => Err(from_wit(err, || format!("cannot wait for child {}", self.id()))),
        }
    }

    /// The status if the child has ended, `Ok(None)` if not, without waiting.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self.resource.try_wait() {
            Ok(status) => Ok(status.as_ref().map(crate::status::from_wit)),
            Err(err) => Err(from_wit(err, || format!("cannot wait for child {}", self.id()))),
        }
    }

    /// A pollable that is ready once the child has ended (`wasi:io/poll`), to wait for it
    /// together with streams or other children: `child.subscribe().block()` waits without
    /// reaping it.
    pub fn subscribe(&self) -> wasip2::io::poll::Pollable {
        self.resource.subscribe()
    }

    /// Kills the child with `SIGKILL` (sent to its process group). Killing a child that has
    /// already ended succeeds and does nothing.
    ///
    /// # Errors
    ///
    /// As [`signal`](Self::signal).
    pub fn kill(&mut self) -> io::Result<()> {
        self.signal(i32::from(SIGKILL))
    }

    /// Sends the Linux signal `signal` (1–31; 15 is `SIGTERM`) to the child's process group.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`InvalidArgument`](ErrorCode::InvalidArgument)) for a signal number out
    /// of range.
    pub fn signal(&mut self, signal: i32) -> io::Result<()> {
        let context = || format!("cannot send signal {signal} to child {}", self.id());
        // The WIT takes a u8: numbers it cannot carry are refused here, as the host would.
        let Ok(wit_signal) = u8::try_from(signal) else {
            return Err(local(ErrorCode::InvalidArgument, context()));
        };
        self.resource.kill(wit_signal).map_err(|e| from_wit(e, context))
    }

    /// Starts `cmd` with its stdin connected to this child's stdout (`this | cmd`): the host
    /// joins the two, so the bytes never pass through the guest. [`stdout`](Self::stdout)
    /// must be piped and not yet read; it is taken (if the spawn fails, it is put back).
    /// `cmd`'s own stdin setting is ignored; its stdout and stderr default to inherited.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wrt_process::{Command, Stdio};
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
    /// as [`Command::spawn`].
    pub fn pipe_into(&mut self, cmd: &mut Command) -> io::Result<Child> {
        let Some(stdout) = self.stdout.take() else {
            return Err(local(ErrorCode::NotPiped, format!("cannot pipe the stdout of child {}", self.id())));
        };
        let (out, err) = (cmd.stdout_or(Stdio::inherit()), cmd.stderr_or(Stdio::inherit()));
        let wit = cmd.to_wit(&Stdio::null(), &out, &err)?;
        match self.resource.pipe_into(&wit) {
            Ok(next) => Ok(Child::new(next, &Stdio::null(), &out, &err)),
            Err(e) => {
                self.stdout = Some(stdout);
                Err(from_wit(e, || cmd.context("spawn")))
            }
        }
    }

    /// Closes stdin, reads stdout and stderr to their ends (whichever are piped and still
    /// here), then waits, as [`std::process::Child::wait_with_output`] does. Both pipes are
    /// served as data arrives, so a child that fills one while the guest waits on the other
    /// cannot deadlock. A stream that passes its output limit ends there, and the status says
    /// it was truncated.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait), or a failed read.
    pub fn wait_with_output(self) -> io::Result<Output> {
        self.communicate(&[])
    }

    /// Writes `input` to stdin while reading stdout and stderr, closes stdin, then waits and
    /// returns everything. If the child closes its stdin (or ends) before reading all of
    /// `input`, the rest is dropped, as it would be by a pipe.
    ///
    /// # Errors
    ///
    /// `BrokenPipe` ([`NotPiped`](ErrorCode::NotPiped)) if `input` is not empty and stdin is
    /// not piped (or was taken); otherwise as [`wait_with_output`](Self::wait_with_output).
    pub fn communicate(mut self, input: &[u8]) -> io::Result<Output> {
        let stdin = self.stdin.take();
        if !input.is_empty() && stdin.is_none() {
            return Err(local(ErrorCode::NotPiped, format!("cannot write the input of child {}", self.id())));
        }
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let [(stdout, stdout_failed), (stderr, stderr_failed)] =
            communicate::communicate(stdin, input, stdout, stderr)?;
        let status = self.wait()?;
        // Reading past the output limit fails by design; any other failed read is an error.
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

/// `timeout` as the WIT's `timeout-ms`: rounded up to whole milliseconds.
pub(crate) fn timeout_ms(timeout: Option<Duration>) -> Option<u64> {
    timeout.map(|timeout| u64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_in_milliseconds() {
        assert_eq!(timeout_ms(None), None);
        assert_eq!(timeout_ms(Some(Duration::ZERO)), Some(0));
        assert_eq!(timeout_ms(Some(Duration::from_micros(1))), Some(1));
        assert_eq!(timeout_ms(Some(Duration::from_millis(1500))), Some(1500));
        assert_eq!(timeout_ms(Some(Duration::MAX)), Some(u64::MAX));
    }
}

//! A running (or finished) host program: [`Child`].

mod communicate;
mod pipes;

use std::io;
use std::sync::Arc;
use std::time::Duration;

pub use self::pipes::{ChildStderr, ChildStdin, ChildStdout};
use crate::error::{ErrorCode, WrtError, check};
use crate::events::Events;
use crate::handle::Handle;
use crate::status::{ExitStatus, Output, STATUS_LEN};
use crate::sys;

/// SIGKILL, which [`Child::kill`] sends.
const SIGKILL: i32 = 9;

/// A host program started by [`Command::spawn`](crate::Command::spawn), like
/// [`std::process::Child`].
///
/// The child is known to the host by a handle. The handle, and so the status, stays valid
/// after the child ends: [`wait`](Self::wait) can be called again. When the `Child` and every
/// pipe taken from it are dropped, the handle is released and the host kills the child
/// (`SIGKILL` to its process group) if it is still running; when the guest ends, every child
/// is killed. Unlike `std`, dropping a `Child` therefore does not leave the program running.
///
/// # Examples
///
/// ```no_run
/// use std::io::{Read, Write};
/// use wrt_guest::{Command, Stdio};
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
    handle: Arc<Handle>,
}

impl Child {
    pub(crate) fn new(handle: Handle, stdin: bool, stdout: bool, stderr: bool) -> Self {
        let handle = Arc::new(handle);
        Self {
            stdin: stdin.then(|| ChildStdin::new(handle.clone())),
            stdout: stdout.then(|| ChildStdout::new(handle.clone())),
            stderr: stderr.then(|| ChildStderr::new(handle.clone())),
            handle,
        }
    }

    /// The child's handle number. The ABI does not tell the guest the host's process id;
    /// handles are unique for the sandbox's lifetime.
    pub fn id(&self) -> u32 {
        self.handle.raw() as u32
    }

    pub(crate) fn raw_handle(&self) -> i32 {
        self.handle.raw()
    }

    /// Sets the window size of the child's pseudo-terminal ([`Stdio::pty`](crate::Stdio::pty));
    /// the child gets `SIGWINCH`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`InvalidArgument`](crate::ErrorCode::InvalidArgument)) for 0 rows or
    /// columns; [`NotPiped`](crate::ErrorCode::NotPiped) if no stream of the child is a
    /// terminal.
    pub fn pty_resize(&mut self, rows: u16, cols: u16) -> io::Result<()> {
        let ret = sys::pty_resize(self.handle.raw(), i32::from(rows), i32::from(cols));
        check(ret, || format!("cannot resize the terminal of child {}", self.id())).map(drop)
    }

    /// Closes stdin (if it is still here), then waits for the child to end, as
    /// [`std::process::Child::wait`] does.
    ///
    /// Output the guest has not read stays readable. Waiting is bounded by the sandbox's own
    /// `--timeout`, which stops the whole guest.
    ///
    /// # Errors
    ///
    /// An error if the host call fails (for example `InvalidInput` for a bad handle).
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        // Without a timeout the host answers with a status (or stops the guest at the
        // sandbox's deadline); a TIMEOUT here would be a host bug, reported as an error.
        self.wait_for(None)?.ok_or_else(|| {
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
        self.wait_for(Some(timeout))
    }

    /// The status if the child has ended, `Ok(None)` if not, without waiting.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_for(Some(Duration::ZERO))
    }

    fn wait_for(&self, timeout: Option<Duration>) -> io::Result<Option<ExitStatus>> {
        let mut record = [0; STATUS_LEN];
        let ret = sys::wait(self.handle.raw(), timeout_ms(timeout), &mut record);
        if ret == -ErrorCode::Timeout.raw() {
            return Ok(None);
        }
        check(ret, || format!("cannot wait for child {}", self.id()))?;
        Ok(Some(crate::status::from_record(&record)))
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
    /// `InvalidInput` for a signal number out of range or a bad handle.
    pub fn signal(&mut self, signal: i32) -> io::Result<()> {
        check(sys::kill(self.handle.raw(), signal), || format!("cannot send signal {signal} to child {}", self.id()))
            .map(drop)
    }

    /// Waits until one of `interest` is ready or `timeout` passes (`None`: no limit besides the
    /// sandbox's), and returns the ready subset: empty after the timeout. Events for streams
    /// that are not piped (or no longer: closed stdin) are ready at once, and
    /// [`EXITED`](Events::EXITED) stays ready once the child has ended.
    ///
    /// Use it with [`ChildStdin::try_write`], [`ChildStdout::try_read`] and
    /// [`ChildStderr::try_read`] to serve several pipes without blocking on one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::io::ErrorKind;
    /// use wrt_guest::{Command, Events, Stdio};
    ///
    /// let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    /// let (mut stdin, mut stdout) = (child.stdin.take(), child.stdout.take().unwrap());
    /// let (input, mut written, mut output, mut chunk) = (vec![7u8; 1 << 20], 0, Vec::new(), [0; 4096]);
    /// loop {
    ///     let interest = if stdin.is_some() { Events::STDIN | Events::STDOUT } else { Events::STDOUT };
    ///     let ready = child.poll(interest, None)?;
    ///     if let Some(pipe) = stdin.as_mut().filter(|_| ready.contains(Events::STDIN)) {
    ///         match pipe.try_write(&input[written..]) {
    ///             Ok(n) => written += n,
    ///             Err(e) if e.kind() == ErrorKind::WouldBlock => {}
    ///             Err(e) => return Err(e),
    ///         }
    ///         if written == input.len() {
    ///             stdin = None; // closes cat's stdin
    ///         }
    ///     }
    ///     if ready.contains(Events::STDOUT) {
    ///         match stdout.try_read(&mut chunk) {
    ///             Ok(0) => break,
    ///             Ok(n) => output.extend_from_slice(&chunk[..n]),
    ///             Err(e) if e.kind() == ErrorKind::WouldBlock => {}
    ///             Err(e) => return Err(e),
    ///         }
    ///     }
    /// }
    /// assert_eq!(output, input);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `interest` is empty; otherwise as [`wait`](Self::wait).
    pub fn poll(&self, interest: Events, timeout: Option<Duration>) -> io::Result<Events> {
        let ret = sys::poll(self.handle.raw(), interest.bits(), timeout_ms(timeout));
        let ready = check(ret, || format!("cannot poll child {}", self.id()))?;
        Ok(Events::from_bits_truncate(ready).intersection(interest))
    }

    /// Closes stdin, reads stdout and stderr to their ends (whichever are piped and still
    /// here), then waits, as [`std::process::Child::wait_with_output`] does.
    ///
    /// Both pipes are served as data arrives (with `poll` and non-blocking reads), so a child
    /// that fills one while the guest waits on the other cannot deadlock. A stream that passes
    /// its output limit ends there, and the status says it was truncated.
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
        let (stdout, stderr) = communicate::communicate(&self.handle, stdin, input, stdout, stderr)?;
        let status = self.wait()?;
        Ok(Output { status, stdout, stderr })
    }
}

/// `timeout` as the ABI's `timeout_ms`: rounded up to whole milliseconds, `-1` for none.
pub(crate) fn timeout_ms(timeout: Option<Duration>) -> i64 {
    match timeout {
        None => -1,
        Some(timeout) => i64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_in_milliseconds() {
        assert_eq!(timeout_ms(None), -1);
        assert_eq!(timeout_ms(Some(Duration::ZERO)), 0);
        assert_eq!(timeout_ms(Some(Duration::from_micros(1))), 1);
        assert_eq!(timeout_ms(Some(Duration::from_millis(1500))), 1500);
        assert_eq!(timeout_ms(Some(Duration::MAX)), i64::MAX);
    }
}

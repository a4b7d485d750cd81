//! [`Child::communicate`]: write stdin while reading stdout and stderr, with one `poll` loop.

use std::os::fd::AsFd;
use std::time::Instant;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};

use super::{Child, ReadStep};
use crate::command::Stream;
use crate::error::CommunicateError;
use crate::outcome::Output;
use crate::registry::poll_timeout;
use crate::sys::write_no_sigpipe;

/// Bytes read per `read` call.
const CHUNK: usize = 64 * 1024;

impl Child {
    /// Writes `input` to stdin (then closes it) while collecting stdout and stderr, then waits.
    ///
    /// One `poll` loop serves all three pipes, so large input and large output together never
    /// deadlock. Output past the limit is dropped and reported in
    /// [`ChildOutcome::truncated`](crate::ChildOutcome::truncated); the closed pipe usually ends the
    /// child with `SIGPIPE`. If the child stops reading stdin early, the rest of `input` is
    /// discarded; if stdin is not piped, `input` is ignored. Streams that are not piped give
    /// empty vectors. At the deadline the child is
    /// terminated and whatever it wrote until then is returned.
    ///
    /// The deadline also bounds the wait for end-of-file: once the child has exited, a process
    /// that left its process group (a `setsid` daemon) may still hold the pipes open; at the
    /// deadline the host closes its ends and returns what was read, with the child's own exit
    /// status (not timed out: the timeout did not end it). Without a timeout, it waits for
    /// end-of-file.
    ///
    /// # Errors
    ///
    /// [`CommunicateError::Io`] if `poll`, a read or a write fails (other than the child
    /// closing stdin); [`CommunicateError::Wait`] if waiting fails.
    pub fn communicate(&mut self, input: &[u8]) -> Result<Output, CommunicateError> {
        let pid = self.pid();
        let io_err = |source| CommunicateError::Io { pid, source };
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let mut buf = vec![0u8; CHUNK];
        let mut written = 0;
        if input.is_empty() {
            self.close_stdin();
        }
        // The timer forgets the deadline when it finds the child already exited there: kept
        // here, it still bounds the wait for end-of-file.
        let deadline = self.timeout.and_then(|timeout| self.started.checked_add(timeout));

        loop {
            self.drive_timer().map_err(io_err)?;
            if self.stdin.is_none() && !self.stdout.is_open() && !self.stderr.is_open() {
                break;
            }
            let past_deadline = deadline.is_some_and(|d| Instant::now() >= d);
            if (self.timer.timed_out() || past_deadline) && self.try_wait()?.is_some() {
                // Terminated, or exited with its output still held open at the deadline: take
                // what is buffered, and do not wait for end-of-file from processes that escaped
                // the group.
                self.drain(Stream::Stdout, &mut buf, &mut stdout).map_err(io_err)?;
                self.drain(Stream::Stderr, &mut buf, &mut stderr).map_err(io_err)?;
                self.close_stdin();
                self.stdout.close();
                self.stderr.close();
                break;
            }

            let wake = match (self.timer.next_due(), deadline.filter(|_| !past_deadline)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let timeout = wake.map(|at| at.saturating_duration_since(Instant::now()));
            let watch_exit = !self.leader_exited;
            if watch_exit {
                self.open_pidfd();
            }
            let (stdin_ready, stdout_ready, stderr_ready, exited) = {
                let mut fds = Vec::with_capacity(4);
                let mut slots = [None; 4];
                let sources = [
                    (self.stdin.as_ref().map(AsFd::as_fd), PollFlags::POLLOUT),
                    (self.stdout.fd(), PollFlags::POLLIN),
                    (self.stderr.fd(), PollFlags::POLLIN),
                    (self.pidfd.as_ref().filter(|_| watch_exit).map(AsFd::as_fd), PollFlags::POLLIN),
                ];
                for (slot, (fd, events)) in slots.iter_mut().zip(sources) {
                    if let Some(fd) = fd {
                        *slot = Some(fds.len());
                        fds.push(PollFd::new(fd, events));
                    }
                }
                match poll(&mut fds, poll_timeout(timeout)) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(errno) => return Err(io_err(errno.into())),
                }
                let ready = |slot: Option<usize>| slot.and_then(|i| fds[i].revents()).is_some_and(|r| !r.is_empty());
                (ready(slots[0]), ready(slots[1]), ready(slots[2]), ready(slots[3]))
            };

            if stdin_ready && let Some(fd) = &self.stdin {
                match write_no_sigpipe(fd.as_fd(), &input[written..]) {
                    Ok(n) => written += n,
                    Err(Errno::EAGAIN) => {}
                    // The child stopped reading; the rest of the input is not wanted.
                    Err(Errno::EPIPE) => written = input.len(),
                    Err(errno) => return Err(io_err(errno.into())),
                }
                if written == input.len() {
                    self.close_stdin();
                }
            }
            if stdout_ready {
                self.drain(Stream::Stdout, &mut buf, &mut stdout).map_err(io_err)?;
            }
            if stderr_ready {
                self.drain(Stream::Stderr, &mut buf, &mut stderr).map_err(io_err)?;
            }
            if exited {
                self.on_leader_exit();
            }
        }

        let outcome = self.wait()?;
        Ok(Output { outcome, stdout, stderr })
    }

    /// Reads what `stream` has now into `out` (a bounded number of chunks, for fairness).
    fn drain(&mut self, stream: Stream, buf: &mut [u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        for _ in 0..16 {
            match self.reader(stream).try_read(buf)? {
                ReadStep::Data(n) => out.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        Ok(())
    }
}

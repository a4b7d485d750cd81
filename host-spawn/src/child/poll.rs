//! [`Child::poll`]: wait until a pipe is ready or the child has ended.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};

use super::Child;
use crate::error::PollError;
use crate::registry::poll_timeout;

/// A set of a child's events: what [`Child::poll`] waits for, and what it found ready.
///
/// Default: the empty set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Interest {
    /// Stdin accepts a write without blocking (or the write would fail at once).
    pub stdin: bool,
    /// Stdout has data or end-of-file (or a read would fail at once).
    pub stdout: bool,
    /// Stderr has data or end-of-file (or a read would fail at once).
    pub stderr: bool,
    /// The child has ended: [`Child::wait`] will not block.
    pub exit: bool,
}

impl Interest {
    /// Whether no event is in the set.
    pub fn is_empty(self) -> bool {
        self == Self::default()
    }
}

/// How long to sleep between `waitid` checks when there is no pidfd (Linux < 5.3).
const EXIT_CHECK: Duration = Duration::from_millis(10);

impl Child {
    /// Whether the host's end of stdin is open (stdin was piped and not closed).
    pub fn has_stdin(&self) -> bool {
        self.stdin.is_some()
    }

    /// Waits until one of the events in `interest` is ready, or `timeout` passes (`None`:
    /// no limit); returns the ready subset, empty when the timeout passed.
    ///
    /// An empty `interest` returns at once. A stream that is not piped, closed, at end-of-file
    /// or past its limit is ready at once (an operation on it returns without blocking). Like
    /// every call on a `Child`, it drives the timeout: the child's deadline sends `SIGTERM` and
    /// `SIGKILL` while it waits. It does not reap the child; `exit` says [`Child::wait`] will
    /// return at once.
    ///
    /// # Errors
    ///
    /// [`PollError::Io`] if `poll`, `waitid` or `kill` fails.
    pub fn poll(&mut self, interest: Interest, timeout: Option<Duration>) -> Result<Interest, PollError> {
        let pid = self.pid();
        let io_err = |source| PollError::Io { pid, source };
        if interest.is_empty() {
            return Ok(Interest::default());
        }
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        loop {
            self.drive_timer().map_err(io_err)?;
            let mut ready = Interest {
                stdin: interest.stdin && self.stdin.is_none(),
                stdout: interest.stdout && !self.stdout.is_open(),
                stderr: interest.stderr && !self.stderr.is_open(),
                exit: interest.exit && (self.outcome.is_some() || self.leader_exited),
            };
            let now = Instant::now();
            let due = match (self.timer.next_due(), until) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let watch_exit = interest.exit && !ready.exit;
            if watch_exit {
                self.open_pidfd();
            }
            let pidfd = self.pidfd.as_ref().filter(|_| watch_exit).map(AsFd::as_fd);
            let mut wait =
                if ready.is_empty() { due.map(|d| d.saturating_duration_since(now)) } else { Some(Duration::ZERO) };
            if watch_exit && pidfd.is_none() {
                wait = Some(wait.map_or(EXIT_CHECK, |w| w.min(EXIT_CHECK)));
            }

            let (stdin, stdout, stderr, exited) = {
                let sources = [
                    (self.stdin.as_ref().filter(|_| interest.stdin).map(AsFd::as_fd), PollFlags::POLLOUT),
                    (self.stdout.fd().filter(|_| interest.stdout), PollFlags::POLLIN),
                    (self.stderr.fd().filter(|_| interest.stderr), PollFlags::POLLIN),
                    (pidfd, PollFlags::POLLIN),
                ];
                let mut fds = Vec::with_capacity(4);
                let mut slots = [None; 4];
                for (slot, (fd, events)) in slots.iter_mut().zip(sources) {
                    if let Some(fd) = fd {
                        *slot = Some(fds.len());
                        fds.push(PollFd::new(fd, events));
                    }
                }
                match poll(&mut fds, poll_timeout(wait)) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(errno) => return Err(io_err(errno.into())),
                }
                let hit = |slot: Option<usize>| slot.and_then(|i| fds[i].revents()).is_some_and(|r| !r.is_empty());
                (hit(slots[0]), hit(slots[1]), hit(slots[2]), hit(slots[3]))
            };
            ready.stdin |= stdin;
            ready.stdout |= stdout;
            ready.stderr |= stderr;
            let exited =
                exited || (watch_exit && self.pidfd.is_none() && crate::registry::is_zombie(self.pid) == Ok(true));
            if exited {
                self.on_leader_exit();
                ready.exit = true;
            }
            if !ready.is_empty() {
                return Ok(ready);
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return Ok(Interest::default());
            }
        }
    }
}

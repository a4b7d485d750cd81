//! Waiting for any of a child's pipes, or its exit, to be ready: [`Child::poll`].

use std::io;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};

use super::Child;
use crate::registry::poll_timeout;

/// Events of a [`Child`] to wait for with [`Child::poll`], and the ones that are ready.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interest {
    /// Stdin can take bytes (or writing would fail at once: closed, not piped, broken).
    pub stdin: bool,
    /// Stdout has bytes or end of file (or reading would fail at once).
    pub stdout: bool,
    /// Stderr has bytes or end of file (or reading would fail at once).
    pub stderr: bool,
    /// The child has exited.
    pub exit: bool,
}

impl Interest {
    /// Whether no event is set.
    pub fn is_empty(self) -> bool {
        self == Self::default()
    }

    fn and(self, other: Self) -> Self {
        Self {
            stdin: self.stdin && other.stdin,
            stdout: self.stdout && other.stdout,
            stderr: self.stderr && other.stderr,
            exit: self.exit && other.exit,
        }
    }
}

/// How long to sleep between exit checks on kernels without pidfds.
const NO_PIDFD_SLICE: Duration = Duration::from_millis(5);

impl Child {
    /// Whether the host still holds the write end of the child's stdin.
    pub fn has_stdin(&self) -> bool {
        self.stdin.is_some()
    }

    /// Blocks until one of the `interest` events is ready or `timeout` passes (`None`: no
    /// limit; the child's own deadline still applies and is driven meanwhile). Returns the
    /// ready subset of `interest`, empty when the timeout passed.
    ///
    /// A stream that is not piped, or already at end of file, closed or over its limit, is
    /// ready at once: the next operation on it returns without blocking.
    ///
    /// # Errors
    ///
    /// `poll` or `kill` failing.
    pub fn poll(&mut self, interest: Interest, timeout: Option<Duration>) -> io::Result<Interest> {
        let until = timeout.map(|t| Instant::now() + t);
        loop {
            self.drive_timer()?;
            let ready = self.poll_once(interest, until)?;
            if !ready.is_empty() || until.is_some_and(|u| Instant::now() >= u) {
                return Ok(ready);
            }
        }
    }

    /// One `poll(2)` up to the earlier of `until` and the next timeout step.
    fn poll_once(&mut self, interest: Interest, until: Option<Instant>) -> io::Result<Interest> {
        if interest.exit && self.leader_exited {
            return Ok(Interest { exit: true, ..Interest::default() });
        }
        // Streams that cannot block are ready without a system call.
        let immediate = Interest {
            stdin: self.stdin.is_none(),
            stdout: !self.stdout.is_open(),
            stderr: !self.stderr.is_open(),
            exit: false,
        }
        .and(interest);
        if !immediate.is_empty() {
            return Ok(immediate);
        }
        let pidfd = if self.leader_exited { None } else { self.pidfd.as_ref().map(AsFd::as_fd) };
        let mut wait = [until, self.timer.next_due()].into_iter().flatten().min();
        if interest.exit && pidfd.is_none() {
            wait = Some(wait.map_or(Instant::now() + NO_PIDFD_SLICE, |w| w.min(Instant::now() + NO_PIDFD_SLICE)));
        }
        let timeout = wait.map(|w| w.saturating_duration_since(Instant::now()));
        let mut fds = Vec::with_capacity(4);
        let mut slots = [None; 4];
        if interest.stdin
            && let Some(fd) = &self.stdin
        {
            slots[0] = Some(fds.len());
            fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLOUT));
        }
        if interest.stdout
            && let Some(fd) = self.stdout.fd()
        {
            slots[1] = Some(fds.len());
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
        }
        if interest.stderr
            && let Some(fd) = self.stderr.fd()
        {
            slots[2] = Some(fds.len());
            fds.push(PollFd::new(fd, PollFlags::POLLIN));
        }
        if let Some(pidfd) = pidfd {
            // Always watched: the leader's exit also ends the group, whatever the interest.
            slots[3] = Some(fds.len());
            fds.push(PollFd::new(pidfd, PollFlags::POLLIN));
        }
        match poll(&mut fds, poll_timeout(timeout)) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno.into()),
        }
        let fired = |slot: Option<usize>| slot.is_some_and(|i| fds[i].revents().is_some_and(|r| !r.is_empty()));
        let mut ready =
            Interest { stdin: fired(slots[0]), stdout: fired(slots[1]), stderr: fired(slots[2]), exit: false };
        let leader_exited = fired(slots[3]);
        drop(fds);
        if leader_exited {
            self.on_leader_exit();
        }
        ready.exit = interest.exit && (self.leader_exited || (pidfd_missing(self) && self.try_wait_exited()?));
        Ok(ready.and(interest))
    }

    /// Without a pidfd: reaps the child if it has exited (the outcome is kept).
    fn try_wait_exited(&mut self) -> io::Result<bool> {
        self.try_wait().map(|o| o.is_some()).map_err(io::Error::other)
    }
}

fn pidfd_missing(child: &Child) -> bool {
    child.pidfd.is_none()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Interest;
    use crate::{Command, Policy, Spawner, Stdio};

    #[test]
    fn poll_reports_output_exit_and_timeouts() {
        let spawner = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap();
        let mut child = spawner
            .spawn(
                Command::new("sh").args(["-c", "read x; echo out; sleep 0.2"]).stdin(Stdio::Piped).stdout(Stdio::Piped),
            )
            .unwrap();
        let out = Interest { stdout: true, ..Interest::default() };
        // Nothing to read before the child gets its line.
        assert!(child.poll(out, Some(Duration::from_millis(50))).unwrap().is_empty());
        let writable = child.poll(Interest { stdin: true, ..Interest::default() }, None).unwrap();
        assert!(writable.stdin);
        child.write_stdin(b"go\n").unwrap();
        assert_eq!(child.poll(out, Some(Duration::from_secs(10))).unwrap(), out);
        let exit = Interest { exit: true, ..Interest::default() };
        assert_eq!(child.poll(exit, Some(Duration::from_secs(10))).unwrap(), exit);
        assert!(child.wait().unwrap().success());
        // Not piped: ready at once.
        let err = Interest { stderr: true, ..Interest::default() };
        assert_eq!(child.poll(err, Some(Duration::ZERO)).unwrap(), err);
    }
}

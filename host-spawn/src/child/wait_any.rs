//! Waiting for the first of several children to exit: [`wait_any`].

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, poll};

use super::Child;
use crate::error::WaitError;
use crate::outcome::ChildOutcome;
use crate::registry::poll_timeout;

/// How long to sleep between exit checks when a child has no pidfd (Linux < 5.3).
const NO_PIDFD_SLICE: Duration = Duration::from_millis(5);

/// Blocks until one of `children` has exited, or `timeout` passes (`None`: no limit), and
/// returns its index and outcome (reaping it), or `None` at the timeout. A child reaped
/// earlier is reported at once. The children's own deadlines are driven meanwhile.
///
/// # Errors
///
/// As [`Child::try_wait`], or `poll` failing.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use wrt_host_spawn::{Command, Policy, Spawner, wait_any};
///
/// let spawner = Spawner::new(Policy::deny_all().allow_program("sleep"))?;
/// let mut slow = spawner.spawn(Command::new("sleep").arg("2"))?;
/// let mut fast = spawner.spawn(Command::new("sleep").arg("0.1"))?;
/// let (index, outcome) = wait_any(&mut [&mut slow, &mut fast], Some(Duration::from_secs(5)))?.unwrap();
/// assert_eq!(index, 1);
/// assert!(outcome.success());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wait_any(
    children: &mut [&mut Child],
    timeout: Option<Duration>,
) -> Result<Option<(usize, ChildOutcome)>, WaitError> {
    let until = timeout.and_then(|t| Instant::now().checked_add(t));
    loop {
        for (index, child) in children.iter_mut().enumerate() {
            if let Some(outcome) = child.try_wait()? {
                return Ok(Some((index, outcome)));
            }
        }
        let now = Instant::now();
        if until.is_some_and(|u| now >= u) {
            return Ok(None);
        }
        let mut wake = until;
        for child in children.iter_mut() {
            child.open_pidfd();
        }
        let mut fds = Vec::with_capacity(children.len());
        for child in children.iter() {
            wake = [wake, child.timer.next_due()].into_iter().flatten().min();
            match (&child.pidfd, child.leader_exited) {
                (Some(pidfd), false) => fds.push(PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)),
                // Exited but not yet reapable, or no pidfd: look again soon.
                _ => wake = Some(wake.map_or(now + NO_PIDFD_SLICE, |w| w.min(now + NO_PIDFD_SLICE))),
            }
        }
        let pid = children.first().map_or(0, |c| c.pid());
        match poll(&mut fds, poll_timeout(wake.map(|w| w.saturating_duration_since(Instant::now())))) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(errno) => return Err(WaitError::Io { pid, source: errno.into() }),
        }
    }
}

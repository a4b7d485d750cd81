//! A child's `inherit` stream when the guest's own stream is captured: the child writes into a
//! pipe, and a host thread copies what it writes into the same capture as the guest's writes,
//! as a shell user expects of `cmd` inside a captured script.
//!
//! Bytes past the capture's limit are read and dropped (so the child never blocks on a full
//! pipe) and mark the stream truncated. A drain ends when every writer of its pipe is gone: the
//! child and whatever inherited the pipe from it, all of which end with the guest. Waiting for
//! a child (`wait`, `wait_any`) also waits for its drains (up to [`FINISH_WITHIN`]), so what the
//! guest writes after a child ended comes after everything the child wrote; the end of a run
//! waits for every drain the same way, so the report holds it all.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;

use crate::capture::Capture;

/// How long a wait (or the end of a run) waits for drains whose child has ended: a
/// descendant that escaped containment (a changed uid) or that the child left running may hold
/// the pipe open, and its later bytes arrive when they arrive.
pub(crate) const FINISH_WITHIN: Duration = Duration::from_secs(1);

/// Whether one drain reached the end of its pipe.
#[derive(Debug, Clone, Default)]
pub(crate) struct Drain(Arc<(Mutex<bool>, Condvar)>);

impl Drain {
    fn done(&self) {
        let (done, ended) = &*self.0;
        *done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        ended.notify_all();
    }

    /// Waits until the drain is done or `until` passes.
    pub(crate) fn finish(&self, until: Instant) {
        let (done, ended) = &*self.0;
        let mut finished = done.lock().unwrap_or_else(PoisonError::into_inner);
        while !*finished {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            finished = ended.wait_timeout(finished, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// Every drain of one guest.
#[derive(Debug, Default)]
pub(crate) struct Drains(Vec<Drain>);

impl Drains {
    /// A pipe whose bytes go into `capture`: returns the write end, for the child, and the
    /// drain, for whoever waits for the child.
    ///
    /// # Errors
    ///
    /// No pipe or no thread could be created.
    pub(crate) fn pipe_into(&mut self, capture: &Capture) -> std::io::Result<(OwnedFd, Drain)> {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let (capture, drain) = (capture.clone(), Drain::default());
        let done = drain.clone();
        std::thread::Builder::new().name("wrt-capture-drain".into()).spawn(move || {
            let mut read = std::fs::File::from(read);
            let mut buf = vec![0; 64 << 10];
            loop {
                match read.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        capture.append(&buf[..n]);
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            done.done();
        })?;
        self.0.retain(|d| !*d.0.0.lock().unwrap_or_else(PoisonError::into_inner));
        self.0.push(drain.clone());
        Ok((write, drain))
    }

    /// Waits, up to [`FINISH_WITHIN`] in all, for every drain to reach the end of its pipe.
    pub(crate) fn finish(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let until = Instant::now() + FINISH_WITHIN;
        for drain in self.0.drain(..) {
            drain.finish(until);
        }
    }
}

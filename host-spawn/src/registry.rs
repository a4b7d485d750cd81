//! State shared by a [`Spawner`](crate::Spawner) and its children: which children are still
//! running (for the concurrency limit and for killing them all), their exit status once
//! reaped, and the audit log.
//!
//! A child is reaped only under the registry lock, and its process group is signalled only
//! while it has not been reaped: until then the zombie leader keeps the pgid from being
//! reused, so a signal can never reach an unrelated process group.

use std::collections::HashMap;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use crate::audit::AuditLog;
use crate::escalation::{Kill, Wait};
use crate::sys::RawExit;

#[derive(Debug, Clone, Copy)]
enum Slot {
    Running,
    Reaped(RawExit),
}

/// A child's identity in the registry. Not its pid: once a child is reaped its pid may be
/// reused by a later child of the same spawner, and a stale handle must never reach that one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ChildId(u64);

/// What a wait saw of the leader's exit, and so what a reap knows before it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Not for certain (a pidfd, or `ECHILD`, said it ended): the reap asks (`waitid` with
    /// `WNOHANG | WNOWAIT`), and may have to wait a moment.
    Unknown,
    /// A blocking `waitid` of this leader reported its exit ([`Leader::block_until_exit`]): it
    /// is a zombie until the registry reaps it, so the reap need not ask again
    /// ([`Shared::reap_zombie`]).
    Zombie,
}

#[derive(Debug, Default)]
struct Registry {
    children: HashMap<ChildId, (Pid, Slot)>,
    next_id: u64,
    /// Spawns between the concurrency check and registration.
    pending: usize,
    /// A kill switch was thrown ([`Shared::signal_all`] with `for_good`): every child is killed
    /// as it is registered.
    killed: bool,
}

impl Registry {
    fn running(&self) -> usize {
        self.pending + self.children.values().filter(|(_, s)| matches!(s, Slot::Running)).count()
    }
}

#[derive(Debug)]
pub(crate) struct Shared {
    registry: Mutex<Registry>,
    audit: Mutex<Option<AuditLog>>,
    max_children: usize,
}

/// A place for one more child, held while it is being spawned.
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    shared: &'a Shared,
}

impl Reservation<'_> {
    pub(crate) fn register(self, pid: Pid) -> ChildId {
        let mut registry = self.shared.lock();
        let id = ChildId(registry.next_id);
        registry.next_id += 1;
        registry.children.insert(id, (pid, Slot::Running));
        crate::containment::track(pid);
        if registry.killed {
            // Started while, or after, the kill switch was thrown: it ends at birth.
            freeze_and_kill_tree(pid);
            let _ = killpg(pid, Signal::SIGKILL);
        }
        // `Drop` releases the pending count.
        id
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.shared.lock().pending -= 1;
    }
}

impl Shared {
    pub(crate) fn new(max_children: usize) -> Self {
        Self { registry: Mutex::new(Registry::default()), audit: Mutex::new(None), max_children }
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn max_children(&self) -> usize {
        self.max_children
    }

    /// Reserves a place for one more child, or `Err(running)` at the limit.
    ///
    /// At the limit, children that have exited but were not waited for yet are reaped first
    /// (their exit status is kept for their handle): only live processes count.
    pub(crate) fn reserve(&self) -> Result<Reservation<'_>, usize> {
        let mut registry = self.lock();
        if registry.running() >= self.max_children {
            reap_exited(&mut registry);
        }
        let running = registry.running();
        if running >= self.max_children {
            return Err(running);
        }
        registry.pending += 1;
        Ok(Reservation { shared: self })
    }

    /// Children that have not been reaped (and spawns in progress).
    pub(crate) fn running(&self) -> usize {
        self.lock().running()
    }

    pub(crate) fn set_audit(&self, log: Option<AuditLog>) {
        *self.audit.lock().unwrap_or_else(PoisonError::into_inner) = log;
    }

    /// Sets the `"request"` label of the audit records written from now on, if there is a log.
    pub(crate) fn set_audit_request(&self, request: Option<String>) {
        if let Some(log) = self.audit.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            log.set_request(request);
        }
    }

    /// Runs `write` on the audit log, if there is one.
    pub(crate) fn audit(&self, write: impl FnOnce(&mut AuditLog) -> io::Result<()>) -> io::Result<()> {
        match self.audit.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            Some(log) => write(log),
            None => Ok(()),
        }
    }

    /// Sends `signal` to child `id`'s process group unless it has been reaped.
    pub(crate) fn signal_group(&self, id: ChildId, signal: Signal) -> Result<(), Errno> {
        let registry = self.lock();
        match registry.children.get(&id) {
            Some(&(pid, Slot::Running)) => match killpg(pid, signal) {
                Err(Errno::ESRCH) | Ok(()) => Ok(()),
                Err(errno) => Err(errno),
            },
            _ => Ok(()),
        }
    }

    /// Kills every process below child `id` (in any session or process group) unless the child
    /// has been reaped: until then its pid cannot name another process.
    pub(crate) fn kill_descendants(&self, id: ChildId) {
        let registry = self.lock();
        if let Some(&(pid, Slot::Running)) = registry.children.get(&id) {
            freeze_and_kill_tree(pid);
        }
    }

    /// Whether the child `id` (leader `pid`) has exited: reaped, gone from the registry, or a
    /// zombie now. Looked at under the registry lock, where nothing reaps it meanwhile.
    pub(crate) fn has_exited(&self, id: ChildId, pid: Pid) -> bool {
        let registry = self.lock();
        match registry.children.get(&id) {
            Some(&(_, Slot::Running)) => match is_zombie(pid) {
                Ok(exited) => exited,
                // Reaped behind the registry's back.
                Err(Errno::ECHILD) => true,
                // Not known to have exited: its timeout goes on.
                Err(_) => false,
            },
            _ => true,
        }
    }

    /// Whether `SIGTERM` would kill child `id`'s leader outright now
    /// ([`disposition::term_kills`](crate::disposition::term_kills)); `false` once it is reaped
    /// (its pid may name another process by then) or when that is not known.
    pub(crate) fn term_kills_leader(&self, id: ChildId) -> bool {
        let registry = self.lock();
        match registry.children.get(&id) {
            Some(&(pid, Slot::Running)) => crate::disposition::term_kills(pid),
            _ => false,
        }
    }

    /// A pidfd for the child `id` while it is not reaped (a zombie still holds its pid, so the
    /// pidfd names this very child); `None` once reaped, or if it cannot be opened.
    pub(crate) fn open_pidfd(&self, id: ChildId) -> Option<OwnedFd> {
        let registry = self.lock();
        match registry.children.get(&id) {
            Some(&(pid, Slot::Running)) => crate::sys::pidfd_open(pid).ok(),
            _ => None,
        }
    }

    /// Reaps `pid` if it has exited; `Ok(None)` while it runs.
    ///
    /// The exit is checked with `waitid(WNOWAIT)` even when the caller has just seen it: that
    /// also catches a child reaped behind our back (`ECHILD`), whose pgid may already be
    /// reused and must not be signalled.
    ///
    /// Before reaping, `SIGKILL` goes to the process group: the group does not outlive its
    /// leader, so no background process of the child survives it.
    pub(crate) fn try_reap(&self, id: ChildId) -> Result<Option<RawExit>, Errno> {
        self.reap(id, Exit::Unknown)
    }

    /// [`Shared::try_reap`] of a child whose exit a blocking `waitid` reported
    /// ([`Leader::block_until_exit`]): it stays a zombie until it is reaped, and only this
    /// registry reaps it (under its lock, where its slot says whether it has been), so it is not
    /// asked again.
    pub(crate) fn reap_zombie(&self, id: ChildId) -> Result<Option<RawExit>, Errno> {
        self.reap(id, Exit::Zombie)
    }

    fn reap(&self, id: ChildId, exit: Exit) -> Result<Option<RawExit>, Errno> {
        let mut registry = self.lock();
        let pid = match registry.children.get(&id) {
            Some(&(_, Slot::Reaped(raw))) => return Ok(Some(raw)),
            Some(&(pid, Slot::Running)) => pid,
            None => return Err(Errno::ECHILD),
        };
        if exit == Exit::Unknown && !is_zombie(pid)? {
            return Ok(None);
        }
        // The zombie leader still holds the pgid, so this reaches only its own group.
        let _ = killpg(pid, Signal::SIGKILL);
        let raw = crate::containment::reap_tracked(pid)?;
        if let Some(raw) = raw {
            registry.children.insert(id, (pid, Slot::Reaped(raw)));
        }
        Ok(raw)
    }

    /// Forgets child `id`: its [`Child`](crate::Child) is gone.
    pub(crate) fn release(&self, id: ChildId) {
        if let Some((pid, Slot::Running)) = self.lock().children.remove(&id) {
            // Never reaped (it could not be signalled): no longer kept from a sweep.
            crate::containment::untrack(pid);
        }
    }

    /// `SIGKILL` to every process below each running child and to its process group, without
    /// reaping any: returns the children that were signalled (one that cannot be, `EPERM`, is
    /// left out: it would never exit). With `for_good`, every child registered afterwards is
    /// killed as it is registered. Safe from any thread, while the children's owner waits for
    /// them: the registry's lock keeps a reaped child's pid, which may be reused, from being
    /// signalled.
    pub(crate) fn signal_all(&self, for_good: bool) -> Vec<(ChildId, Pid)> {
        let mut registry = self.lock();
        registry.killed |= for_good;
        for &(pid, slot) in registry.children.values() {
            if matches!(slot, Slot::Running) {
                freeze_and_kill_tree(pid);
            }
        }
        registry
            .children
            .iter()
            .filter(|(_, (_, slot))| matches!(slot, Slot::Running))
            .map(|(&id, &(pid, _))| (id, pid))
            .filter(|&(_, pid)| matches!(killpg(pid, Signal::SIGKILL), Ok(()) | Err(Errno::ESRCH)))
            .collect()
    }

    /// `SIGKILL` to every process below each running child and to its process group, then
    /// reaps them all.
    pub(crate) fn kill_all(&self) {
        let running = self.signal_all(false);
        for (id, pid) in running {
            let mut leader = Leader { pid, id, pidfd: None, shared: self };
            while !leader.wait_exit(None).unwrap_or(true) {}
            let _ = self.try_reap(id);
        }
    }
}

/// Whether the unreaped child `pid` has exited (is a zombie), without reaping it:
/// `waitid(WEXITED | WNOHANG | WNOWAIT)`, retried on `EINTR`. `ECHILD` means it was reaped
/// behind the registry's back (its pid, and pgid, may be another process's by now).
pub(crate) fn is_zombie(pid: Pid) -> Result<bool, Errno> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    loop {
        match waitid(Id::Pid(pid), flags) {
            Ok(status) => return Ok(status != WaitStatus::StillAlive),
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno),
        }
    }
}

/// Reaps every registered child that has exited, as [`Shared::try_reap`] does (the group is
/// killed first, while the zombie pins the pgid).
fn reap_exited(registry: &mut Registry) {
    let running: Vec<(ChildId, Pid)> = registry
        .children
        .iter()
        .filter(|(_, (_, slot))| matches!(slot, Slot::Running))
        .map(|(&id, &(pid, _))| (id, pid))
        .collect();
    for (id, pid) in running {
        if is_zombie(pid) != Ok(true) {
            continue;
        }
        let _ = killpg(pid, Signal::SIGKILL);
        if let Ok(Some(raw)) = crate::containment::reap_tracked(pid) {
            registry.children.insert(id, (pid, Slot::Reaped(raw)));
        }
    }
}

/// Stops the process group of `pid` (an unreaped child), then kills everything below it. The
/// stopped leader cannot exit on its own when its children die, so the `SIGKILL` that follows
/// is what ends it, and its status says so.
fn freeze_and_kill_tree(pid: Pid) {
    let _ = killpg(pid, Signal::SIGSTOP);
    crate::containment::kill_tree(pid);
}

/// A child's process-group leader, as the timeout logic sees it.
#[derive(Debug)]
pub(crate) struct Leader<'a> {
    pub(crate) pid: Pid,
    pub(crate) id: ChildId,
    pub(crate) pidfd: Option<BorrowedFd<'a>>,
    pub(crate) shared: &'a Shared,
}

/// `poll`'s timeout: rounded up to whole milliseconds, `None` for no timeout.
pub(crate) fn poll_timeout(timeout: Option<Duration>) -> PollTimeout {
    match timeout {
        None => PollTimeout::NONE,
        Some(t) => {
            let ms = t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128);
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
        }
    }
}

impl Leader<'_> {
    /// Blocks in `waitid(WEXITED | WNOWAIT)` until the leader exits, leaving it to be reaped:
    /// `Ok(true)` when `waitid` reported its exit (it is a zombie until
    /// [`Shared::reap_zombie`]), `Ok(false)` when a signal interrupted the wait (`EINTR`).
    /// `ECHILD` (something else reaped it) is an error here.
    pub(crate) fn block_until_exit(&self) -> Result<bool, Errno> {
        match waitid(Id::Pid(self.pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(_) => Ok(true),
            Err(Errno::EINTR) => Ok(false),
            Err(errno) => Err(errno),
        }
    }
}

impl Wait for Leader<'_> {
    fn wait_exit(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        if let Some(pidfd) = self.pidfd {
            let mut fds = [PollFd::new(pidfd, PollFlags::POLLIN)];
            return match poll(&mut fds, poll_timeout(timeout)) {
                Ok(n) => Ok(n > 0),
                Err(Errno::EINTR) => Ok(false),
                Err(errno) => Err(errno.into()),
            };
        }
        // Without a pidfd (none was needed, or Linux < 5.3): block in waitid, or poll it with
        // short sleeps when the wait has a time limit.
        let exited_flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
        let Some(timeout) = timeout else {
            return match self.block_until_exit() {
                Ok(reported) => Ok(reported),
                Err(Errno::ECHILD) => Ok(true),
                Err(errno) => Err(errno.into()),
            };
        };
        let end = Instant::now() + timeout;
        let mut nap = Duration::from_micros(500);
        loop {
            match waitid(Id::Pid(self.pid), exited_flags | WaitPidFlag::WNOHANG) {
                Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => {}
                Ok(_) | Err(Errno::ECHILD) => return Ok(true),
                Err(errno) => return Err(errno.into()),
            }
            let now = Instant::now();
            if now >= end {
                return Ok(false);
            }
            thread::sleep(nap.min(end - now));
            nap = (nap * 2).min(Duration::from_millis(20));
        }
    }
}

impl Kill for Leader<'_> {
    fn kill_group(&mut self, signal: Signal) -> io::Result<()> {
        self.shared.signal_group(self.id, signal).map_err(io::Error::from)
    }

    fn term_kills_leader(&mut self) -> bool {
        self.shared.term_kills_leader(self.id)
    }
}

//! The watchdog: one thread per process that carries out children's timeouts, from the spawn
//! until the child is reaped, whatever the holder of its [`Child`](crate::Child) is doing.
//!
//! A child's [`Timer`] lives here while the child is watched, and only this module takes its
//! steps (`SIGTERM` and `SIGCONT` at the deadline, `SIGKILL` after the grace period), under
//! one lock: either this thread, when a step is due, or a call on the child
//! ([`Watchdog::drive`]), which takes a due step at once and reads the timer. So a timeout
//! ends a child on time even while its holder never looks at it (a guest computing, or
//! sleeping), and a wait without a deadline of its own can block in `waitid`, which only the
//! child's end ends, instead of polling a pidfd with a timeout: opening that pidfd (a pidfs
//! inode on Linux ≥ 6.9), polling it and closing it cost a spawn of `/bin/true` about 10 µs of
//! the host's CPU, an eighth of its own time (docs/benchmarks.md).
//!
//! The thread wakes only when a step is due, or when a new child's deadline comes before the
//! time it would wake anyway: children that end within their timeouts (the usual case) neither
//! wake it nor wait for it. It signals through the registry, which reaches a group only while
//! its leader is not reaped, like every other signal of this crate.
//!
//! If the thread cannot be started, [`Watchdog::get`] returns `None` and each child's holder
//! drives its timer itself, as it waits, reads or writes.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::Instant;

use std::io;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::escalation::{Kill, Timer, Wait};
use crate::registry::{ChildId, Shared};

/// A watched child, and its timer.
struct Entry {
    pid: Pid,
    id: ChildId,
    shared: Arc<Shared>,
    timer: Timer,
}

#[derive(Default)]
struct Board {
    entries: BTreeMap<u64, Entry>,
    next_ticket: u64,
    /// When the thread wakes next on its own; `None` while it sleeps until notified.
    wakes_at: Option<Instant>,
}

/// The watchdog thread and the children it watches.
pub(crate) struct Watchdog {
    board: Mutex<Board>,
    wake: Condvar,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog").finish_non_exhaustive()
    }
}

/// A watched child: hand it back with [`Watchdog::unwatch`] to get its timer.
#[must_use = "the timer stays with the watchdog until it is unwatched"]
#[derive(Debug)]
pub(crate) struct Ticket(u64);

impl Watchdog {
    /// The process's watchdog, its thread started on first use; `None` if it could not start.
    pub(crate) fn get() -> Option<&'static Watchdog> {
        static WATCHDOG: OnceLock<Option<&'static Watchdog>> = OnceLock::new();
        *WATCHDOG.get_or_init(|| {
            let dog: &'static Watchdog =
                Box::leak(Box::new(Watchdog { board: Mutex::new(Board::default()), wake: Condvar::new() }));
            thread::Builder::new().name("wrt-child-timeouts".into()).spawn(move || dog.run()).ok().map(|_| dog)
        })
    }

    fn lock(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes over `timer` of the child `pid` (registry `id` of `shared`) until
    /// [`Watchdog::unwatch`]: its signals are sent when they are due.
    pub(crate) fn watch(&self, pid: Pid, id: ChildId, shared: &Arc<Shared>, timer: Timer) -> Ticket {
        let due = timer.next_due();
        let mut board = self.lock();
        let ticket = board.next_ticket;
        board.next_ticket += 1;
        board.entries.insert(ticket, Entry { pid, id, shared: Arc::clone(shared), timer });
        // Wake the thread only if it would otherwise sleep past this child's next signal.
        if let Some(due) = due
            && board.wakes_at.is_none_or(|at| due < at)
        {
            board.wakes_at = Some(due);
            self.wake.notify_one();
        }
        Ticket(ticket)
    }

    /// Takes the step of the child's timer that is due now, if any, and returns the timer.
    ///
    /// # Errors
    ///
    /// A signal failed (`EPERM`: the child changed its uid); the timer has advanced anyway.
    pub(crate) fn drive(&self, ticket: &Ticket) -> io::Result<Timer> {
        let mut board = self.lock();
        let entry = board.entries.get_mut(&ticket.0).expect("every ticket is watched until unwatched");
        let result = entry.step(Instant::now());
        result.map(|()| entry.timer)
    }

    /// Ends the watch and returns the timer, with every step taken recorded.
    pub(crate) fn unwatch(&self, ticket: Ticket) -> Timer {
        let entry = self.lock().entries.remove(&ticket.0).expect("every ticket is watched until unwatched");
        entry.timer
    }

    fn run(&self) {
        let mut board = self.lock();
        loop {
            let now = Instant::now();
            for entry in board.entries.values_mut() {
                // A signal that fails (EPERM: the child changed its uid) still advances the
                // timer; the holder sees the child end or not, as with a timer of its own.
                let _ = entry.step(now);
            }
            let next = board.entries.values().filter_map(|entry| entry.timer.next_due()).min();
            board.wakes_at = next;
            board = match next {
                None => self.wake.wait(board).unwrap_or_else(PoisonError::into_inner),
                Some(at) => {
                    let timeout = at.saturating_duration_since(Instant::now());
                    self.wake.wait_timeout(board, timeout).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }
}

impl Entry {
    /// Takes the step of the timer that is due at `now`, if any.
    fn step(&mut self, now: Instant) -> io::Result<()> {
        if self.timer.next_due().is_none_or(|due| due > now) {
            return Ok(());
        }
        let mut leader = Watched { pid: self.pid, id: self.id, shared: &self.shared };
        self.timer.poll(&mut leader, now)
    }
}

/// A watched child's leader, as its timer sees it: whether it has exited is asked of the
/// registry, which knows when the holder has reaped it (and a reaped pid may be another
/// process's by now).
struct Watched<'a> {
    pid: Pid,
    id: ChildId,
    shared: &'a Shared,
}

impl Wait for Watched<'_> {
    fn wait_exit(&mut self, _timeout: Option<Duration>) -> io::Result<bool> {
        // The timer only ever looks without blocking.
        Ok(self.shared.has_exited(self.id, self.pid))
    }
}

impl Kill for Watched<'_> {
    fn kill_group(&mut self, signal: Signal) -> io::Result<()> {
        self.shared.signal_group(self.id, signal).map_err(io::Error::from)
    }

    fn term_kills_leader(&mut self) -> bool {
        self.shared.term_kills_leader(self.id)
    }
}

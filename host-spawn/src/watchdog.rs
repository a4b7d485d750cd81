//! The watchdog: one thread per process that carries out the timeouts of children whose
//! waiters are blocked in `waitid`.
//!
//! A wait that must end by a deadline cannot block in `waitid`, which only a change of the
//! child's state ends; it polls the child's pidfd with a timeout instead. Opening that pidfd
//! (a pidfs inode on Linux ≥ 6.9), polling it and closing it cost a spawn of `/bin/true`
//! about a fifth of the host's own time. Most waits have no deadline of their own, only the
//! child's timeout (the policy's default is 30 s), and what that timeout does is signal the
//! child, which ends the `waitid` too. So a waiter without a deadline of its own hands the
//! child's [`Timer`] to this thread and blocks in `waitid`; the thread sends the timer's
//! signals when they are due (`SIGTERM` and `SIGCONT` at the deadline, `SIGKILL` after the
//! grace period), the child ends, and the waiter takes the timer back to report whether the
//! timeout ended it.
//!
//! The thread wakes only when a signal is due or a watch is due before the time it would
//! wake anyway: waiters that come and go within their children's timeouts (the usual case)
//! neither wake it nor wait for it. It signals through the registry, which reaches a group
//! only while its leader is not reaped, like every other signal of this crate.
//!
//! If the thread cannot be started, [`Watchdog::get`] returns `None` and waits poll a pidfd
//! as before.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::Instant;

use nix::unistd::Pid;

use crate::reap::Timer;
use crate::registry::{ChildId, Leader, Shared};

/// A child whose waiter is blocked, and its timer.
struct Entry {
    pid: Pid,
    id: ChildId,
    shared: Arc<Shared>,
    timer: Timer,
}

#[derive(Default)]
struct Board {
    entries: HashMap<u64, Entry>,
    next_ticket: u64,
    /// When the thread wakes next on its own; `None` while it sleeps until notified.
    wakes_at: Option<Instant>,
}

/// The watchdog thread and the children it watches.
pub(crate) struct Watchdog {
    board: Mutex<Board>,
    wake: Condvar,
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
    /// [`Watchdog::unwatch`]: its signals are sent when they are due. The child must not be
    /// reaped before then.
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

    /// Ends the watch and returns the timer, with every signal the watchdog sent recorded.
    pub(crate) fn unwatch(&self, ticket: Ticket) -> Timer {
        let entry = self.lock().entries.remove(&ticket.0).expect("every ticket is watched until unwatched");
        entry.timer
    }

    fn run(&self) {
        let mut board = self.lock();
        loop {
            let now = Instant::now();
            for entry in board.entries.values_mut() {
                if entry.timer.next_due().is_some_and(|due| due <= now) {
                    let mut leader = Leader { pid: entry.pid, id: entry.id, pidfd: None, shared: &entry.shared };
                    // A signal that fails (EPERM: the child changed its uid) still advances
                    // the timer; the waiter sees the child end or not, as with its own timer.
                    let _ = entry.timer.poll(&mut leader, now);
                }
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

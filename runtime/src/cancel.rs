//! Cancelling runs from any thread: a [`CancelToken`] given to
//! [`crate::RunOptions::cancel_token`] stops every run that holds it.
//!
//! What a cancel does, at once, on the cancelling thread:
//! - kills the children of every run holding the token (and everything below them), so a
//!   guest blocked on one (a wait, a read of its output, a write to its input) returns;
//! - for each run in a call, advances the epoch and starts the epoch ticker as a timeout that
//!   passed now would: the guest stops at its next epoch check (a function entry or loop
//!   header), and its thread is interrupted every tick until the call returns, which ends a
//!   system call that knows no deadline (a FIFO's open, a read of a device). A call during
//!   which the token was cancelled ends cancelled, whatever the guest did after.
//!
//! The run's next check of its stop ([`crate::stop::Stop`]) then ends it with
//! [`Outcome::Cancelled`](crate::Outcome::Cancelled); its children are reaped as for a timeout.
//! What waits on its own clock (a sleep in `poll_oneoff` or `wasi:clocks`, a read of the
//! inherited stdin) is not woken: the guest stops when it returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use nix::sys::pthread::Pthread;
use wrt_host_spawn::KillSwitch;

use crate::epoch_ticker::{EpochTicker, Ticking};

/// Stops the runs that hold it ([`RunOptions::cancel_token`](crate::RunOptions::cancel_token)),
/// from any thread: [`CancelToken::cancel`]. Clones share one state, so a server keeps a clone
/// per request (or per client, for every run of that client) and cancels it when the client
/// goes away. A cancelled token stays cancelled: a run that starts with it ends at once, with
/// [`Outcome::Cancelled`](crate::Outcome::Cancelled), having run nothing.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use wrt_runtime::{CancelToken, Outcome, RunOptions, Runtime};
///
/// # fn main() -> wrt_runtime::Result<()> {
/// let guest = Runtime::new()?.load_file("spin.wasm")?;
/// let token = CancelToken::new();
/// let canceller = token.clone();
/// std::thread::spawn(move || {
///     std::thread::sleep(Duration::from_millis(100));
///     canceller.cancel();
/// });
/// let report = guest.run(&RunOptions::new().cancel_token(token))?;
/// assert_eq!(report.outcome, Outcome::Cancelled);
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct CancelToken {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    cancelled: AtomicBool,
    runs: Mutex<Runs>,
    /// Wakes the asynchronous runs waiting in [`CancelToken::cancelled`].
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct Runs {
    next_id: u64,
    entries: Vec<Run>,
}

/// A run holding the token, from its instantiation until its instance drops.
struct Run {
    id: u64,
    /// `None` for a run that can start no program.
    children: Option<KillSwitch>,
    ticker: Arc<EpochTicker>,
    /// The thread running a call into the guest, while one runs.
    call: Option<Pthread>,
    /// The ticker started for that call by a cancel.
    ticking: Option<Ticking>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken").field("cancelled", &self.is_cancelled()).finish_non_exhaustive()
    }
}

impl CancelToken {
    /// A token not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every run holding the token, now and later: kills their children, and stops
    /// each within an epoch tick (5 ms) of guest code, or when the host call it is blocked in
    /// returns ([`RunOptions::cancel_token`](crate::RunOptions::cancel_token) says which
    /// return at once). Returns at once; the runs end on their own threads.
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::SeqCst);
        self.shared.wake.notify_waiters();
        let mut runs = self.lock();
        for run in &mut runs.entries {
            if let Some(children) = &run.children {
                children.kill_all();
            }
            // A guest computing on a fiber stops at its next check.
            run.ticker.bump();
            if let (Some(thread), None) = (run.call, &run.ticking) {
                // Could the ticker not start, the guest still stops at its next host call.
                run.ticking = run.ticker.tick_on(Instant::now(), thread).ok();
            }
        }
    }

    /// Returns once the token is cancelled (at once if it is already).
    pub(crate) async fn cancelled(&self) {
        let mut notified = std::pin::pin!(self.shared.wake.notified());
        // Registered before the flag is read: a cancel between the two still wakes it.
        notified.as_mut().enable();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.shared.cancelled.load(Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, Runs> {
        self.shared.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a run whose children `children` kills (`None`: a run that can start none),
    /// until the returned registration drops.
    pub(crate) fn register(&self, children: Option<KillSwitch>, ticker: Arc<EpochTicker>) -> Registration {
        let mut runs = self.lock();
        let id = runs.next_id;
        runs.next_id += 1;
        runs.entries.push(Run { id, children, ticker, call: None, ticking: None });
        Registration { token: self.clone(), id }
    }
}

/// A run registered with its token ([`CancelToken::register`]); dropping it unregisters it.
#[derive(Debug)]
pub(crate) struct Registration {
    token: CancelToken,
    id: u64,
}

impl Registration {
    /// The token.
    pub(crate) fn token(&self) -> &CancelToken {
        &self.token
    }

    /// The calling thread starts a call into the guest. If the token is already cancelled the
    /// call stops at its first check; the ticker is started here, as a cancel would have.
    pub(crate) fn enter_call(&self) {
        let thread = crate::sys::interrupt::current();
        let mut runs = self.token.lock();
        // Read under the lock: a cancel sets the flag before it takes the lock, so either it
        // finds this call registered, or the flag is seen here.
        let cancelled = self.token.is_cancelled();
        if let Some(run) = runs.entries.iter_mut().find(|run| run.id == self.id) {
            run.call = Some(thread);
            if cancelled && run.ticking.is_none() {
                run.ticking = run.ticker.tick_on(Instant::now(), thread).ok();
            }
        }
    }

    /// The call has returned: no signal may reach the thread any more. Returns whether the
    /// token was cancelled during the call: then the call ends cancelled, whatever the guest
    /// did after (its children were killed under it, and a system call it made may have failed
    /// with `EINTR`: what it made of that is no result).
    pub(crate) fn leave_call(&self) -> bool {
        let ticking = {
            let mut runs = self.token.lock();
            runs.entries.iter_mut().find(|run| run.id == self.id).and_then(|run| {
                run.call = None;
                run.ticking.take()
            })
        };
        ticking.map(Ticking::finish).is_some()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let ticking = {
            let mut runs = self.token.lock();
            let at = runs.entries.iter().position(|run| run.id == self.id);
            at.map(|at| runs.entries.swap_remove(at)).and_then(|run| run.ticking)
        };
        // Dropped outside the token's lock: the ticker's own lock is taken after it.
        drop(ticking);
    }
}

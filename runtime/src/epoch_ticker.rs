//! The wall-clock timeout. One ticker thread per runtime bumps the engine's epoch while any of
//! its guests runs under a deadline, and each store's epoch callback stops its guest once the
//! deadline has passed. Host calls that block outside wasm (the `wrt_v1` ABI, stdin, clock
//! sleeps in `poll_oneoff`) read the same deadline and stop there too.
//!
//! A system call that knows no deadline (opening a FIFO, reading or writing a character device
//! in a preopened directory) is interrupted instead: from the deadline on, the ticker sends the
//! guest's thread a signal every tick until the call that runs under the deadline returns
//! (`sys::interrupt`). The blocked call fails with `EINTR`, and the guest stops with the timeout
//! as soon as it runs wasm again, or when the call returns, whatever the guest made of the error.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::pthread::Pthread;
use wasmtime::{Engine, EngineWeak};

use crate::sys::interrupt;

/// How often the epoch advances while a call with a deadline runs.
pub(crate) const TICK: Duration = Duration::from_millis(5);

/// Ticks the ticker stays awake after the last call under it ended (1 s): a server's stream of
/// calls (every asynchronous run ticks) then never has to wake it.
const LINGER: u32 = 200;

/// The error that stops a guest at its deadline. Mapped to [`crate::Outcome::TimedOut`].
#[derive(Debug, thiserror::Error)]
#[error("guest timed out")]
pub(crate) struct DeadlineExceeded;

/// The epoch ticker of one engine: a thread, started on first use, that advances the epoch
/// every [`TICK`] while at least one [`Ticking`] guard lives, sleeps otherwise, and ends when
/// the ticker is dropped (with the last clone of its runtime).
pub(crate) struct EpochTicker {
    shared: Arc<Shared>,
    engine: EngineWeak,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<TickerState>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct TickerState {
    /// Calls running under a deadline.
    active: usize,
    /// The calls running under a deadline whose thread may be interrupted.
    calls: Vec<Call>,
    /// The id of the next guard.
    next_id: u64,
    started: bool,
    stopped: bool,
    /// Ticks the thread has waited, since the last call ended, before it sleeps ([`LINGER`]).
    lingered: u32,
    /// The thread waits with no timeout (nothing ticks): only then does a new call wake it.
    /// Waking a thread that ticks anyway would make it bump the epoch early, which costs every
    /// guest of the engine an epoch callback.
    idle: bool,
}

/// A call running under a deadline, on `thread`.
#[derive(Debug)]
struct Call {
    /// The id of its guard.
    id: u64,
    thread: Pthread,
    deadline: Instant,
    /// Whether the ticker has sent the thread the signal.
    interrupted: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, TickerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for EpochTicker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochTicker").field("shared", &self.shared).finish_non_exhaustive()
    }
}

impl EpochTicker {
    pub(crate) fn new(engine: &Engine) -> Self {
        Self { shared: Arc::default(), engine: engine.weak() }
    }

    /// Ticks until the returned guard is dropped, and from `deadline` on interrupts the calling
    /// thread's system calls until then. Drop the guard on the same thread, as soon as the call
    /// under the deadline returns.
    ///
    /// # Errors
    ///
    /// The ticker thread could not be started.
    pub(crate) fn tick(&self, deadline: Instant) -> std::io::Result<Ticking> {
        self.tick_on(deadline, interrupt::current())
    }

    /// [`EpochTicker::tick`] for a call running on `thread`, from any thread: the guard must
    /// be dropped once that call has returned (a cancel starts the ticker this way).
    pub(crate) fn tick_on(&self, deadline: Instant, thread: Pthread) -> std::io::Result<Ticking> {
        self.start_ticking(Some((deadline, thread)))
    }

    /// Ticks until the returned guard is dropped, interrupting no thread: for a call that runs
    /// on a fiber (an asynchronous run), which yields at every tick and may move between
    /// threads.
    pub(crate) fn tick_anywhere(&self) -> std::io::Result<Ticking> {
        self.start_ticking(None)
    }

    fn start_ticking(&self, interrupted: Option<(Instant, Pthread)>) -> std::io::Result<Ticking> {
        let interrupts = interrupted.filter(|_| interrupt::install());
        let mut state = self.shared.lock();
        if !state.started {
            let shared = Arc::clone(&self.shared);
            let engine = self.engine.clone();
            std::thread::Builder::new().name("wrt-deadline".into()).spawn(move || run(&shared, &engine))?;
            state.started = true;
        }
        state.active += 1;
        let id = state.next_id;
        state.next_id += 1;
        if let Some((deadline, thread)) = interrupts {
            state.calls.push(Call { id, thread, deadline, interrupted: false });
        }
        if state.active == 1 && state.idle {
            self.shared.wake.notify_one();
        }
        Ok(Ticking { shared: Arc::clone(&self.shared), id, ended: false })
    }
}

impl EpochTicker {
    /// Advances the epoch now, once: every guest of the engine runs its epoch callback at its
    /// next check (a cancel stops its guest this way without waiting for a tick).
    pub(crate) fn bump(&self) {
        if let Some(engine) = self.engine.upgrade() {
            engine.increment_epoch();
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.shared.lock().stopped = true;
        self.shared.wake.notify_one();
    }
}

/// The ticker thread.
fn run(shared: &Shared, engine: &EngineWeak) {
    let mut state = shared.lock();
    loop {
        if state.stopped {
            return;
        }
        if state.active == 0 {
            if state.lingered < LINGER {
                // Still awake: the next call starts ticking without waking this thread.
                state.lingered += 1;
                state = shared.wake.wait_timeout(state, TICK).unwrap_or_else(PoisonError::into_inner).0;
                continue;
            }
            state.idle = true;
            state = shared.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.idle = false;
            continue;
        }
        state.lingered = 0;
        state = shared.wake.wait_timeout(state, TICK).unwrap_or_else(PoisonError::into_inner).0;
        if state.active > 0 && !state.stopped {
            match engine.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
            // Each thread is inside its call: its guard, which removes it, waits for the lock.
            let now = Instant::now();
            for call in &mut state.calls {
                if now >= call.deadline {
                    interrupt::interrupt(call.thread);
                    call.interrupted = true;
                }
            }
        }
    }
}

/// Keeps the epoch ticking while a call runs under a deadline.
#[derive(Debug)]
pub(crate) struct Ticking {
    shared: Arc<Shared>,
    id: u64,
    /// [`Ticking::finish`] took the call off the ticker already.
    ended: bool,
}

impl Ticking {
    /// Ends the guard, and says whether the call's thread was interrupted: then a system call
    /// may have failed with `EINTR` because of the deadline, and the guest ran past it.
    pub(crate) fn finish(mut self) -> bool {
        self.ended = true;
        self.end()
    }

    /// Takes the call off the ticker, under one lock: whether its thread was interrupted.
    fn end(&self) -> bool {
        let mut state = self.shared.lock();
        state.active = state.active.saturating_sub(1);
        let mut interrupted = false;
        state.calls.retain(|call| {
            interrupted |= call.id == self.id && call.interrupted;
            call.id != self.id
        });
        interrupted
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        if !self.ended {
            self.end();
        }
    }
}

/// A guest timeout in milliseconds (negative: none) as an instant; one too far away to
/// represent is no limit.
pub(crate) fn until(timeout_ms: i64) -> Option<Instant> {
    let ms = u64::try_from(timeout_ms).ok()?;
    Instant::now().checked_add(Duration::from_millis(ms))
}

/// The earlier of two optional instants.
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_leaves_the_ticker_once_whether_finished_or_dropped() {
        let engine = Engine::default();
        let ticker = EpochTicker::new(&engine);
        let active = || ticker.shared.lock().active;
        let (first, second) = (ticker.tick_anywhere().unwrap(), ticker.tick_anywhere().unwrap());
        let third = ticker.tick(Instant::now() + Duration::from_secs(60)).unwrap();
        assert_eq!((active(), ticker.shared.lock().calls.len()), (3, 1));
        assert!(!third.finish(), "not interrupted");
        assert_eq!((active(), ticker.shared.lock().calls.len()), (2, 0));
        assert!(!first.finish());
        assert_eq!(active(), 1);
        drop(second);
        assert_eq!(active(), 0);
    }
}

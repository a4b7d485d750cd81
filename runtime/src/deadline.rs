//! The wall-clock timeout. One ticker thread per runtime bumps the engine's epoch while any of
//! its guests runs under a deadline, and each store's epoch callback stops its guest once the
//! deadline has passed. Host calls that block outside wasm (the `wrt_v1` ABI, stdin, clock
//! sleeps in `poll_oneoff`) read the same deadline and stop there too.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use wasmtime::{Engine, EngineWeak, UpdateDeadline};

use crate::state::GuestState;

/// How often the epoch advances while a call with a deadline runs.
const TICK: Duration = Duration::from_millis(5);

/// The error that stops a guest at its deadline. Mapped to [`crate::Outcome::TimedOut`].
#[derive(Debug, thiserror::Error)]
#[error("guest timed out")]
pub(crate) struct DeadlineExceeded;

/// Installs the epoch callback on a store whose engine has epoch interruption on.
pub(crate) fn install(store: &mut wasmtime::Store<GuestState>) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|ctx| match ctx.data().deadline {
        Some(deadline) if Instant::now() >= deadline => Err(DeadlineExceeded.into()),
        _ => Ok(UpdateDeadline::Continue(1)),
    });
}

/// A guest's deadline, shared with host objects that outlive a borrow of its store (its stdin
/// stream). `None` while no call runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeadlineCell(Arc<Mutex<Option<Instant>>>);

impl DeadlineCell {
    pub(crate) fn get(&self) -> Option<Instant> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set(&self, deadline: Option<Instant>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = deadline;
    }

    /// Whether a deadline is set and has passed.
    pub(crate) fn passed(&self) -> bool {
        self.get().is_some_and(|deadline| Instant::now() >= deadline)
    }
}

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
    started: bool,
    stopped: bool,
    /// The thread waits with no timeout (nothing ticks): only then does a new call wake it.
    /// Waking a thread that ticks anyway would make it bump the epoch early, which costs every
    /// guest of the engine an epoch callback.
    idle: bool,
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

    /// Ticks until the returned guard is dropped.
    ///
    /// # Errors
    ///
    /// The ticker thread could not be started.
    pub(crate) fn tick(&self) -> std::io::Result<Ticking> {
        let mut state = self.shared.lock();
        if !state.started {
            let shared = Arc::clone(&self.shared);
            let engine = self.engine.clone();
            std::thread::Builder::new().name("wrt-deadline".into()).spawn(move || run(&shared, &engine))?;
            state.started = true;
        }
        state.active += 1;
        if state.active == 1 && state.idle {
            self.shared.wake.notify_one();
        }
        Ok(Ticking { shared: Arc::clone(&self.shared) })
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
            state.idle = true;
            state = shared.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.idle = false;
            continue;
        }
        state = shared.wake.wait_timeout(state, TICK).unwrap_or_else(PoisonError::into_inner).0;
        if state.active > 0 && !state.stopped {
            match engine.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
        }
    }
}

/// Keeps the epoch ticking while a call runs under a deadline.
#[derive(Debug)]
pub(crate) struct Ticking {
    shared: Arc<Shared>,
}

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.active = state.active.saturating_sub(1);
    }
}

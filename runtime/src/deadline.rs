//! The wall-clock timeout: a ticker thread bumps the engine's epoch while a call runs, and the
//! store's epoch callback stops the guest once its deadline has passed.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wasmtime::{Engine, UpdateDeadline};

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

/// Advances the engine's epoch every [`TICK`] until dropped.
#[derive(Debug)]
pub(crate) struct Ticker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    pub(crate) fn start(engine: &Engine) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let engine = engine.weak();
        let thread = std::thread::Builder::new().name("wrt-deadline".into()).spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                match engine.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => return,
                }
            }
        })?;
        Ok(Self { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

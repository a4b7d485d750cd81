//! When a running call must stop: at its deadline (the run's timeout) or when its run is
//! cancelled ([`crate::CancelToken`]). Every host call that blocks reads it, and so does the
//! epoch callback.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use wasmtime::UpdateDeadline;

use crate::cancel::CancelToken;
use crate::deadline::DeadlineExceeded;

/// The error that stops a cancelled guest. Mapped to [`crate::Outcome::Cancelled`].
#[derive(Debug, thiserror::Error)]
#[error("guest run cancelled")]
pub(crate) struct Cancelled;

/// The stop of a guest's running call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop {
    /// When the call must stop, if its run has a timeout; `None` between calls.
    pub(crate) deadline: Option<Instant>,
    /// The run's cancel token, if it has one.
    pub(crate) cancel: Option<CancelToken>,
}

impl Stop {
    /// Fails with [`Cancelled`] once the run is cancelled, or with [`DeadlineExceeded`] once
    /// the deadline has passed.
    pub(crate) fn check(&self) -> wasmtime::Result<()> {
        if self.cancelled() {
            return Err(Cancelled.into());
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(DeadlineExceeded.into()),
            _ => Ok(()),
        }
    }

    /// Whether the call must stop now.
    pub(crate) fn passed(&self) -> bool {
        self.cancelled() || self.deadline.is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// Whether the call can be stopped at all (a blocked system call then needs to be
    /// interruptible).
    pub(crate) fn is_set(&self) -> bool {
        self.deadline.is_some() || self.cancel.is_some()
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelToken::is_cancelled)
    }
}

/// Installs the epoch callback on a store whose engine has epoch interruption on; `stop`
/// reads the store's [`Stop`] from its data. With `yields` (a guest run asynchronously, on a
/// fiber) the guest also yields to its executor at every tick, so that a guest that computes
/// shares its thread with the executor's other tasks.
pub(crate) fn install<T: 'static>(store: &mut wasmtime::Store<T>, stop: fn(&T) -> &Stop, yields: bool) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |ctx| {
        stop(ctx.data()).check()?;
        Ok(if yields { UpdateDeadline::Yield(1) } else { UpdateDeadline::Continue(1) })
    });
}

/// A guest's stop, shared with host objects that outlive a borrow of its store (its stdin
/// stream, a component's streams of its children): its deadline, `None` while no call runs,
/// and its run's cancel token.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopCell {
    deadline: Arc<Mutex<Option<Instant>>>,
    cancel: Option<CancelToken>,
}

impl StopCell {
    /// A cell with no deadline, for a run cancelled through `cancel`, if it has a token.
    pub(crate) fn new(cancel: Option<CancelToken>) -> Self {
        Self { deadline: Arc::default(), cancel }
    }

    pub(crate) fn get(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set(&self, deadline: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner) = deadline;
    }

    /// Whether the run was cancelled, or a deadline is set and has passed.
    pub(crate) fn passed(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelToken::is_cancelled)
            || self.get().is_some_and(|deadline| Instant::now() >= deadline)
    }
}

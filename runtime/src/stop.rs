//! When a running call must stop: at its deadline (the run's timeout) or when its run is
//! cancelled ([`crate::CancelToken`]). Every host call that blocks reads it, and so does the
//! epoch callback. [`RunDeadline`] owns the deadline and sets every form of it its readers see.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wasmtime::UpdateDeadline;

use crate::cancel::CancelToken;
use crate::epoch_ticker::DeadlineExceeded;

/// The error that stops a cancelled guest. Mapped to [`crate::Outcome::Cancelled`].
#[derive(Debug, thiserror::Error)]
#[error("guest run cancelled")]
pub(crate) struct Cancelled;

/// The stop of a guest's running call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop {
    /// When the call must stop, if its run has a timeout; `None` between calls. Set by the run's
    /// [`RunDeadline`] only.
    deadline: Option<Instant>,
    /// The run's cancel token, if it has one.
    cancel: Option<CancelToken>,
}

impl Stop {
    /// When the running call must stop, if its run has a timeout; `None` between calls.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

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

/// A run's deadline, the one owner of each form of it: the run's timeout; the deadline of the
/// current budget (armed at instantiation for instantiation and the first call together, afresh
/// for each later call); and, only while a call runs, that deadline as the store's [`Stop`]
/// shows it to host calls and the epoch callback, and as the run's [`StopCell`] shows it to
/// streams that outlive a host call. The epoch ticker is started with
/// [`RunDeadline::budget`]; [`RunDeadline::enter_call`] and [`RunDeadline::leave_call`] keep the
/// other two in step.
#[derive(Debug)]
pub(crate) struct RunDeadline {
    timeout: Option<Duration>,
    /// The deadline of the current budget, once armed.
    budget: Option<Instant>,
    /// The run's cell, and its cancel token.
    cell: StopCell,
}

impl RunDeadline {
    /// The deadline of a run with `timeout`, cancelled through `cancel` if it has a token; no
    /// budget armed yet.
    pub(crate) fn new(timeout: Option<Duration>, cancel: Option<CancelToken>) -> Self {
        Self { timeout, budget: None, cell: StopCell::new(cancel) }
    }

    /// The run's timeout.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The store's stop for this run: its cancel token, and no deadline until a call enters.
    pub(crate) fn stop(&self) -> Stop {
        Stop { deadline: None, cancel: self.cell.cancel.clone() }
    }

    /// The run's cell, for host objects that outlive a host call: no deadline until a call
    /// enters.
    pub(crate) fn cell(&self) -> &StopCell {
        &self.cell
    }

    /// Arms a fresh budget: its deadline is the timeout from now.
    pub(crate) fn arm(&mut self) {
        self.budget = self.timeout.map(|timeout| Instant::now() + timeout);
    }

    /// The deadline of the current budget.
    pub(crate) fn budget(&self) -> Option<Instant> {
        self.budget
    }

    /// Shows the current budget's deadline to the call about to run: to host calls and the
    /// epoch callback through `stop` (the store's), to streams through the cell.
    pub(crate) fn enter_call(&self, stop: &mut Stop) {
        self.show(stop, self.budget);
    }

    /// Takes the deadline away again once the call has returned: between calls nothing waits
    /// for it.
    pub(crate) fn leave_call(&self, stop: &mut Stop) {
        self.show(stop, None);
    }

    fn show(&self, stop: &mut Stop, deadline: Option<Instant>) {
        stop.deadline = deadline;
        // The cell of a run without a timeout never holds a deadline.
        if self.timeout.is_some() {
            self.cell.set(deadline);
        }
    }
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
    fn new(cancel: Option<CancelToken>) -> Self {
        Self { deadline: Arc::default(), cancel }
    }

    pub(crate) fn get(&self) -> Option<Instant> {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, deadline: Option<Instant>) {
        *self.deadline.lock().unwrap_or_else(PoisonError::into_inner) = deadline;
    }

    /// Whether the run was cancelled, or a deadline is set and has passed.
    pub(crate) fn passed(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelToken::is_cancelled)
            || self.get().is_some_and(|deadline| Instant::now() >= deadline)
    }
}

//! The budget of a call (fuel, deadline, CPU time) and entering the guest under it.

use std::time::Duration;

use wasmtime::Store;

use super::{Instance, State};
use crate::cancel::Registration;
use crate::epoch_ticker::Ticking;
use crate::error::InstantiateError;
use crate::guest_state::GuestState;
use crate::host_fn::Mode;
use crate::outcome::Outcome;

impl Instance {
    /// Runs one call into the guest with the fuel and deadline of the sandbox, and turns the
    /// ways a guest stops into an [`Outcome`]. A guest that ended (exit, trap, timeout, fuel)
    /// takes its children with it; a call that returned leaves them to the next call.
    pub(super) fn run_call(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<Outcome> + Send,
    ) -> wasmtime::Result<Outcome> {
        let outcome = self.enter(f)?.unwrap_or_else(|outcome| outcome);
        self.settle(&outcome);
        Ok(outcome)
    }

    /// After a call that ended with `outcome`: a guest that stopped takes its children with it;
    /// one that exited or was cancelled has ended.
    pub(super) fn settle(&mut self, outcome: &Outcome) {
        if !matches!(outcome, Outcome::Returned(_)) {
            self.store.data_mut().spawn.end_children();
        }
        if let Outcome::Exited(_) | Outcome::Cancelled = outcome {
            self.state = State::Ended(outcome.clone());
        }
    }

    /// Runs `f` under the current budget (the one armed at instantiation for the first call,
    /// a fresh one after), with the epoch ticking while a deadline is set. A guest stopping is
    /// `Ok(Err(outcome))`; a failure of the host is `Err`. Inside a tokio runtime the call runs
    /// where it may block (`tokio_runtime::blocking`): the deadline's signal goes to the thread that
    /// runs the guest, so the whole call moves, budget and all.
    pub(super) fn enter<R: Send>(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<R> + Send,
    ) -> wasmtime::Result<Result<R, Outcome>> {
        if self.store.data().mode == Mode::Async {
            return Err(self.wrong_mode());
        }
        crate::tokio_runtime::blocking(|| self.enter_here(f))
    }

    /// The error of a call of the kind (synchronous or asynchronous) the instance was not made
    /// for.
    pub(super) fn wrong_mode(&self) -> wasmtime::Error {
        let asynchronous = self.store.data().mode == Mode::Async;
        InstantiateError::WrongMode { guest: self.guest_name.to_string(), asynchronous }.into()
    }

    /// Arms the budget of the next call: the one armed at instantiation for the first call, a
    /// fresh one after.
    pub(super) fn arm_budget(&mut self) -> wasmtime::Result<()> {
        if !std::mem::take(&mut self.carried) {
            match self.fuel {
                Some(fuel) => self.store.set_fuel(fuel)?,
                // A runtime that meters fuel, and a run without a fuel limit.
                None if self.metering => self.store.set_fuel(u64::MAX)?,
                None => {}
            }
            self.deadline.arm();
        }
        Ok(())
    }

    /// The fuel left, asked only of a runtime that meters fuel: otherwise the answer is an
    /// error, whose backtrace (when `RUST_BACKTRACE` is set) costs more than a whole run of a
    /// small guest.
    pub(super) fn fuel_left(&self) -> Option<u64> {
        if self.metering { self.store.get_fuel().ok() } else { None }
    }

    /// [`Instance::enter`] on this thread.
    fn enter_here<R>(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<R>,
    ) -> wasmtime::Result<Result<R, Outcome>> {
        self.arm_budget()?;
        if self.cancel.as_ref().is_some_and(|run| run.token().is_cancelled()) {
            return Ok(Err(Outcome::Cancelled));
        }
        let ticking = match self.deadline.budget() {
            Some(deadline) => Some(self.ticker.tick(deadline)?),
            None => None,
        };
        self.deadline.enter_call(&mut self.store.data_mut().stop);
        if let Some(run) = &self.cancel {
            run.enter_call();
        }
        let fuel_before = self.fuel_left();
        let cpu_before = self.cpu_time.map(|_| thread_cpu_time());
        let result = f(&mut self.store);
        if let (Some(total), Some(before)) = (&mut self.cpu_time, cpu_before) {
            *total += thread_cpu_time().saturating_sub(before);
        }
        if let (Some(before), Some(after)) = (fuel_before, self.fuel_left()) {
            self.fuel_consumed += before.saturating_sub(after);
        }
        // No signal may reach this thread once the call has returned.
        let cancel_interrupted = self.cancel.as_ref().is_some_and(Registration::leave_call);
        let interrupted = ticking.is_some_and(Ticking::finish);
        self.deadline.leave_call(&mut self.store.data_mut().stop);
        if cancel_interrupted {
            // A system call failed at the cancel: what the guest made of it is no result.
            return Ok(Err(Outcome::Cancelled));
        }
        if interrupted {
            // A system call failed at the deadline: what the guest made of it is no result.
            return Ok(Err(Outcome::TimedOut(self.deadline.timeout().unwrap_or_default())));
        }
        match result {
            Ok(value) => Ok(Ok(value)),
            Err(err) => self.outcome_of(err).map(Err),
        }
    }
}

/// CPU time (user and system) of the calling thread so far; zero if the system cannot say.
pub(super) fn thread_cpu_time() -> Duration {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

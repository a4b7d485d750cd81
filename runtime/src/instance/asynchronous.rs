//! Asynchronous runs: the guest on a fiber (`instantiate_async`, `call_async`), so that an
//! executor such as tokio keeps many runs in flight on few threads.
//!
//! A call yields to the executor whenever the guest waits in an asynchronous WASI call (a
//! sleep, a read of a stream) and, through the epoch, at every tick while it computes. Its
//! deadline and cancel token race the call: when one fires while the call waits, the call's
//! future is dropped (wasmtime unwinds the fiber) and the instance ends. Each poll enters wrt's
//! own tokio runtime, so WASI's timers and blocking file operations use it rather than the
//! embedder's.

use std::future::{Future, pending, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::{Duration, Instant};

use wasmtime::{Store, Val};

use super::budget::thread_cpu_time;
use super::exports::initialize;
use super::{Instance, Report, State};
use crate::cancel::CancelToken;
use crate::epoch_ticker::TICK;
use crate::guest::{AsyncCode, Guest};
use crate::guest_state::GuestState;
use crate::host_fn::Mode;
use crate::options::RunOptions;
use crate::outcome::Outcome;
use crate::repoll::Repoll;
use crate::sys::fiber_stack::FiberCount;

/// One call into the guest, as a future borrowing its store.
type Call<'s, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 's>>;

/// Running a guest asynchronously: the guest runs on a fiber, and the future returned yields
/// whenever the guest waits (a sleep, a read of a stream) and every epoch tick (5 ms) while it
/// computes, so a few executor threads keep many runs in flight. Timeouts and cancel tokens
/// stop a run as in a synchronous one, and also while it waits in any asynchronous call.
///
/// The futures are `Send` and work on any executor; wrt drives WASI's timers and file
/// operations on a runtime of its own. What still holds the executor's thread while it
/// lasts: the `wrt_v1` ABI's and `wrt:process`'s calls that wait for a child (its exit, its
/// output, room in its stdin), which return at the run's deadline or cancel; writes to an
/// inherited stream; and the embedder's own synchronous host functions. A runtime built
/// without timeouts ([`crate::RuntimeBuilder::timeouts`]) compiles no epoch checks, so its
/// guests yield only when they wait.
///
/// A host function that calls back into its guest (`call_async` from a `func_wrap_async`
/// function of the embedder's, or the guest's collector from wrt's buffer calls) runs the guest
/// on a fiber of its own. A run holds at most 32 fibers at once: a guest that re-enters without
/// end traps there ("nested more than 32 calls"), where a synchronous run overflows its stack.
///
/// An instance is made for one kind of run: [`Guest::instantiate_async`] gives one that
/// takes the `*_async` calls, and a synchronous call of it (or an asynchronous call of one
/// from [`Guest::instantiate`]) fails with [`crate::InstantiateError::WrongMode`].
///
/// # Examples
///
/// ```
/// use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let wat = r#"(module
///     (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
///     (func (export "_start") (call $exit (i32.const 3))))"#;
/// let guest = Runtime::new()?.load_bytes("exit.wat", wat.as_bytes())?;
/// let executor = tokio::runtime::Builder::new_current_thread().build()?;
/// let reports = executor.block_on(async {
///     let options = RunOptions::new().stdout(GuestOutput::Null);
///     let runs = (0..8).map(|_| guest.run_async(&options));
///     futures_join_all(runs).await
/// });
/// assert!(reports.iter().all(|report| report.as_ref().unwrap().outcome == Outcome::Exited(3)));
/// # Ok(()) }
/// # async fn futures_join_all<F: std::future::Future>(runs: impl Iterator<Item = F>) -> Vec<F::Output> {
/// #     let mut out = Vec::new();
/// #     for run in runs { out.push(run.await); }
/// #     out
/// # }
/// ```
impl Guest {
    /// [`Guest::instantiate`] for asynchronous runs: the instance takes the `*_async` calls.
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate`].
    pub async fn instantiate_async(&self, options: &RunOptions) -> crate::Result<Instance> {
        Instance::new_async(self, options).await
    }

    /// [`Guest::run`], asynchronously: runs the guest's `_start` (or a component's
    /// `wasi:cli/run`) in a fresh instance.
    ///
    /// # Errors
    ///
    /// As [`Guest::run`].
    pub async fn run_async(&self, options: &RunOptions) -> crate::Result<Report> {
        let mut instance = self.instantiate_async(options).await?;
        let outcome = instance.run_start_async().await?;
        Ok(instance.into_report(outcome))
    }
}

impl Instance {
    pub(crate) async fn new_async(guest: &Guest, options: &RunOptions) -> crate::Result<Self> {
        let code = guest.linked_async()?;
        let mut this = Self::prepare(guest, options, Mode::Async)?;
        if this.cancelled_before_start() {
            return Ok(this);
        }
        let instantiated = match code {
            AsyncCode::Module(pre) => {
                let pre = pre.clone();
                this.enter_async(move |store| {
                    Box::pin(async move { pre.instantiate_async(store).await.map(State::Ready) })
                })
                .await
            }
            AsyncCode::Component(pre) => {
                let pre = pre.clone();
                this.enter_async(move |store| {
                    Box::pin(
                        async move { pre.instantiate_async(store).await.map(|c| State::CommandAsync(Box::new(c))) },
                    )
                })
                .await
            }
            AsyncCode::HttpService(pre) => {
                let pre = std::sync::Arc::clone(pre);
                this.enter_async(move |store| {
                    Box::pin(async move {
                        pre.instantiate_async(store).await.map(|proxy| State::Service(std::sync::Arc::new(proxy)))
                    })
                })
                .await
            }
            AsyncCode::CommandP3(pre) => {
                let pre = pre.clone();
                this.enter_async(move |store| {
                    Box::pin(async move { pre.instantiate_async(store).await.map(|c| State::CommandP3(Box::new(c))) })
                })
                .await
            }
        };
        this.instantiated(instantiated, guest, options)?;
        Ok(this)
    }

    /// [`Instance::run_start`] for an instance of [`Guest::instantiate_async`].
    ///
    /// # Errors
    ///
    /// As [`Instance::run_start`].
    pub async fn run_start_async(&mut self) -> wasmtime::Result<Outcome> {
        let called = match &self.state {
            State::CommandAsync(command) => {
                let run = command.wasi_cli_run().clone();
                // `Err(())` is a failure without a code: exit 1, as `wasmtime run` gives it.
                self.enter_async(move |store| {
                    Box::pin(async move {
                        run.call_run(store).await.map(|result| Outcome::Exited(if result.is_ok() { 0 } else { 1 }))
                    })
                })
                .await?
            }
            State::CommandP3(command) => {
                let run = command.wasi_cli_run().clone();
                // An async function: wasmtime's event loop runs it, and the tasks and streams
                // it starts, until it returns.
                self.enter_async(move |store| {
                    Box::pin(async move {
                        let result = store.run_concurrent(async |store| run.call_run(store).await).await??;
                        Ok(Outcome::Exited(if result.is_ok() { 0 } else { 1 }))
                    })
                })
                .await?
            }
            State::Ready(instance) => {
                let instance = *instance;
                let func = self.start_func(instance)?;
                self.enter_async(move |store| {
                    Box::pin(async move { func.call_async(store, ()).await.map(|()| Outcome::Exited(0)) })
                })
                .await?
            }
            State::Command(_) => return Err(self.wrong_mode()),
            State::Service(_) => return Err(self.service_not_run()),
            State::Ended(outcome) => return Ok(outcome.clone()),
        };
        let outcome = called.unwrap_or_else(|outcome| outcome);
        self.settle(&outcome);
        Ok(outcome)
    }

    /// [`Instance::call`] for an instance of [`Guest::instantiate_async`].
    ///
    /// # Errors
    ///
    /// As [`Instance::call`].
    pub async fn call_async(&mut self, name: &str, params: &[Val]) -> wasmtime::Result<Result<Vec<Val>, Outcome>> {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(Err(outcome)),
        };
        if self.store.data().mode != Mode::Async {
            return Err(self.wrong_mode());
        }
        let ty = func.ty(&self.store);
        let mut results: Vec<Val> = ty.results().map(|ty| Val::default_for_ty(&ty).unwrap_or(Val::I32(0))).collect();
        let init = self.initializer(instance);
        let params = params.to_vec();
        let called = self
            .enter_async(move |store| {
                Box::pin(async move {
                    initialize(store, init).await?;
                    func.call_async(&mut *store, &params, &mut results).await?;
                    Ok(results)
                })
            })
            .await?;
        if let Err(outcome) = &called {
            self.settle(outcome);
        }
        Ok(called)
    }

    /// [`Instance::enter`] for an asynchronous run: runs the call `f` makes under the current
    /// budget, with the epoch ticking throughout (the guest yields at every tick), and races it
    /// against the run's deadline and cancel token. When one of those fires while the call
    /// waits, the call is dropped and the instance ends.
    pub(super) async fn enter_async<R: Send>(
        &mut self,
        f: impl for<'s> FnOnce(&'s mut Store<GuestState>) -> Call<'s, R> + Send,
    ) -> wasmtime::Result<Result<R, Outcome>> {
        if self.store.data().mode != Mode::Async {
            return Err(self.wrong_mode());
        }
        self.arm_budget()?;
        let token = self.cancel.as_ref().map(|run| run.token().clone());
        if token.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Ok(Err(Outcome::Cancelled));
        }
        let ticking = match self.compiles_epoch_checks() {
            true => Some(self.ticker.tick_anywhere()?),
            false => None,
        };
        let deadline = self.deadline.budget();
        self.deadline.enter_call(&mut self.store.data_mut().stop);
        let fuel_before = self.fuel_left();
        let mut cpu = self.cpu_time.map(|_| Duration::ZERO);
        let finished = {
            let repoll = self.repoll.get_or_insert_with(Repoll::new);
            let fibers = self.fibers.get_or_insert_with(FiberCount::default);
            let call = f(&mut self.store);
            race(call, stop_signal(deadline, token.clone()), fibers, repoll, cpu.as_mut()).await
        };
        if let (Some(total), Some(spent)) = (&mut self.cpu_time, cpu) {
            *total += spent;
        }
        if let (Some(before), Some(after)) = (fuel_before, self.fuel_left()) {
            self.fuel_consumed += before.saturating_sub(after);
        }
        drop(ticking);
        self.deadline.leave_call(&mut self.store.data_mut().stop);
        let cancelled = token.as_ref().is_some_and(CancelToken::is_cancelled);
        let Some(result) = finished else {
            // The call waited past its deadline, or was cancelled while it waited: its fiber was
            // unwound mid-call, so nothing more runs in this instance.
            let outcome = match cancelled {
                true => Outcome::Cancelled,
                false => Outcome::TimedOut(self.deadline.timeout().unwrap_or_default()),
            };
            self.state = State::Ended(outcome.clone());
            return Ok(Err(outcome));
        };
        if cancelled {
            // The run was cancelled during the call: what the guest made of it is no result.
            return Ok(Err(Outcome::Cancelled));
        }
        match result {
            Ok(value) => Ok(Ok(value)),
            Err(err) => self.outcome_of(err).map(Err),
        }
    }

    /// Whether the engine compiles epoch checks (the runtime allows timeouts): only then can a
    /// computing guest yield.
    fn compiles_epoch_checks(&self) -> bool {
        self.store.engine().get_epoch_interruption()
    }
}

/// Polls `call` until it finishes (`Some`), or until `stop` fires while it waits (`None`).
/// The wakes the call gives itself while polled (its event loop's tasks and streams waking each
/// other) are taken in place ([`Repoll`]). Each poll of the call enters wrt's tokio runtime, counts the fibers it starts against
/// `fibers` and, with `cpu`, adds the thread's CPU time during the poll to it.
async fn race<R>(
    mut call: Call<'_, R>,
    stop: impl Future<Output = ()>,
    fibers: &FiberCount,
    repoll: &Repoll,
    mut cpu: Option<&mut Duration>,
) -> Option<wasmtime::Result<R>> {
    let mut stop = pin!(stop);
    poll_fn(|cx| {
        let polled = {
            let _wrt = crate::tokio_runtime::enter_own();
            let before = cpu.is_some().then(thread_cpu_time);
            let polled = repoll.poll(cx, |cx| fibers.polling(|| call.as_mut().poll(cx)));
            if let (Some(total), Some(before)) = (cpu.as_deref_mut(), before) {
                *total += thread_cpu_time().saturating_sub(before);
            }
            polled
        };
        match polled {
            Poll::Ready(result) => Poll::Ready(Some(result)),
            Poll::Pending => stop.as_mut().poll(cx).map(|()| None),
        }
    })
    .await
}

/// Fires one tick after `deadline` (a guest that computes stops at its epoch check before
/// then, and its instance stays usable) or when `token` is cancelled.
async fn stop_signal(deadline: Option<Instant>, token: Option<CancelToken>) {
    let sleep = {
        // wrt's runtime has the time driver; the embedder's may not.
        let wrt = crate::tokio_runtime::enter_own();
        deadline.filter(|_| wrt.is_some()).map(|deadline| tokio::time::sleep_until((deadline + TICK).into()))
    };
    let mut expired = pin!(async {
        match sleep {
            Some(sleep) => sleep.await,
            None => pending().await,
        }
    });
    let mut cancelled = pin!(async {
        match &token {
            Some(token) => token.cancelled().await,
            None => pending().await,
        }
    });
    poll_fn(|cx| match expired.as_mut().poll(cx).is_ready() || cancelled.as_mut().poll(cx).is_ready() {
        true => Poll::Ready(()),
        false => Poll::Pending,
    })
    .await
}

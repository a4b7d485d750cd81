//! One instantiated guest in its own store: run `_start`, invoke exports, inspect memory.
//!
//! One file per concern: running a [`Guest`] in a fresh instance (`guest_runs.rs`), assembling
//! an instance's store (`store_assembly.rs`), calls of its exports and access to its memory
//! (`exports.rs`), the budget and deadline of a call (`budget.rs`), how a call that stopped
//! becomes an [`Outcome`] (`trap.rs`), the report of a run (`report.rs`), and asynchronous runs
//! (`asynchronous.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Store;
use wasmtime_wasi::p2::bindings::sync::Command;

use crate::cancel::Registration;
use crate::epoch_ticker::EpochTicker;
use crate::guest_state::GuestState;
use crate::outcome::Outcome;
use crate::repoll::Repoll;
use crate::stop::RunDeadline;
use crate::sys::entry_point::EntryPoint;
use crate::sys::fiber_stack::FiberCount;
use crate::wasi::ctx::Captured;
#[cfg(doc)]
use crate::{guest::Guest, stats::Stats};

mod asynchronous;
mod budget;
mod exports;
mod guest_runs;
mod report;
mod serving;
mod store_assembly;
mod trap;

pub use report::Report;
pub use serving::{Answered, MAX_RESPONSE_BODY, Served};

/// A guest instantiated in its own store. Its memories live until it is dropped.
///
/// Instantiation runs wasm (the module's start function) under the sandbox's timeout and fuel.
/// When that code stops the guest (a trap, `proc_exit`, the timeout, no fuel left), the
/// instance is created anyway, in the ended state. A call in which the guest exits (`_start`
/// returns, or it calls `proc_exit`) ends it the same way; a call that traps, times out or runs
/// out of fuel ends its children but not the instance, which wasm lets run again (each later
/// call gets a fresh budget). Once ended, [`Instance::ended`] says how, and
/// [`Instance::run_start`] and [`Instance::invoke`] return that outcome without running
/// anything.
///
/// The timeout and fuel make one budget for instantiation and the first call together (the
/// timeout counts from the start of instantiation); each later call gets a fresh budget.
pub struct Instance {
    store: Store<GuestState>,
    state: State,
    /// The budget armed at instantiation is still the first call's.
    carried: bool,
    /// The run's timeout and the deadline of the current budget, in every form its readers see.
    deadline: RunDeadline,
    ticker: Arc<EpochTicker>,
    captured: Captured,
    guest_name: Arc<str>,
    fuel: Option<u64>,
    /// Whether the runtime meters fuel (so a run without a limit gets all it could need).
    metering: bool,
    /// The guest's command entry point, as the guest found it (none for a component).
    entry: Option<EntryPoint>,
    /// When instantiation started ([`Stats::wall_time`]).
    started: Instant,
    /// CPU time of the calls so far, instantiation included ([`Stats::cpu_time`]), when measured.
    cpu_time: Option<Duration>,
    /// Fuel burned by the calls so far ([`Stats::fuel_consumed`]).
    fuel_consumed: u64,
    /// The run's place with its cancel token, if it has one.
    cancel: Option<Registration>,
    /// Whether a call has looked for `_initialize` (and run it).
    initialized: bool,
    /// The fibers the run's asynchronous calls hold, counted from the first (a synchronous run
    /// counts none).
    fibers: Option<FiberCount>,
    /// The waker of the run's asynchronous calls, made at the first (a synchronous run makes
    /// none): one for all of them, so a call allocates none.
    repoll: Option<Repoll>,
}

enum State {
    Ready(wasmtime::Instance),
    /// A component, ready to run `wasi:cli/run`.
    Command(Box<Command>),
    /// A component of an asynchronous run, ready to run `wasi:cli/run`.
    CommandAsync(Box<wasmtime_wasi::p2::bindings::Command>),
    /// A command of WASI 0.3, ready to run its async `wasi:cli/run`.
    CommandP3(Box<wasmtime_wasi::p3::bindings::Command>),
    /// A `wasi:http` service, ready to answer one request.
    Service(Arc<wasmtime_wasi_http::handler::Proxy>),
    /// Instantiation or a call stopped the guest.
    Ended(Outcome),
}

/// The most bytes an instance may hold (linear memory, tables, host buffers) and still count as
/// quick to drop ([`Instance::drops_quickly`]): resetting that much memory takes well under a
/// millisecond.
const QUICK_DROP_BYTES: u64 = 8 << 20;

impl Instance {
    /// Whether dropping this instance is quick enough for an executor's worker: it holds at
    /// most [`QUICK_DROP_BYTES`], never started a child (ending a guest that did walks the
    /// process table) and had no spawn refused (its end may write held-back refusals to the
    /// audit log).
    pub(crate) fn drops_quickly(&self) -> bool {
        let state = self.store.data();
        !state.spawn.spawned_or_refused() && state.held_bytes() <= QUICK_DROP_BYTES
    }
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").field("guest", &self.guest_name).finish_non_exhaustive()
    }
}

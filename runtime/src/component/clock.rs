//! Clock sleeps of components made to stop at the guest's deadline.
//!
//! A component sleeps by subscribing to the monotonic clock and blocking on the pollable
//! (`wasi:io/poll.poll`, `pollable.block`), outside wasm, where the epoch callback cannot stop
//! it. Subscriptions made while a deadline is set wake no later than just past it; the guest
//! then resumes wasm and the epoch check stops it. Stdin and stdout are made deadline-aware as
//! for core modules (see `wasi::blocking_calls`), and `wrt:process` streams wait only until the
//! deadline themselves.

use std::time::{Duration, Instant};

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::clocks::WasiClocksView;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock::Host as _;
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

use crate::guest_state::GuestState;

/// The instance whose subscriptions are wrapped.
const MONOTONIC_CLOCK: &str = "wasi:clocks/monotonic-clock@0.2.12";
/// Past the deadline by this much when a shortened sleep wakes.
const MARGIN: Duration = Duration::from_millis(1);

/// Replaces the monotonic clock's `subscribe-duration` and `subscribe-instant` in `linker`,
/// which already holds WASI's.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut clock = linker.instance(MONOTONIC_CLOCK)?;
    clock.func_wrap("subscribe-duration", |store: StoreContextMut<'_, GuestState>, (nanos,): (u64,)| {
        sleep(store, Duration::from_nanos(nanos)).map(|pollable| (pollable,))
    })?;
    clock.func_wrap("subscribe-instant", |mut store: StoreContextMut<'_, GuestState>, (when,): (u64,)| {
        let now = store.data_mut().clocks().now()?;
        sleep(store, Duration::from_nanos(when.saturating_sub(now))).map(|pollable| (pollable,))
    })?;
    linker.allow_shadowing(false);
    Ok(())
}

/// A pollable ready after `duration`, or just past the guest's deadline if that comes first.
fn sleep(mut store: StoreContextMut<'_, GuestState>, duration: Duration) -> wasmtime::Result<Resource<DynPollable>> {
    let deadline = store.data().stop.deadline().map(|deadline| deadline + MARGIN);
    let wake = Instant::now().checked_add(duration);
    let wake = match (wake, deadline) {
        (Some(wake), Some(deadline)) => Some(wake.min(deadline)),
        (wake, deadline) => wake.or(deadline),
    };
    let table = store.data_mut().ctx().table;
    let sleep = table.push(Sleep { wake })?;
    subscribe(table, sleep)
}

/// Ready at `wake`; never when there is none (a duration too long to represent).
struct Sleep {
    wake: Option<Instant>,
}

#[async_trait::async_trait]
impl Pollable for Sleep {
    async fn ready(&mut self) {
        match self.wake {
            Some(wake) => tokio::time::sleep_until(wake.into()).await,
            None => std::future::pending().await,
        }
    }
}

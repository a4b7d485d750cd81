//! What a guest's `Store` holds.

use std::time::Instant;

use wasmtime::StoreLimits;
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::abi::spawn_state::SpawnState;

/// The per-guest host state.
pub(crate) struct GuestState {
    pub(crate) wasi: WasiP1Ctx,
    pub(crate) limits: StoreLimits,
    /// When the running call must stop, if a timeout is set.
    pub(crate) deadline: Option<Instant>,
    /// The guest's children and spawner (the `wrt_v1` ABI).
    pub(crate) spawn: SpawnState,
}

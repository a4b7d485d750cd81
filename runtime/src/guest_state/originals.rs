//! Where one store's wrappers of WASI functions find WASI's own (`wasi::original`).

use std::sync::Arc;

use wasmtime::{Instance, Linker};

use super::GuestState;
use crate::cache::LazyModule;

/// Where one store's wrappers find WASI's own functions, and the trampoline bound to the guest's
/// memory once a wrapper first needs it. Nothing is looked up before then: most guests never
/// call a wrapper that needs WASI's own (looking the functions up for every store cost about a
/// microsecond of each instantiation).
pub(crate) struct Originals {
    pub(crate) linker: Arc<Linker<GuestState>>,
    pub(crate) trampoline: Arc<LazyModule>,
    pub(crate) bound: Option<Instance>,
}

impl Originals {
    /// For a store of `linker`; `trampoline` is shared by the stores of a runtime and compiled
    /// on first use.
    pub(crate) fn new(linker: &Arc<Linker<GuestState>>, trampoline: &Arc<LazyModule>) -> Self {
        Self { linker: Arc::clone(linker), trampoline: Arc::clone(trampoline), bound: None }
    }
}

//! The WASI context of a component (0.2 and 0.3 share it), and its `wasi:http` context, in the
//! guest's store.

use wasmtime_wasi::{ResourceTable, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use super::GuestState;

/// The most resources (streams, pollables, children, buffers, descriptors) a component holds
/// at once: a guest that leaks handles gets an error, not the host's memory.
pub(crate) const MAX_RESOURCES: usize = 1 << 16;

/// A component's WASI context and the table of its resources.
pub(crate) struct P2 {
    pub(crate) ctx: WasiCtx,
    pub(crate) table: ResourceTable,
    /// `wasi:http`'s context, over the same table.
    pub(crate) http: super::http::Http,
}

impl P2 {
    /// The context `ctx`, and `wasi:http`'s (`http`).
    pub(crate) fn new(ctx: WasiCtx, http: super::http::Http) -> Self {
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self { ctx, table, http }
    }
}

impl WasiView for GuestState {
    /// A component always has a context; the fallback (empty: no arguments, environment, files
    /// or stdio) keeps even a broken invariant from panicking.
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let p2 = self.p2.get_or_insert_with(|| Box::new(P2::new(WasiCtx::builder().build(), Default::default())));
        WasiCtxView { ctx: &mut p2.ctx, table: &mut p2.table }
    }
}

impl WasiHttpView for GuestState {
    /// `wasi:http`'s context over the same table as WASI's (its `wasi:io` resources are shared).
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        let p2 = self.p2.get_or_insert_with(|| Box::new(P2::new(WasiCtx::builder().build(), Default::default())));
        WasiHttpCtxView { ctx: &mut p2.http.ctx, table: &mut p2.table, hooks: &mut p2.http.hooks }
    }
}

/// [`WasiHttpView::http`] as a function, for wasmtime-wasi-http's calls that take one.
pub(crate) fn http_view(state: &mut GuestState) -> WasiHttpCtxView<'_> {
    state.http()
}

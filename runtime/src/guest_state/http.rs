//! `wasi:http` for components: its context in the guest's store, and the hooks that decide
//! what a guest's outgoing requests may reach. wrt gives guests no network, so every outgoing
//! request is refused (`HTTP-request-denied`) before anything is sent.

use wasmtime_wasi_http::{WasiBody, WasiHttpCtx, WasiHttpHooks};

/// The hooks of a guest's `wasi:http`: outgoing requests are refused.
#[derive(Debug, Default)]
pub(crate) struct NoEgress;

/// What an outgoing request's future resolves to.
type Sent = wasmtime_wasi_http::Result<(
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
)>;

impl WasiHttpHooks for NoEgress {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<wasmtime_wasi_http::RequestOptions>,
        _io: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        Box::new(std::future::ready(Err(wasmtime_wasi_http::Error::HttpRequestDenied)))
    }
}

/// A component's `wasi:http` context, beside its WASI context (they share its resource table:
/// `p2.rs` gives the view of both).
#[derive(Debug, Default)]
pub(crate) struct Http {
    pub(super) ctx: WasiHttpCtx,
    pub(super) hooks: NoEgress,
}

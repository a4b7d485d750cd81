//! The `wasi:http` service of `wrt bench serve` (`wasi:http/handler@0.3.0`): every request is
//! answered 200 with `hello`, the least a service does, so that the benchmark measures what the
//! server spends per request (a fresh instance, the request and the response) rather than the
//! guest's own work.

use wasip3::http::types::{ErrorCode, Fields, Request, Response};
use wasip3::{wit_bindgen, wit_future, wit_stream};

wasip3::http::service::export!(Service);

struct Service;

impl wasip3::exports::http::handler::Guest for Service {
    async fn handle(_request: Request) -> Result<Response, ErrorCode> {
        let (mut tx, rx) = wit_stream::new();
        let (trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
        let (response, _sent) = Response::new(Fields::new(), Some(rx), trailers_rx);
        wit_bindgen::spawn_local(async move {
            tx.write_all(b"hello\n".to_vec()).await;
            drop(tx);
            drop(trailers_tx);
        });
        Ok(response)
    }
}

/// The WASI 0.2 entry point Rust's std exports for every bin; a server calls `handle`.
fn main() {
    std::process::exit(3);
}

//! A `wasi:http/proxy` service of WASI 0.2 (`wasi:http/incoming-handler@0.2.12`), for the tests
//! of `wrt serve`: `/` answers 200 `hello from a WASI 0.2 proxy`, `/error` the error code
//! `internal-error`, `/trap` traps, any other path 404.

use wasip2::http::types::{ErrorCode, Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

wasip2::http::proxy::export!(Proxy);

struct Proxy;

impl wasip2::exports::http::incoming_handler::Guest for Proxy {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let path = request.path_with_query().unwrap_or_default();
        let (status, body) = match path.as_str() {
            "/" => (200, &b"hello from a WASI 0.2 proxy\n"[..]),
            "/trap" => std::process::abort(),
            "/error" => {
                ResponseOutparam::set(out, Err(ErrorCode::InternalError(Some("asked for an error".into()))));
                return;
            }
            _ => (404, &b"not found\n"[..]),
        };
        let response = OutgoingResponse::new(Fields::new());
        let _ = response.set_status_code(status);
        let outgoing = response.body().expect("the response's body");
        ResponseOutparam::set(out, Ok(response));
        let stream = outgoing.write().expect("the body's stream");
        stream.blocking_write_and_flush(body).expect("write the body");
        drop(stream);
        OutgoingBody::finish(outgoing, None).expect("finish the body");
    }
}

/// The `wasi:cli/run` entry point Rust's std exports for every bin; a server calls `handle`.
fn main() {
    std::process::exit(3);
}

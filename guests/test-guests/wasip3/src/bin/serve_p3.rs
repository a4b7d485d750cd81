//! A `wasi:http` service of WASI 0.3 (`wasi:http/handler@0.3.0`), for the tests of `wrt
//! serve`. Its path picks what it does:
//! - `/`: 200, `hello from a WASI 0.3 service`;
//! - `/echo`: 200, the request's method and body;
//! - `/count`: 200, how many requests this instance has answered (1 in a fresh instance);
//! - `/stream`: 200, ten lines written after `handle` returned;
//! - `/error`: the error code `internal-error`; `/error-hostile`: the same, its message a
//!   terminal escape, a new line and 100,000 bytes; `/trap`: traps; `/spin`: computes without
//!   end;
//! - `/sleep`: waits 60 s;
//! - `/grow`: keeps 1 MiB more for the instance's life (touched, so it is memory) and answers
//!   with how many MiB it keeps; a request past the memory limit traps;
//! - `/spawn`: runs `echo from a child` through `wrt:process` and answers with its stdout;
//! - `/spawn-linger`: starts `sleep 30` through `wrt:process`, keeps its handle, and answers
//!   `started` without waiting for it;
//! - `/env`: the value of `GREETING`;
//! - `/nap`: waits 400 ms, then answers `napped`;
//! - `/linger`: answers `lingering`, and leaves a task of its own that waits 30 s, then adds
//!   1,000 to the counter `/count` reads;
//! - `/inflight`: waits 100 ms and answers with the most requests this instance was answering
//!   at once meanwhile (1 unless requests share an instance at once);
//! - `/fetch`: sends a request of its own to `http://$TARGET/` and answers with what became of
//!   it (`sent: STATUS BODY`, or `refused: CODE`) and what its transmission future (the one
//!   `Request::new` returns) resolved to (`; transmitted: Ok(())`, or `Err(CODE)`);
//! - `/fetch-dropped`: the same request, its transmission future dropped before it is sent;
//!   answers with what became of the request alone.

use std::sync::atomic::{AtomicU32, Ordering};

use wasip3::http::types::{ErrorCode, Fields, Request, Response, Scheme};
use wasip3::{wit_bindgen, wit_future, wit_stream};

wasip3::http::service::export!(Service);

struct Service;

/// What `/grow` keeps: 1 MiB more per request.
static KEPT: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Requests this instance has answered.
static ANSWERED: AtomicU32 = AtomicU32::new(0);
/// `/inflight` requests this instance is answering now, and the most it was at once.
static IN_FLIGHT: AtomicU32 = AtomicU32::new(0);
static MOST_IN_FLIGHT: AtomicU32 = AtomicU32::new(0);

impl wasip3::exports::http::handler::Guest for Service {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let count = ANSWERED.fetch_add(1, Ordering::SeqCst) + 1;
        let path = request.get_path_with_query().unwrap_or_default();
        match path.as_str() {
            "/" => Ok(respond(b"hello from a WASI 0.3 service\n".to_vec())),
            "/echo" => {
                let method = format!("{:?}\n", request.get_method());
                let (_, done) = wit_future::new(|| Ok(()));
                let (body, _trailers) = Request::consume_body(request, done);
                let mut text = method.into_bytes();
                text.extend(body.collect().await);
                Ok(respond(text))
            }
            "/count" => Ok(respond(format!("{count}\n").into_bytes())),
            "/stream" => {
                let (mut tx, rx) = wit_stream::new();
                let (trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
                let (response, _sent) = Response::new(Fields::new(), Some(rx), trailers_rx);
                wit_bindgen::spawn_local(async move {
                    for line in 0..10 {
                        tx.write_all(format!("line {line}\n").into_bytes()).await;
                    }
                    drop(tx);
                    drop(trailers_tx);
                });
                Ok(response)
            }
            "/error" => Err(ErrorCode::InternalError(Some("asked for an error".into()))),
            "/error-hostile" => {
                Err(ErrorCode::InternalError(Some(format!("\x1b[31mred\nwrt: forged line {}", "x".repeat(100_000)))))
            }
            "/trap" => std::process::abort(),
            "/spin" => {
                let mut x: u64 = 1;
                loop {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            "/grow" => {
                let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                kept.push(vec![1u8; 1 << 20]);
                Ok(respond(format!("{}\n", kept.len()).into_bytes()))
            }
            "/sleep" => {
                wasip3::clocks::monotonic_clock::wait_for(60_000_000_000).await;
                Ok(respond(b"slept\n".to_vec()))
            }
            "/spawn" => match wrt_process::Command::new("echo").arg("from a child").output() {
                Ok(output) => Ok(respond(output.stdout)),
                Err(err) => Ok(respond(format!("spawn failed: {err}\n").into_bytes())),
            },
            "/spawn-linger" => match wrt_process::Command::new("sleep").arg("30").spawn() {
                Ok(child) => {
                    // Kept, never waited for: the host ends it with the request.
                    std::mem::forget(child);
                    Ok(respond(b"started\n".to_vec()))
                }
                Err(err) => Ok(respond(format!("spawn failed: {err}\n").into_bytes())),
            },
            "/nap" => {
                wasip3::clocks::monotonic_clock::wait_for(400_000_000).await;
                Ok(respond(b"napped\n".to_vec()))
            }
            "/linger" => {
                wit_bindgen::spawn_local(async {
                    wasip3::clocks::monotonic_clock::wait_for(30_000_000_000).await;
                    ANSWERED.fetch_add(1000, Ordering::SeqCst);
                });
                Ok(respond(b"lingering\n".to_vec()))
            }
            "/inflight" => {
                let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
                MOST_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
                wasip3::clocks::monotonic_clock::wait_for(100_000_000).await;
                IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
                Ok(respond(format!("{}\n", MOST_IN_FLIGHT.load(Ordering::SeqCst)).into_bytes()))
            }
            "/env" => {
                let value = wasip3::cli::environment::get_environment()
                    .into_iter()
                    .find_map(|(name, value)| (name == "GREETING").then_some(value))
                    .unwrap_or_default();
                Ok(respond(format!("{value}\n").into_bytes()))
            }
            "/fetch" | "/fetch-dropped" => {
                let target = wasip3::cli::environment::get_environment()
                    .into_iter()
                    .find_map(|(name, value)| (name == "TARGET").then_some(value))
                    .unwrap_or_default();
                let (_, trailers) = wit_future::new(|| Ok(None));
                let (outgoing, transmitted) = Request::new(Fields::new(), None, trailers, None);
                let transmitted = match path.as_str() {
                    "/fetch" => Some(transmitted),
                    _ => {
                        drop(transmitted);
                        None
                    }
                };
                let _ = outgoing.set_scheme(Some(&Scheme::Http));
                let _ = outgoing.set_authority(Some(&target));
                let _ = outgoing.set_path_with_query(Some("/"));
                let answer = match wasip3::http::client::send(outgoing).await {
                    Ok(response) => {
                        let status = response.get_status_code();
                        let (_, done) = wit_future::new(|| Ok(()));
                        let (body, _trailers) = Response::consume_body(response, done);
                        format!("sent: {status} {}\n", String::from_utf8_lossy(&body.collect().await))
                    }
                    Err(code) => format!("refused: {code:?}\n"),
                };
                let answer = match transmitted {
                    Some(transmitted) => format!("{}; transmitted: {:?}\n", answer.trim_end(), transmitted.await),
                    None => answer,
                };
                Ok(respond(answer.into_bytes()))
            }
            _ => {
                let response = respond(b"not found\n".to_vec());
                let _ = response.set_status_code(404);
                Ok(response)
            }
        }
    }
}

/// A 200 response with `body`, written by a task of its own.
fn respond(body: Vec<u8>) -> Response {
    let (mut tx, rx) = wit_stream::new();
    let (trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
    let (response, _sent) = Response::new(Fields::new(), Some(rx), trailers_rx);
    wit_bindgen::spawn_local(async move {
        tx.write_all(body).await;
        drop(tx);
        drop(trailers_tx);
    });
    response
}

/// The WASI 0.2 entry point Rust's std exports for every bin; a server calls `handle`.
fn main() {
    std::process::exit(3);
}

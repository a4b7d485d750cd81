//! `wrt serve`: answers HTTP/1.1 requests with a `wasi:http` service component, each request
//! in a fresh instance (or, with `--reuse`, in one that answered fewer requests before) under
//! the options `wrt run` takes (timeout and fuel per request; preopens, environment, spawn
//! policy), until `SIGINT` or `SIGTERM`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use tokio::signal::unix::{SignalKind, signal};
use wrt_runtime::{Answered, GuestStdin, Outcome, ServicePool};

use super::run::RunArgs;

/// Serve HTTP requests with a `wasi:http` service component (WASI 0.3 `handler` or 0.2
/// `incoming-handler`), a fresh instance per request unless --reuse says otherwise
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Where to listen: HOST:PORT (port 0 picks a free port); the URL is the first line wrt
    /// writes to stderr
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,

    /// The most connections served at once; more wait in the listen queue until one closes.
    /// Each holds at most one request's instance at a time, so guests hold at most this many
    /// times --max-memory
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,

    /// How long a client may take to send a request's head, from the moment the server waits
    /// for it; past it the connection is closed, so that a client that sends nothing holds no
    /// connection slot for long
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = wrt_text::parse_duration)]
    header_timeout: Duration,

    /// How many requests one instance answers, one after another (1: a fresh instance for
    /// every request). A reused instance keeps its memory, globals and resources from one
    /// request to the next, and --max-memory holds for the instance; each request still has
    /// its own --timeout and --fuel, and its children end with it. A request that fails in any
    /// way (a trap, the timeout, no fuel, a bad answer, a task left running) ends its
    /// instance, and an instance idle for 1 s ends
    #[arg(long, value_name = "N", default_value = "1")]
    reuse: NonZeroU32,

    /// After SIGINT or SIGTERM, how long requests in flight may take to finish
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = wrt_text::parse_duration)]
    shutdown_timeout: Duration,

    /// Every option of `wrt run`, for each request's instance (`--timeout` and `--fuel` are per
    /// request, `--max-memory` per instance), and the component
    #[command(flatten)]
    run: RunArgs,
}

impl ServeArgs {
    pub(crate) fn run(mut self) -> anyhow::Result<ExitCode> {
        let (runtime, options, module, audited) = self.run.service_settings()?;
        let runtime = runtime.build()?;
        let guest = runtime.load_service_file(&module).map_err(super::run::with_hint)?;
        // A request's instance reads no stdin of wrt's.
        let pool = Arc::new(ServicePool::new(guest, options.stdin(GuestStdin::Null), self.reuse)?);
        let executor = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("wrt-serve")
            .build()
            .context("failed to start the server's threads")?;
        let limits = Limits {
            max_connections: self.max_connections,
            header_timeout: self.header_timeout,
            grace: self.shutdown_timeout,
            audited,
        };
        let code = executor.block_on(serve(pool, self.addr, limits));
        // Requests cut short hold threads (a guest waiting for a child): not waited for.
        executor.shutdown_background();
        // What the guests started ends with the server: their instances ended their children;
        // anything those left behind goes now.
        wrt_runtime::containment::sweep();
        code
    }
}

/// How the server serves, besides each request's options.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// Connections served at once.
    max_connections: u32,
    /// How long a request's head may take to come.
    header_timeout: Duration,
    /// How long requests in flight may take to finish after a termination signal.
    grace: Duration,
    /// Whether the options hold an audit log, whose records then name each request.
    audited: bool,
}

/// Listens on `addr` and answers every request until a termination signal, on at most
/// `limits.max_connections` connections at once; then waits up to `limits.grace` for the
/// requests in flight. Exits 0 after a graceful shutdown, 128 + the signal when a second
/// signal cuts it short.
async fn serve(pool: Arc<ServicePool>, addr: SocketAddr, limits: Limits) -> anyhow::Result<ExitCode> {
    let Limits { max_connections, header_timeout, grace, audited } = limits;
    let mut interrupt = signal(SignalKind::interrupt()).context("failed to handle SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("failed to handle SIGTERM")?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("failed to listen on {addr}"))?;
    let local = listener.local_addr().context("failed to read the address listened on")?;
    say!("Serving HTTP on http://{local}/");
    let ids = Arc::new(AtomicU64::new(0));
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections as usize));
    // Told to every connection when the server stops accepting.
    let (stop, _) = tokio::sync::watch::channel(());
    // Instances that waited too long for a request end, so an idle server holds none.
    let retiring = tokio::spawn({
        let pool = Arc::clone(&pool);
        async move {
            let mut every = tokio::time::interval(wrt_runtime::DEFAULT_IDLE_TIMEOUT / 2);
            loop {
                every.tick().await;
                pool.retire_idle();
            }
        }
    });
    loop {
        // A slot first: past the cap, connections wait in the listen queue, not in memory.
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot.context("the connection slots closed")?,
            _ = interrupt.recv() => break,
            _ = terminate.recv() => break,
        };
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(accepted) => accepted,
                    Err(err) => {
                        // Out of descriptors, or a connection reset before it was taken: the
                        // server goes on.
                        say!("wrt: failed to accept a connection: {err}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let (pool, ids) = (Arc::clone(&pool), Arc::clone(&ids));
                let mut stopping = stop.subscribe();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let id = ids.fetch_add(1, Ordering::Relaxed) + 1;
                        let pool = Arc::clone(&pool);
                        async move {
                            Ok::<_, Infallible>(answer(&pool, id, audited, request).await)
                        }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                    let mut connection = std::pin::pin!(connection);
                    // A client that goes away, or sends no HTTP, ends its own connection; at
                    // shutdown, a kept-alive connection takes no new request, and closes once
                    // the one in flight (if any) is answered.
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = stopping.changed() => {
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                    drop(slot);
                });
            }
            _ = interrupt.recv() => break,
            _ = terminate.recv() => break,
        }
    }
    drop(listener);
    retiring.abort();
    stop.send_replace(());
    // Every connection holds a slot until it has written its last response and closed: all
    // slots back means every request in flight was answered.
    let drained = slots.acquire_many(max_connections);
    tokio::select! {
        _ = drained => Ok(ExitCode::SUCCESS),
        () = tokio::time::sleep(grace) => {
            let open = max_connections as usize - slots.available_permits();
            say!("wrt: {open} connections still open after {grace:?}: ending their requests");
            Ok(ExitCode::SUCCESS)
        }
        _ = interrupt.recv() => Ok(ExitCode::from(128 + 2)),
        _ = terminate.recv() => Ok(ExitCode::from(128 + 15)),
    }
}

/// The answer to request `id` (named in the audit records of its spawns when `audited`): the
/// guest's response, or 500 (504 for the timeout) when it gave none, said on stderr.
async fn answer(
    pool: &ServicePool,
    id: u64,
    audited: bool,
    request: http::Request<Incoming>,
) -> http::Response<Full<Bytes>> {
    let label = audited.then(|| id.to_string());
    // Boxed once here, rather than copied into each future that holds it (hyper's among them).
    let answered = match Box::pin(pool.serve_async(request, label.as_deref())).await {
        Ok(answered) => answered,
        Err(err) => {
            say!("wrt: request {id}: {}", wrt_text::error_chain(&*err));
            return status(http::StatusCode::INTERNAL_SERVER_ERROR);
        }
    };
    let Answered { outcome, response, .. } = answered;
    match response {
        Ok(response) => response.map(Full::new),
        Err(why) => {
            let (code, why) = match &outcome {
                Outcome::TimedOut(after) => (http::StatusCode::GATEWAY_TIMEOUT, format!("timed out after {after:?}")),
                // The trap's first line: one line a request (the backtrace follows it).
                Outcome::Trapped(trap) => {
                    let trap = trap.to_string();
                    let first = trap.lines().next().unwrap_or_default();
                    (http::StatusCode::INTERNAL_SERVER_ERROR, format!("trapped: {first}"))
                }
                Outcome::OutOfFuel(fuel) => {
                    (http::StatusCode::INTERNAL_SERVER_ERROR, format!("ran out of fuel (all {fuel} units used)"))
                }
                _ => (http::StatusCode::INTERNAL_SERVER_ERROR, why),
            };
            say!("wrt: request {id}: {why}");
            status(code)
        }
    }
}

/// An empty response of `code`.
fn status(code: http::StatusCode) -> http::Response<Full<Bytes>> {
    let mut response = http::Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

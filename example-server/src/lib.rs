//! A small HTTP service that runs a wrt guest per request, asynchronously: the pattern a server
//! embedding `wrt-runtime` follows.
//!
//! One [`Runtime`] and one [`Guest`], compiled once; per request, [`RunOptions`] cloned from a
//! profile the server defines (its spawn policy compiled once, at start) with the request's
//! arguments, body as stdin, timeout, request id and a [`CancelToken`]; the run is
//! [`Guest::run_async`] on the server's few executor threads. A client that hangs up cancels
//! its run: hyper drops the request's future when the connection closes, a guard in it cancels
//! the token, and the run (in its own task) ends at once with [`Outcome::Cancelled`], its
//! children killed.
//!
//! # The protocol
//!
//! `POST /run?ARG&ARG…` runs the guest with the query's parts (split on `&`, `+` read as a
//! space) as its arguments and the request body as its stdin. Headers:
//! - `x-wrt-profile: NAME` picks one of the server's [`Profile`]s (default: `default`);
//! - `x-wrt-timeout-ms: N` shortens the run's timeout (never past the server's maximum).
//!
//! The answer's body is the guest's stdout (captured up to [`Config::max_output`]); its header
//! `x-wrt-outcome` says how the run ended (`exited 0`, `timed out`, `trapped`, …). Status:
//! 200 when the guest exited (whatever its code, also in `x-wrt-exit-code`), 504 when it timed
//! out, 500 when it trapped, ran out of fuel or wrt failed, 400 for a bad header or an unknown
//! profile, 404 and 405 for other paths and methods, 413 for a body over
//! [`Config::max_body`].
//!
//! # Examples
//!
//! ```no_run
//! use std::sync::Arc;
//! use wrt_example_server::{Config, Profile, Service};
//! use wrt_runtime::wrt_host_spawn::Policy;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::new("handler.wasm").profile(Profile::new("ls", Policy::deny_all().allow_program("ls")));
//! let service = Arc::new(Service::new(&config)?);
//! let executor = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
//! executor.block_on(async {
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//!     wrt_example_server::serve(listener, service).await
//! })?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{CancelToken, Guest, GuestOutput, GuestStdin, Outcome, Report, RunOptions, Runtime};

/// A spawn policy a request may pick by name (`x-wrt-profile`). Clients choose among the
/// server's profiles; they never send a policy.
#[derive(Debug, Clone)]
pub struct Profile {
    name: String,
    policy: Policy,
}

impl Profile {
    /// A profile called `name` whose runs spawn under `policy`.
    pub fn new(name: impl Into<String>, policy: Policy) -> Self {
        Self { name: name.into(), policy }
    }
}

/// What the server runs and how.
#[derive(Debug, Clone)]
pub struct Config {
    /// The guest every request runs.
    pub guest: PathBuf,
    /// The profiles requests may pick; `default` is always there (deny-all unless replaced).
    pub profiles: Vec<Profile>,
    /// The longest a run may last, and its timeout when the request asks none. Default: 10 s.
    pub max_timeout: Duration,
    /// Each run's memory limit. Default: 256 MiB.
    pub max_memory: u64,
    /// The most bytes of stdout (and of stderr) kept per run. Default: 1 MiB.
    pub max_output: usize,
    /// The largest request body (the guest's stdin). Default: 1 MiB.
    pub max_body: usize,
    /// Where every run's audit records go, labelled with the request's id. Default: none.
    pub audit: Option<AuditSink>,
}

impl Config {
    /// A server of `guest` with the defaults listed at each field.
    pub fn new(guest: impl Into<PathBuf>) -> Self {
        Self {
            guest: guest.into(),
            profiles: Vec::new(),
            max_timeout: Duration::from_secs(10),
            max_memory: 256 << 20,
            max_output: 1 << 20,
            max_body: 1 << 20,
            audit: None,
        }
    }

    /// Adds (or replaces) a profile.
    #[must_use]
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profiles.retain(|p| p.name != profile.name);
        self.profiles.push(profile);
        self
    }
}

/// How the runs the server started have ended so far.
#[derive(Debug, Default)]
pub struct Counters {
    /// Runs started.
    pub runs: AtomicU64,
    /// Runs whose guest exited.
    pub exited: AtomicU64,
    /// Runs that timed out.
    pub timed_out: AtomicU64,
    /// Runs cancelled because their client hung up.
    pub cancelled: AtomicU64,
    /// Runs that trapped, ran out of fuel, or failed in wrt.
    pub failed: AtomicU64,
}

impl Counters {
    fn record(&self, result: &wrt_runtime::Result<Report>) {
        let counter = match result.as_ref().map(|report| &report.outcome) {
            Ok(Outcome::Exited(_)) => &self.exited,
            Ok(Outcome::TimedOut(_)) => &self.timed_out,
            Ok(Outcome::Cancelled) => &self.cancelled,
            _ => &self.failed,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// The service: the guest, compiled once, and each profile's options, built once.
#[derive(Debug)]
pub struct Service {
    guest: Guest,
    profiles: BTreeMap<String, RunOptions>,
    max_timeout: Duration,
    max_body: usize,
    next_id: AtomicU64,
    counters: Arc<Counters>,
}

impl Service {
    /// Loads the guest and compiles every profile's policy.
    ///
    /// # Errors
    ///
    /// The guest cannot be loaded, or a profile's policy names a program that cannot be
    /// resolved.
    pub fn new(config: &Config) -> wrt_runtime::Result<Self> {
        let guest = Runtime::new()?.load_file(&config.guest)?;
        let capture = GuestOutput::Capture { limit: config.max_output };
        let mut base = RunOptions::new().stdout(capture.clone()).stderr(capture).max_memory(config.max_memory);
        if let Some(audit) = &config.audit {
            base = base.audit_sink(audit.clone());
        }
        let mut profiles = BTreeMap::from([("default".to_owned(), base.clone().spawn_policy(&Policy::deny_all())?)]);
        for profile in &config.profiles {
            profiles.insert(profile.name.clone(), base.clone().spawn_policy(&profile.policy)?);
        }
        Ok(Self {
            guest,
            profiles,
            max_timeout: config.max_timeout,
            max_body: config.max_body,
            next_id: AtomicU64::new(1),
            counters: Arc::default(),
        })
    }

    /// How the runs have ended so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Answers one request (see the crate's docs for the protocol).
    pub async fn handle(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        if request.uri().path() != "/run" {
            return plain(StatusCode::NOT_FOUND, "the only path is /run\n");
        }
        if request.method() != Method::POST {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "POST /run\n");
        }
        let headers = request.headers();
        let profile = match headers.get("x-wrt-profile").map(HeaderValue::to_str) {
            None => "default",
            Some(Ok(name)) => name,
            Some(Err(_)) => return plain(StatusCode::BAD_REQUEST, "x-wrt-profile is not text\n"),
        };
        let Some(options) = self.profiles.get(profile) else {
            return plain(StatusCode::BAD_REQUEST, "no such profile\n");
        };
        let timeout = match headers.get("x-wrt-timeout-ms").map(|v| v.to_str().ok().and_then(|v| v.parse().ok())) {
            None => self.max_timeout,
            Some(Some(ms)) if ms > 0 => Duration::from_millis(ms).min(self.max_timeout),
            Some(_) => return plain(StatusCode::BAD_REQUEST, "x-wrt-timeout-ms is not a positive number\n"),
        };
        let args: Vec<String> = request.uri().query().map(query_args).unwrap_or_default();
        let body = match Limited::new(request.into_body(), self.max_body).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => return plain(StatusCode::PAYLOAD_TOO_LARGE, "the body is over the server's limit\n"),
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let token = CancelToken::new();
        let options = options
            .clone()
            .args(args)
            .stdin(GuestStdin::Bytes(body.to_vec()))
            .timeout(timeout)
            .request_id(id.to_string())
            .cancel_token(token.clone());
        // Cancels the run if this future is dropped before the run ends: hyper drops it when
        // the client hangs up.
        let hang_up = CancelOnDrop(Some(token));
        let (guest, counters) = (self.guest.clone(), Arc::clone(&self.counters));
        counters.runs.fetch_add(1, Ordering::SeqCst);
        // The run has a task of its own, so that a cancelled run still ends (and is counted).
        let run = tokio::spawn(async move {
            let result = guest.run_async(&options).await;
            counters.record(&result);
            result
        });
        let result = run.await;
        hang_up.disarm();
        match result {
            Ok(Ok(report)) => answer(report),
            Ok(Err(err)) => plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("wrt failed: {err:#}\n")),
            Err(_) => plain(StatusCode::INTERNAL_SERVER_ERROR, "the run's task failed\n"),
        }
    }
}

/// Cancels its token when dropped, unless disarmed.
struct CancelOnDrop(Option<CancelToken>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// The guest's arguments from a query: its parts split on `&`, `+` read as a space.
fn query_args(query: &str) -> Vec<String> {
    query.split('&').filter(|part| !part.is_empty()).map(|part| part.replace('+', " ")).collect()
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response
}

/// The answer to a run that ended with `report`.
fn answer(report: Report) -> Response<Full<Bytes>> {
    let (status, outcome) = match &report.outcome {
        Outcome::Exited(code) => (StatusCode::OK, format!("exited {code}")),
        Outcome::TimedOut(_) => (StatusCode::GATEWAY_TIMEOUT, "timed out".to_owned()),
        Outcome::Trapped(_) => (StatusCode::INTERNAL_SERVER_ERROR, "trapped".to_owned()),
        Outcome::OutOfFuel(_) => (StatusCode::INTERNAL_SERVER_ERROR, "out of fuel".to_owned()),
        Outcome::Cancelled => (StatusCode::INTERNAL_SERVER_ERROR, "cancelled".to_owned()),
        other => (StatusCode::INTERNAL_SERVER_ERROR, format!("{other:?}")),
    };
    let mut response = Response::new(Full::new(Bytes::from(report.stdout)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&outcome) {
        headers.insert("x-wrt-outcome", value);
    }
    if let Outcome::Exited(code) = report.outcome {
        headers.insert("x-wrt-exit-code", HeaderValue::from(code));
    }
    response
}

/// Accepts connections on `listener` and serves each on a task of its own, until accepting
/// fails.
///
/// # Errors
///
/// Accepting a connection failed.
pub async fn serve(listener: tokio::net::TcpListener, service: Arc<Service>) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let service = Arc::clone(&service);
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request| {
                let service = Arc::clone(&service);
                async move { Ok::<_, Infallible>(service.handle(request).await) }
            });
            // A connection that fails (a client that hangs up) ends here; its run was cancelled.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
        });
    }
}

#[cfg(test)]
mod import_graph;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parts_are_the_arguments() {
        assert_eq!(query_args("a&b+c&&d"), ["a", "b c", "d"]);
        assert!(query_args("").is_empty());
    }
}

//! `wrt-runtime` runs WebAssembly guests (WASI preview 1 core modules, and WASI 0.2 and 0.3
//! command components) in wasmtime, with every guest linear memory and GC heap mapped by wrt's own
//! memory creator and marked `MADV_DONTFORK`, so that a `fork()` of the host never copies the
//! guest's page tables.
//!
//! The shape is the one wasmtime embedders know:
//!
//! - a [`Runtime`] is shared by the whole process (clone it into every thread): one engine, the
//!   compile cache, the epoch ticker;
//! - a [`Guest`] is compiled and linked once per runtime ([`Runtime::load_file`]) and run any
//!   number of times, from any thread, each run in a fresh store;
//! - [`RunOptions`] say what one run sees and may use: arguments, environment, preopened
//!   directories, stdio, memory limit, fuel, timeout, spawn policy, collection policy. They
//!   cost no system call to build or change, so a server can make one per request.
//!
//! How a guest ended is an [`Outcome`]: exited with a code, trapped (with the trap and wasm
//! backtrace), timed out, out of fuel. Errors ([`Error`]) are kept for failures of wrt itself: a
//! missing file, bytes that are not wasm, an unknown import, invalid options. Each names what
//! failed; its cause (an I/O error, wasmtime's message) follows in the error's chain: `{err:#}`
//! prints the whole chain on one line, `err.chain()` yields each cause.
//!
//! # Examples
//!
//! ```no_run
//! use wrt_runtime::{DirAccess, Outcome, RunOptions, Runtime};
//!
//! # fn main() -> wrt_runtime::Result<()> {
//! let runtime = Runtime::new()?;
//! let guest = runtime.load_file("app.wasm")?;
//! let options = RunOptions::new()
//!     .args(["input.txt"])
//!     .preopen("./data", "/data", DirAccess::ReadOnly)
//!     .max_memory(512 << 20);
//! match guest.run(&options)?.outcome {
//!     Outcome::Exited(code) => println!("exited with {code}"),
//!     other => println!("ended: {other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! # Host programs
//!
//! A guest may run host programs through the `wrt_v1` ABI (docs/abi.md) only as a spawn
//! policy allows: deny by default, a resolved-path allowlist, a scrubbed environment, limits
//! per program (docs/policy.md). Build the policy with [`wrt_host_spawn::Policy`] (or read a
//! TOML file with [`wrt_host_spawn::Policy::from_file`]); [`RunOptions::spawn_policy`] compiles
//! it once, and clones of the options share the compiled form, so starting a run resolves
//! nothing again.
//!
//! ```no_run
//! use std::time::Duration;
//! use wrt_runtime::wrt_host_spawn::Policy;
//! use wrt_runtime::{RunOptions, Runtime};
//!
//! # fn main() -> wrt_runtime::Result<()> {
//! let policy = Policy::deny_all()
//!     .allow_program("ls")
//!     .allow_program("/usr/bin/git")
//!     .env_passthrough(["LANG"])
//!     .timeout(Some(Duration::from_secs(10)));
//! let options = RunOptions::new().spawn_policy(&policy)?.audit_log("spawns.jsonl");
//! let runtime = Runtime::new()?;
//! for request in ["a.wasm", "b.wasm"] {
//!     // Per request: a clone shares the compiled policy.
//!     let report = runtime.load_file(request)?.run(&options.clone().arg(request))?;
//!     println!("{request}: {:?}, {} spawns", report.outcome, report.stats.spawns);
//! }
//! # Ok(()) }
//! ```
//!
//! # HTTP services
//!
//! A `wasi:http` service component (WASI 0.3's `handler` or 0.2's `incoming-handler`), loaded
//! with [`Runtime::load_service_file`], answers each request in a fresh instance with
//! [`Guest::serve_async`], under the request's [`RunOptions`] (its timeout, fuel, memory limit
//! and spawn policy); `wrt serve` is a server built on it. The guest's outgoing requests are
//! refused.
//!
//! ```no_run
//! use wrt_runtime::{RunOptions, Runtime};
//!
//! # fn main() {}
//! # pub async fn answer(request: http::Request<http_body_util::Full<bytes::Bytes>>) -> wrt_runtime::Result<()> {
//! let service = Runtime::new()?.load_service_file("service.wasm")?;
//! let options = RunOptions::new().timeout(std::time::Duration::from_secs(5));
//! let served = service.serve_async(&options, request).await?;
//! match served.response {
//!     Ok(response) => println!("{}: {} bytes", response.status(), response.body().len()),
//!     Err(why) => println!("no response ({:?}): {why}", served.report.outcome),
//! }
//! # Ok(()) }
//! ```
//!
//! # Timeout, fuel and start functions
//!
//! [`RunOptions::timeout`] and [`RunOptions::fuel`] bound a run from the start of
//! instantiation: the module's start function, then `_start` (or the invoked export after
//! `_initialize`) share one deadline and one fuel budget. Fuel needs a runtime that meters it
//! ([`RuntimeBuilder::fuel`]); timeouts work on every runtime (one epoch ticker thread per
//! runtime, ticking only while a run with a deadline is in progress). A start function that
//! traps, exits, times out or runs out of fuel gives a [`Report`] with that [`Outcome`] from
//! [`Guest::run`] and [`Guest::invoke`], not an error; [`Guest::instantiate`] then returns an
//! [`Instance`] that has already ended ([`Instance::ended`]). The timeout also stops a guest
//! blocked in the `wrt_v1` ABI, in a read of the inherited stdin, in a write to an inherited
//! stdout or stderr pipe nobody reads, or in a `poll_oneoff` sleep on a relative clock; an
//! absolute-time `poll_oneoff` is stopped when it returns. `proc_exit` with
//! any status is [`Outcome::Exited`], never a trap.
//!
//! # Servers: async runs, cancellation, streaming, host functions
//!
//! [`Guest::run_async`] (and [`Guest::instantiate_async`], [`Instance::run_start_async`],
//! [`Instance::call_async`]) runs the guest on a fiber: the future yields while the guest
//! waits (a sleep, a stream) and at every epoch tick while it computes, so a few executor
//! threads keep many requests in flight. The synchronous calls work inside tokio too (they
//! move off the executor where they must), but hold a thread per run.
//!
//! ```no_run
//! use std::time::Duration;
//! use wrt_runtime::{CancelToken, GuestOutput, RunOptions, Runtime};
//!
//! # async fn serve() -> wrt_runtime::Result<()> {
//! let guest = Runtime::new()?.load_file("handler.wasm")?;
//! for _request in 0..100 {
//!     let guest = guest.clone();
//!     let token = CancelToken::new(); // cancelled when the client hangs up
//!     tokio::spawn(async move {
//!         let options = RunOptions::new()
//!             .stdout(GuestOutput::Capture { limit: 1 << 20 })
//!             .timeout(Duration::from_secs(5))
//!             .cancel_token(token);
//!         let report = guest.run_async(&options).await?;
//!         Ok::<_, wrt_runtime::Error>(report.stdout)
//!     });
//! }
//! # Ok(()) }
//! # fn main() { let _ = serve; }
//! ```
//!
//! [`RunOptions::cancel_token`] ties a run to a [`CancelToken`] that any thread cancels (a
//! client that hung up): the run's children are killed at once and the guest stops with
//! [`Outcome::Cancelled`]. [`GuestOutput::writer`] and [`GuestStdin::reader`] stream the
//! guest's standard streams through the embedder's own `Write` and `Read`, keeping nothing.
//! [`RuntimeBuilder::link_modules`] and [`RuntimeBuilder::link_components`] add the embedder's
//! host functions, which read the run's own data ([`RunOptions::host_data`]) from
//! [`GuestState::host_data`]; [`Instance::call`] and [`Instance::typed_call`] call exports with
//! wasmtime's values, [`Instance::read_memory`] and [`Instance::write_memory`] reach the guest's
//! memory. [`RunOptions::audit_sink`] shares one audit log among runs, each record naming its
//! guest and [`RunOptions::request_id`].
//!
//! ```no_run
//! use std::time::Duration;
//! use wrt_runtime::{CancelToken, GuestOutput, Outcome, RunOptions, Runtime};
//!
//! # fn main() -> wrt_runtime::Result<()> {
//! let guest = Runtime::new()?.load_file("handler.wasm")?;
//! let token = CancelToken::new();
//! let options = RunOptions::new()
//!     .stdout(GuestOutput::writer(std::io::stdout()))
//!     .timeout(Duration::from_secs(30))
//!     .cancel_token(token.clone());
//! // Elsewhere, when the client goes away: `token.cancel()`.
//! match guest.run(&options)?.outcome {
//!     Outcome::Cancelled => println!("cancelled"),
//!     other => println!("ended: {other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! # Host buffers and collections
//!
//! Guests may hold host-side byte buffers through the `wrt_v1` ABI (docs/abi.md, "Host
//! buffers"), by handle or as `externref`. Their bytes live in `MADV_DONTFORK` memory and count
//! against [`RunOptions::max_memory`]. A [`GcPolicy`] decides when the host asks the guest's
//! own collector (its exported `wrt_gc`) and wasmtime's to free them; every [`Report`] carries
//! the [`Stats`] of the run.
//!
//! ```no_run
//! use wrt_runtime::{GcPolicy, RunOptions, Runtime};
//!
//! # fn main() -> wrt_runtime::Result<()> {
//! let options = RunOptions::new()
//!     .max_memory(1 << 30)
//!     // Young collections every 8 MiB of new buffers; rejected if above half the soft limit.
//!     .gc_policy(GcPolicy::new(8 << 20, GcPolicy::DEFAULT_SOFT_LIMIT, 2.0)?);
//! let report = Runtime::new()?.load_file("buffers.wasm")?.run(&options)?;
//! let stats = report.stats;
//! println!("{} young / {} full collections, peak {} bytes of buffers",
//!     stats.young_collections, stats.full_collections, stats.peak_external);
//! # Ok(()) }
//! ```
//!
//! # Child processes and process-wide settings
//!
//! A guest's children never outlive the guest: when it ends (exit, trap, timeout, fuel, or
//! the [`Instance`] is dropped), every child still running is killed with everything below
//! it, whatever its session or process group, and reaped. That much needs no setting of the
//! process. Two things do, and they belong to whoever owns the process, never to a library:
//!
//! - [`containment::contain_descendants`] makes the process a child subreaper, so that the
//!   orphans a child leaves (a `setsid` daemon, a double fork whose middle process exited)
//!   are reparented to it, reaped by a thread as they exit, and swept when a guest ends. Only a
//!   process whose children are all wrt's may opt in: a sweep ends every child no spawner
//!   tracks, and the thread reaps every such child that exits.
//! - [`containment::end_on_signals`] makes `SIGTERM`, `SIGINT` and `SIGHUP` kill and reap every
//!   descendant and exit with 128 + the signal; signals ignored at startup stay ignored. It
//!   installs a handler; the thread that does the cleanup starts with the first spawn.
//!
//! The `wrt` CLI does both (`wrt bench` only the second). An embedder that handles signals
//! itself calls [`containment::end_all_descendants`] from its own handler thread.
//!
//! # Platform-specific behavior
//!
//! Linux only, like `wrt-host-spawn`, on which every sandbox depends (it refuses to build for
//! any other system). Guest memory and host buffers rely on Linux's `MADV_DONTFORK`.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod abi;
mod cache;
mod cancel;
mod capture;
mod collector;
mod component;
mod embedder_streams;
mod epoch_ticker;
mod error;
mod external;
mod guest;
mod guest_state;
mod guest_stdio;
mod host_fn;
mod http_client;
#[cfg(test)]
mod import_graph;
mod instance;
mod limiter;
mod load;
mod module_file;
mod network;
mod options;
mod outcome;
mod preopen;
mod preopen_reach;
mod process_service;
mod repoll;
mod runtime;
mod service_pool;
mod shown_text;
mod stats;
mod stop;
#[allow(
    unsafe_code,
    reason = "maps guest memory, implements wasmtime's unsafe memory traits, loads compiled code, reads extended attributes, which nix does not wrap, and installs a signal handler"
)]
mod sys;
mod tokio_runtime;
mod value;
mod wasi;

pub use cache::{CACHE_KEY_ATTR, CacheError, CacheMode, CacheUsage, DEFAULT_CACHE_LIMIT, ENTRY_MAC_ATTR};
pub use cancel::CancelToken;
pub use embedder_streams::{InputReader, OutputWriter};
pub use error::{ConfigError, InstantiateError, LoadError, Reach};
pub use external::gc_policy::GcPolicy;
pub use guest::{Guest, WasiVersion};
pub use guest_state::GuestState;
pub use guest_stdio::{GuestOutput, GuestStdin};
pub use instance::{Answered, Instance, MAX_RESPONSE_BODY, Report, Served};
pub use module_file::MAX_MODULE_BYTES;
pub use network::{HttpRule, HttpRuleError, NetRule, NetRuleError};
pub use options::RunOptions;
pub use outcome::{EXIT_TIMEOUT, EXIT_TRAP, Outcome, TrapInfo};
pub use preopen::{DirAccess, Preopen};
pub use process_service::spawn_state::DeniedSpawn;
pub use runtime::{Runtime, RuntimeBuilder, SLOW_COMPILE};
pub use service_pool::{DEFAULT_IDLE_TIMEOUT, ServicePool};
pub use stats::Stats;
pub use sys::memory_pool::PoolLimits;
pub use sys::precompiled::PrecompiledFile;
pub use value::{WasmType, WasmValue};
pub use wasmtime;
/// The error of every fallible call: wasmtime's, holding wrt's typed errors ([`LoadError`],
/// [`InstantiateError`], [`ConfigError`]) for `downcast_ref`. `{err}` gives the outermost message
/// (what failed), `{err:#}` the whole chain on one line (what failed and why), and `{err:?}`
/// the causes one per line.
pub use wasmtime::Error;

/// `Result` with wrt's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
pub use wrt_abi::ErrorCode;
pub use wrt_host_spawn;
pub use wrt_host_spawn::containment;

/// The README's Rust examples, compiled and checked as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExamples;

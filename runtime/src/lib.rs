//! `wrt-runtime` runs WebAssembly guests (WASI preview 1 core modules) in wasmtime, with every
//! guest linear memory and GC heap mapped by wrt's own memory creator and marked
//! `MADV_DONTFORK`, so that a `fork()` of the host never copies the guest's page tables.
//!
//! A [`Sandbox`] holds the settings (arguments, environment, preopened directories, stdio,
//! memory limit, fuel, timeout); it loads guests from files or bytes (compiled modules are
//! cached on disk) and runs them. How a guest ended is an [`Outcome`]: exited with a code,
//! trapped (with the trap and wasm backtrace), timed out, out of fuel. Errors are kept for
//! failures of wrt itself: a missing file, bytes that are not wasm, an unknown import.
//!
//! # Examples
//!
//! ```no_run
//! use wrt_runtime::{DirAccess, Outcome, Sandbox};
//!
//! # fn main() -> wasmtime::Result<()> {
//! let sandbox = Sandbox::builder()
//!     .args(["input.txt"])
//!     .preopen("./data", "/data", DirAccess::ReadOnly)
//!     .max_memory(512 << 20)
//!     .build()?;
//! let guest = sandbox.load_file("app.wasm")?;
//! match sandbox.run(&guest)?.outcome {
//!     Outcome::Exited(code) => println!("exited with {code}"),
//!     other => println!("ended: {other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! # Timeout, fuel and start functions
//!
//! [`SandboxBuilder::timeout`] and [`SandboxBuilder::fuel`] bound a run from the start of
//! instantiation: the module's start function, then `_start` (or the invoked export after
//! `_initialize`) share one deadline and one fuel budget. A start function that traps, exits,
//! times out or runs out of fuel gives a [`Report`] with that [`Outcome`] from [`Sandbox::run`]
//! and [`Sandbox::invoke`], not an error; [`Sandbox::instantiate`] then returns an
//! [`Instance`] that has already ended ([`Instance::ended`]). The timeout also stops a guest
//! blocked in the `wrt_v1` ABI, in a read of the inherited stdin, in a write to an inherited
//! stdout or stderr pipe nobody reads, or in a `poll_oneoff` sleep on a relative clock; an
//! absolute-time `poll_oneoff` is stopped when it returns. `proc_exit` with
//! any status is [`Outcome::Exited`], never a trap.
//!
//! # Host buffers and collections
//!
//! Guests may hold host-side byte buffers through the `wrt_v1` ABI (docs/abi.md, "Host
//! buffers"), by handle or as `externref`. Their bytes live in `MADV_DONTFORK` memory and count
//! against [`SandboxBuilder::max_memory`]. A [`GcPolicy`] decides when the host asks the guest's
//! own collector (its exported `wrt_gc`) and wasmtime's to free them; every [`Report`] carries
//! the [`Stats`] of the run.
//!
//! ```no_run
//! use wrt_runtime::{GcPolicy, Sandbox};
//!
//! # fn main() -> wasmtime::Result<()> {
//! let sandbox = Sandbox::builder()
//!     .max_memory(1 << 30)
//!     // Young collections every 8 MiB of new buffers; rejected if above half the soft limit.
//!     .gc_policy(GcPolicy::new(8 << 20, GcPolicy::DEFAULT_SOFT_LIMIT, 2.0)?)
//!     .build()?;
//! let report = sandbox.run(&sandbox.load_file("buffers.wasm")?)?;
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
//!   are reparented to it and swept when a guest ends. Only a process whose children are all
//!   wrt's may opt in: a sweep ends every child no spawner tracks.
//! - [`containment::end_on_signals`] makes `SIGTERM`, `SIGINT` and `SIGHUP` kill and reap every
//!   descendant and exit with 128 + the signal; signals ignored at startup stay ignored. It
//!   must run in `main` before any thread starts.
//!
//! The `wrt` CLI does both. An embedder that handles signals itself calls
//! [`containment::end_all_descendants`] from its own handler thread.
//!
//! # Platform-specific behavior
//!
//! Linux only, like `wrt-host-spawn`, on which every sandbox depends (it refuses to build for
//! any other system). Guest memory and host buffers rely on Linux's `MADV_DONTFORK`.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod abi;
mod builder;
mod cache;
mod deadline;
mod error;
mod external;
mod guest;
mod instance;
mod limiter;
mod outcome;
mod preopen;
mod sandbox;
mod state;
mod stats;
mod stdio;
#[allow(unsafe_code, reason = "maps guest memory and implements wasmtime's unsafe memory traits")]
mod sys;
mod units;
mod wasi_ctx;
mod wasi_deadline;
mod wasi_exit;

pub use abi::spawn_state::DeniedSpawn;
pub use builder::{SLOW_COMPILE, SandboxBuilder};
pub use cache::{CacheMode, CacheUsage};
pub use error::{ConfigError, InstantiateError, LoadError};
pub use external::policy::GcPolicy;
pub use guest::Guest;
pub use instance::{Instance, Report};
pub use outcome::{Outcome, TrapInfo, WasmValue};
pub use preopen::{DirAccess, Preopen};
pub use sandbox::Sandbox;
pub use stats::Stats;
pub use stdio::{GuestOutput, GuestStdin};
pub use units::{UnitError, parse_bytes, parse_duration, parse_size};
pub use wasmtime;
pub use wrt_abi::ErrorCode;
pub use wrt_host_spawn;
pub use wrt_host_spawn::containment;

//! The tokio runtime that wasmtime-wasi's synchronous bindings run a guest's WASI calls on.
//!
//! Those bindings drive each call's future on the calling thread's tokio runtime, or, when the
//! thread has none, on a process-wide runtime of their own, made on the first call with a
//! worker thread per CPU (sizing it reads the CPU count and the cgroup's quota). The futures
//! do their work on the calling thread (files are opened with blocking allowed on the current
//! thread) and need the runtime only for its I/O and timer drivers, which one worker drives as
//! well as several. So a guest's calls run inside wrt's own runtime with one worker: a `wrt
//! run` starts one thread less and reads no cgroup file, about 0.4 ms of a run of hello. A
//! thread already inside a tokio runtime (an embedder's) keeps it.

use std::sync::OnceLock;

use tokio::runtime::{EnterGuard, Handle, Runtime};

/// Enters wrt's runtime on this thread until the guard is dropped, unless the thread is in a
/// tokio runtime already, or wrt's could not be made (then wasmtime-wasi makes its own).
pub(crate) fn enter() -> Option<EnterGuard<'static>> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    if Handle::try_current().is_ok() {
        return None;
    }
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("wrt-io")
            .enable_io()
            .enable_time()
            .build()
            .ok()
    });
    runtime.as_ref().map(Runtime::enter)
}

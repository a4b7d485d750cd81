//! The tokio runtime that wasmtime-wasi's synchronous bindings run a guest's WASI calls on.
//!
//! Those bindings drive each call's future on the calling thread's tokio runtime, or, when the
//! thread has none, on a process-wide runtime of their own, made on the first call with a
//! worker thread per CPU (sizing it reads the CPU count and the cgroup's quota). The futures
//! do their work on the calling thread (files are opened with blocking allowed on the current
//! thread) and need the runtime only for its I/O and timer drivers, which one worker drives as
//! well as several. So a guest's calls run inside wrt's own runtime with one worker: a `wrt
//! run` starts one thread less and reads no cgroup file, about 0.4 ms of a run of hello.
//!
//! Driving a future blocks the thread, which tokio forbids inside a runtime: a guest run from
//! an async task (an embedder's server) would panic at its first WASI call ("Cannot start a
//! runtime from within a runtime"). [`blocking`] runs guest code so that it may block on any
//! thread.

use std::cell::Cell;
use std::sync::OnceLock;

use tokio::runtime::{EnterGuard, Handle, Runtime, RuntimeFlavor};

/// wrt's runtime, made on first use; `None` when it could not be made (then wasmtime-wasi
/// makes its own).
fn own() -> Option<&'static Runtime> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("wrt-io")
                .enable_io()
                .enable_time()
                .build()
                .ok()
        })
        .as_ref()
}

thread_local! {
    /// This thread runs inside [`blocking`]: in wrt's runtime, where it may block.
    static MAY_BLOCK: Cell<bool> = const { Cell::new(false) };
}

/// Enters wrt's runtime on this thread until the guard is dropped, unless the thread is in a
/// tokio runtime already.
pub(crate) fn enter() -> Option<EnterGuard<'static>> {
    if MAY_BLOCK.get() || Handle::try_current().is_ok() {
        return None;
    }
    own().map(Runtime::enter)
}

/// Enters wrt's runtime on this thread until the guard is dropped, whatever runtime the thread
/// is in: for each poll of an asynchronous run, whose WASI calls then take their timers and
/// blocking work to wrt's runtime, not to the embedder's (which may lack a time driver).
pub(crate) fn enter_own() -> Option<EnterGuard<'static>> {
    own().map(Runtime::enter)
}

/// Drives `future` to its end on this thread, which sleeps while the future waits: for a
/// synchronous call of what runs only asynchronously (a command of WASI 0.3). The future's
/// polls enter wrt's runtime themselves (the runs' `race`), so any thread may call this.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    /// Wakes the thread that waits in [`block_on`].
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// Marks the thread as inside [`blocking`] until dropped.
struct MayBlock(bool);

impl MayBlock {
    fn set() -> Self {
        Self(MAY_BLOCK.replace(true))
    }
}

impl Drop for MayBlock {
    fn drop(&mut self) {
        MAY_BLOCK.set(self.0);
    }
}

/// Runs `f`, which runs guest code and may block on WASI's futures, on this thread or, where
/// tokio forbids blocking here, where it may:
/// - outside any tokio runtime: here, in wrt's runtime;
/// - inside a multi-thread runtime (a task, or its `block_on`): here, through
///   [`tokio::task::block_in_place`], which hands the thread's other tasks to another worker;
/// - inside a current-thread runtime (or any other kind): on a thread of its own, joined
///   before this returns (a thread start, tens of microseconds, per call).
///
/// The guest's WASI calls always use wrt's runtime, never the embedder's (which may lack the
/// I/O or time driver). Nested calls (a run's instantiation and its call) decide once: inside
/// `blocking`, `f` runs in place at the cost of a thread-local read.
pub(crate) fn blocking<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if MAY_BLOCK.get() {
        return f();
    }
    let in_own = || {
        let _wrt = own().map(Runtime::enter);
        let _may_block = MayBlock::set();
        f()
    };
    match Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Err(_) => in_own(),
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(in_own),
        Ok(_) => std::thread::scope(|scope| match scope.spawn(in_own).join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }),
    }
}

/// Drops `value` in a task of the tokio runtime this thread is in, so after the calling task
/// yields (a server's task, once it has written its response), on the same worker as a rule:
/// for what is quick to drop, where waking a thread of the blocking pool would cost more than
/// the drop. Outside any runtime, as [`drop_elsewhere`].
pub(crate) fn drop_after_task<T: Send + 'static>(value: T) {
    match Handle::try_current() {
        Ok(handle) => {
            handle.spawn(async move { drop(value) });
        }
        Err(_) => drop_elsewhere(value),
    }
}

/// Drops `value` on a thread of wrt's runtime's blocking pool, not this one (on this one when
/// wrt has no runtime): for what costs time to drop (an instance's store unmaps and resets its
/// memory, ends its children) after its work is done, off the path of a waiting response.
pub(crate) fn drop_elsewhere<T: Send + 'static>(value: T) {
    match own() {
        Some(runtime) => {
            runtime.spawn_blocking(move || drop(value));
        }
        None => drop(value),
    }
}

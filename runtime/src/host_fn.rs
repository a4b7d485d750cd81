//! Host functions that call back into the guest (WASI's own functions through their wrappers,
//! the guest's collector), written once for both kinds of run.
//!
//! A synchronous run calls wasm with `call`; an asynchronous one ([`crate::Guest::run_async`])
//! runs the guest on a fiber with `call_async`, where wasmtime refuses a blocking `call` and
//! any host function that calls wasm must itself be asynchronous. So such a function is an
//! `async fn` whose calls into wasm go through [`call_wasm`], which awaits `call_async` in an
//! asynchronous run and calls `call` in a synchronous one. The linker of asynchronous runs
//! defines it with `func_wrap_async`; the linker of synchronous runs drives its future with
//! [`now`], which never waits: nothing it awaits can be pending there.
//!
//! Both linkers, of core modules and of components, take their host functions in one order
//! ([`embedder_first`]).

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::{AsContextMut, TypedFunc, WasmParams, WasmResults};

use crate::guest_state::GuestState;
pub(crate) use crate::guest_state::Mode;

/// Runs the future of a host function of a synchronous run to its end on this thread. It
/// never waits: in a synchronous run every call it makes into wasm returns at once
/// ([`call_wasm`]), so it is ready at its first poll. Were it ever not, the guest traps with an
/// error rather than the host blocking or panicking.
pub(crate) fn now<T>(future: impl Future<Output = wasmtime::Result<T>>) -> wasmtime::Result<T> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(wasmtime::Error::msg("a host function of a synchronous run tried to wait")),
    }
}

/// Calls `func` in the guest: `call_async` in an asynchronous run, `call` in a synchronous one.
///
/// # Errors
///
/// As the call: a trap, or the guest's exit.
pub(crate) async fn call_wasm<P: WasmParams + Sync, R: WasmResults + Sync>(
    mut store: impl AsContextMut<Data = GuestState> + Send,
    func: &TypedFunc<P, R>,
    params: P,
) -> wasmtime::Result<R> {
    match store.as_context_mut().data().mode {
        Mode::Sync => func.call(store, params),
        Mode::Async => func.call_async(store, params).await,
    }
}

/// The embedder's hook that adds its host functions to a linker of type `L`.
pub(crate) type LinkFn<L> = dyn Fn(&mut L) -> wasmtime::Result<()> + Send + Sync;

/// A linker whose later definitions may be kept from replacing earlier ones: wasmtime's two.
pub(crate) trait NoShadowing {
    /// Makes every later definition of a name already defined fail.
    fn forbid_shadowing(&mut self);
}

impl NoShadowing for wasmtime::Linker<GuestState> {
    fn forbid_shadowing(&mut self) {
        self.allow_shadowing(false);
    }
}

impl NoShadowing for wasmtime::component::Linker<GuestState> {
    fn forbid_shadowing(&mut self) {
        self.allow_shadowing(false);
    }
}

/// Fills `linker`: the embedder's host functions first (`embedder`), then, with shadowing
/// forbidden, wrt's own (`own`), so that a name of wrt's that the embedder took fails here,
/// even if the embedder's hook allowed shadowing.
///
/// # Errors
///
/// The embedder's hook failing, or a name taken twice, each with the context that says which.
pub(crate) fn embedder_first<L: NoShadowing>(
    linker: &mut L,
    embedder: Option<&LinkFn<L>>,
    own: impl FnOnce(&mut L) -> wasmtime::Result<()>,
) -> wasmtime::Result<()> {
    if let Some(link) = embedder {
        link(linker).map_err(|err| err.context("the embedder's host functions could not be linked"))?;
        linker.forbid_shadowing();
    }
    own(linker).map_err(|err| match embedder {
        Some(_) => err.context("an embedder's host function takes the name of one of wrt's"),
        None => err,
    })
}

/// Defines host function `$f`, an `async fn` of a `Caller` and the listed parameters, in
/// `$linker` for runs of `$mode` (see the module's docs).
macro_rules! define {
    ($linker:expr, $mode:expr, $module:expr, $name:expr, $f:path, ($($arg:ident: $ty:ty),*)) => {
        match $mode {
            $crate::host_fn::Mode::Sync => $linker.func_wrap(
                $module,
                $name,
                |caller: ::wasmtime::Caller<'_, $crate::guest_state::GuestState>, $($arg: $ty),*| {
                    $crate::host_fn::now($f(caller, $($arg),*))
                },
            ),
            $crate::host_fn::Mode::Async => $linker.func_wrap_async(
                $module,
                $name,
                |caller: ::wasmtime::Caller<'_, $crate::guest_state::GuestState>, ($($arg,)*): ($($ty,)*)| {
                    Box::new($f(caller, $($arg),*))
                },
            ),
        }
    };
}
pub(crate) use define;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_future_gives_its_result_and_a_waiting_one_an_error() {
        assert_eq!(now(async { Ok(7) }).unwrap(), 7);
        let waiting = now(std::future::pending::<wasmtime::Result<()>>());
        assert!(waiting.unwrap_err().to_string().contains("tried to wait"));
    }
}

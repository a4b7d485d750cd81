//! The linker of components: WASI 0.2.12 (whose `exit-with-code` is stable, so a guest that
//! calls it exits with its code), the deadline-aware clock subscriptions and `wrt:process`; for
//! synchronous runs file reads on the guest's thread (`file_streams`), for asynchronous runs
//! WASI 0.3.0 too. A WASI 0.3 command imports both versions (Rust's std
//! speaks 0.2 on `wasm32-wasip2`), and it runs only asynchronously: its `run` is an async
//! function.

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::guest_state::GuestState;
use crate::host_fn::Mode;

/// The function of `RuntimeBuilder::link_components`: defines the embedder's own functions.
pub(crate) type LinkComponentsFn = crate::host_fn::LinkFn<Linker<GuestState>>;

/// A linker, for runs of `mode`, holding everything a component may import from wrt (`wasi:http`
/// with `http`), and the embedder's own
/// functions (`embedder`). Those are defined first, with shadowing then turned off, so that one
/// of them that names a function of wrt's makes the linking fail, whatever the embedder's
/// function did to the linker's settings.
pub(crate) fn linker(
    engine: &Engine,
    embedder: Option<&LinkComponentsFn>,
    mode: Mode,
    http: bool,
) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    let own = |linker: &mut Linker<GuestState>| -> wasmtime::Result<()> {
        match mode {
            Mode::Sync => {
                wasmtime_wasi::p2::add_to_linker_sync(linker)?;
                super::file_streams::add_to_linker(linker)?;
                if http {
                    wasmtime_wasi_http::p2::add_only_http_to_linker_sync(linker)?;
                }
            }
            Mode::Async => {
                wasmtime_wasi::p2::add_to_linker_async(linker)?;
                wasmtime_wasi::p3::add_to_linker(linker)?;
                if http {
                    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
                    wasmtime_wasi_http::p3::add_to_linker(linker)?;
                }
            }
        }
        super::clock::add_to_linker(linker)?;
        super::process::add_to_linker(linker)
    };
    crate::host_fn::embedder_first(&mut linker, embedder, own)?;
    Ok(linker)
}

//! The linker of components: WASI 0.2.12 (whose `exit-with-code` is stable, so a guest that
//! calls it exits with its code), the deadline-aware clock subscriptions and `wrt:process`.

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::host_fn::Mode;
use crate::state::GuestState;

/// The function of `RuntimeBuilder::link_components`: defines the embedder's own functions.
pub(crate) type LinkComponentsFn = dyn Fn(&mut Linker<GuestState>) -> wasmtime::Result<()> + Send + Sync;

/// A linker, for runs of `mode`, holding everything a component may import from wrt, and the embedder's own
/// functions (`embedder`). Those are defined first, with shadowing then turned off, so that one
/// of them that names a function of wrt's makes the linking fail, whatever the embedder's
/// function did to the linker's settings.
pub(crate) fn linker(
    engine: &Engine,
    embedder: Option<&LinkComponentsFn>,
    mode: Mode,
) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    if let Some(link) = embedder {
        link(&mut linker).map_err(|err| err.context("the embedder's host functions could not be linked"))?;
        linker.allow_shadowing(false);
    }
    let own = |linker: &mut Linker<GuestState>| -> wasmtime::Result<()> {
        match mode {
            Mode::Sync => wasmtime_wasi::p2::add_to_linker_sync(linker)?,
            Mode::Async => wasmtime_wasi::p2::add_to_linker_async(linker)?,
        }
        super::clock::add_to_linker(linker)?;
        super::process::add_to_linker(linker)
    };
    own(&mut linker).map_err(|err| match embedder {
        Some(_) => err.context("an embedder's host function takes the name of one of wrt's"),
        None => err,
    })?;
    Ok(linker)
}

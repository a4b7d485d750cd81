//! The linker of components: WASI 0.2.12 (whose `exit-with-code` is stable, so a guest that
//! calls it exits with its code), the deadline-aware clock subscriptions and `wrt:process`.

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::state::GuestState;

/// A linker holding everything a component may import from wrt.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    super::clock::add_to_linker(&mut linker)?;
    super::process::add_to_linker(&mut linker)?;
    Ok(linker)
}

//! WASI preview 1's own functions, for the wrappers that shadow them in the linker
//! (`wasi::blocking_calls`, `wasi::limits`, `wasi::readdir`, `wasi::direct_writes`). Each shadowed function stays defined under an internal
//! module name that guests cannot import (see [`is_internal`]), and a wrapper calls it through
//! a trampoline instance that shares the guest's memory: WASI's functions find guest memory
//! through their caller's `memory` export, which a call from the host does not have.

use std::pin::Pin;
use std::sync::Arc;

use wasmtime::{Caller, FuncType, Instance, Linker, Val, ValType};

use crate::guest_state::GuestState;
use crate::host_fn::{Mode, now};

pub(crate) const WASI: &str = "wasi_snapshot_preview1";
/// Where WASI's own functions stay reachable for the wrappers.
const ORIGINAL: &str = "wrt internal: wasi_snapshot_preview1";

/// The shadowed functions and their parameter types; every one returns an errno (`i32`).
const SHADOWED: &[(&str, &str)] = &[
    ("fd_close", "i32"),
    ("fd_readdir", "i32 i32 i32 i64 i32"),
    ("fd_renumber", "i32 i32"),
    ("fd_write", "i32 i32 i32 i32"),
    ("poll_oneoff", "i32 i32 i32 i32"),
    ("random_get", "i32 i32"),
    ("path_create_directory", "i32 i32 i32"),
    ("path_filestat_get", "i32 i32 i32 i32 i32"),
    ("path_filestat_set_times", "i32 i32 i32 i32 i64 i64 i32"),
    ("path_link", "i32 i32 i32 i32 i32 i32 i32"),
    ("path_open", "i32 i32 i32 i32 i32 i64 i64 i32 i32"),
    ("path_readlink", "i32 i32 i32 i32 i32 i32"),
    ("path_remove_directory", "i32 i32 i32"),
    ("path_rename", "i32 i32 i32 i32 i32 i32"),
    ("path_symlink", "i32 i32 i32 i32 i32"),
    ("path_unlink_file", "i32 i32 i32"),
];

/// Whether an import names the module that holds WASI's own functions for the wrappers.
pub(crate) fn is_internal(module: &str) -> bool {
    module == ORIGINAL
}

/// The parameter types of shadowed function `name`.
fn params(name: &str) -> &'static str {
    SHADOWED.iter().find(|(n, _)| *n == name).map(|(_, params)| *params).expect("a shadowed function")
}

/// The type of shadowed function `name`.
pub(crate) fn func_type(linker: &Linker<GuestState>, name: &str) -> FuncType {
    let params = params(name).split_whitespace().map(|p| if p == "i64" { ValType::I64 } else { ValType::I32 });
    FuncType::new(linker.engine(), params, [ValType::I32])
}

/// Keeps WASI's own `name` reachable, then lets `define` define the wrapper in its place.
/// `linker` already holds the WASI functions.
pub(crate) fn shadow(
    linker: &mut Linker<GuestState>,
    name: &str,
    define: impl FnOnce(&mut Linker<GuestState>) -> wasmtime::Result<&mut Linker<GuestState>>,
) -> wasmtime::Result<()> {
    debug_assert!(SHADOWED.iter().any(|(n, _)| *n == name), "`{name}` is not in SHADOWED");
    linker.alias(WASI, name, ORIGINAL, name)?;
    linker.allow_shadowing(true);
    let defined = define(linker).map(|_| ());
    linker.allow_shadowing(false);
    defined
}

/// [`shadow`] for a wrapper `wrap` that takes its parameters as a slice, of the type
/// [`func_type`], and returns its errno, for runs of `mode`.
pub(crate) fn shadow_new<W>(
    linker: &mut Linker<GuestState>,
    mode: Mode,
    name: &'static str,
    wrap: W,
) -> wasmtime::Result<()>
where
    W: for<'a> Fn(
            Caller<'a, GuestState>,
            &'a [Val],
        ) -> Pin<Box<dyn Future<Output = wasmtime::Result<i32>> + Send + 'a>>
        + Send
        + Sync
        + 'static,
{
    let ty = func_type(linker, name);
    shadow(linker, name, |linker| match mode {
        Mode::Sync => linker.func_new(WASI, name, ty, move |caller, params, results| {
            results[0] = Val::I32(now(wrap(caller, params))?);
            Ok(())
        }),
        Mode::Async => linker.func_new_async(WASI, name, ty, move |caller, params, results| {
            let errno = wrap(caller, params);
            Box::new(async move {
                results[0] = Val::I32(errno.await?);
                Ok(())
            })
        }),
    })
}

/// The trampoline (compiled once per runtime, `cache::LazyModule`): for each shadowed function, an export of the same name that calls WASI's
/// own with the guest's memory as the trampoline's.
fn trampoline_text() -> String {
    let mut text =
        String::from("(module\n  (import \"env\" \"memory\" (memory 0))\n  (export \"memory\" (memory 0))\n");
    for (name, params) in SHADOWED {
        text.push_str(&format!("  (import \"env\" \"{name}\" (func ${name} (param {params}) (result i32)))\n"));
    }
    for (name, params) in SHADOWED {
        let args: String = (0..params.split_whitespace().count()).map(|i| format!(" (local.get {i})")).collect();
        text.push_str(&format!("  (func (export \"{name}\") (param {params}) (result i32) (call ${name}{args}))\n"));
    }
    text.push(')');
    text
}

/// The trampoline instance, bound to the caller's memory.
async fn bound(caller: &mut Caller<'_, GuestState>) -> wasmtime::Result<Instance> {
    let Some(originals) = &caller.data().wasi_originals else {
        return Err(wasmtime::Error::msg("WASI is not available"));
    };
    if let Some(bound) = originals.bound {
        return Ok(bound);
    }
    let (trampoline, linker) = (Arc::clone(&originals.trampoline), Arc::clone(&originals.linker));
    let Some(wasmtime::Extern::Memory(memory)) = caller.get_export("memory") else {
        return Err(wasmtime::Error::msg("missing required memory export"));
    };
    let mut imports: Vec<wasmtime::Extern> = Vec::with_capacity(SHADOWED.len() + 1);
    imports.push(memory.into());
    for (name, _) in SHADOWED {
        match linker.get(&mut *caller, ORIGINAL, name) {
            Ok(original @ wasmtime::Extern::Func(_)) => imports.push(original),
            _ => return Err(wasmtime::Error::msg(format!("WASI's own `{name}` is not in the linker"))),
        }
    }
    let module = trampoline.module(caller.engine(), trampoline_text)?;
    let instance = match caller.data().mode {
        Mode::Sync => Instance::new(&mut *caller, &module, &imports)?,
        Mode::Async => Instance::new_async(&mut *caller, &module, &imports).await?,
    };
    if let Some(originals) = &mut caller.data_mut().wasi_originals {
        originals.bound = Some(instance);
    }
    Ok(instance)
}

/// Calls WASI's own `name` with `params`, for the guest that called its wrapper.
///
/// # Errors
///
/// As the function: a trap, or the guest's exit.
pub(crate) async fn call(caller: &mut Caller<'_, GuestState>, name: &str, params: &[Val]) -> wasmtime::Result<i32> {
    let instance = bound(caller).await?;
    let func = instance
        .get_func(&mut *caller, name)
        .ok_or_else(|| wasmtime::Error::msg(format!("the trampoline has no `{name}`")))?;
    let mut result = [Val::I32(0)];
    match caller.data().mode {
        Mode::Sync => func.call(&mut *caller, params, &mut result)?,
        Mode::Async => func.call_async(&mut *caller, params, &mut result).await?,
    }
    Ok(result[0].unwrap_i32())
}

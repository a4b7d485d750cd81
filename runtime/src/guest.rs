//! A compiled guest module, linked once, run any number of times.

use std::sync::{Arc, OnceLock};

use crate::error::InstantiateError;
use crate::guest_state::GuestState;
use crate::host_fn::Mode;
use crate::runtime::Runtime;
use crate::sys::entry_point::EntryPoint;
use crate::value::WasmType;

/// A guest compiled and linked by a [`Runtime`] ([`Runtime::load_file`]), ready to run any
/// number of times, from any thread, each run in a fresh store with its own [`RunOptions`](crate::RunOptions).
/// Cheap to clone; it keeps its runtime alive.
#[derive(Clone)]
pub struct Guest {
    pub(crate) runtime: Runtime,
    pub(crate) code: Code,
    /// Its name, shared by its runs (their errors, audit records and `GuestState::guest_name`).
    pub(crate) name: Arc<str>,
    pub(crate) from_cache: bool,
    /// Whether it imports anything of wrt's own ABI (the `wrt_v1` module, or the
    /// `wrt:process` package): only such a guest can start programs, so only its runs get a
    /// spawner.
    pub(crate) may_spawn: bool,
}

/// What a guest is, compiled and linked.
#[derive(Clone)]
pub(crate) enum Code {
    /// A core module (WASI preview 1).
    Module {
        pre: wasmtime::InstancePre<GuestState>,
        /// Whether it imports WASI preview 1 functions (and needs a WASI context per run).
        wasi: bool,
        /// The WASI command entry point, `_start` or else the empty name, found and type-checked
        /// once.
        entry: Option<EntryPoint>,
        /// Its export `memory`, looked up once: a lookup by name each run cost a fortieth of
        /// a run of a WASI guest.
        memory: Option<wasmtime::ModuleExport>,
        /// The module linked for asynchronous runs, on the first one.
        linked_async: Arc<OnceLock<wasmtime::InstancePre<GuestState>>>,
    },
    /// A `wasi:cli/command` component (WASI 0.2).
    Component {
        pre: wasmtime_wasi::p2::bindings::sync::CommandPre<GuestState>,
        /// The component linked for asynchronous runs, on the first one.
        linked_async: Arc<OnceLock<wasmtime_wasi::p2::bindings::CommandPre<GuestState>>>,
    },
    /// A `wasi:cli/command` component of WASI 0.3, whose `run` is an async function: linked
    /// for asynchronous runs only (a synchronous run waits for one).
    CommandP3 { pre: wasmtime_wasi::p3::bindings::CommandPre<GuestState> },
    /// A `wasi:http` service (0.3's `handler` or 0.2's `incoming-handler`), linked for
    /// asynchronous runs: each request in a fresh instance.
    HttpService { pre: Arc<wasmtime_wasi_http::handler::ProxyPre<GuestState>> },
}

/// The version of WASI a guest is written for ([`Guest::wasi_version`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WasiVersion {
    /// A core module of WASI preview 1 (`wasi_snapshot_preview1`), or one that imports no WASI.
    Preview1,
    /// A component that exports `wasi:cli/run@0.2`, or a service that exports
    /// `wasi:http/incoming-handler@0.2`.
    P2,
    /// A component that exports `wasi:cli/run@0.3` (an async function), or a service that
    /// exports `wasi:http/handler@0.3`.
    P3,
}

/// A guest linked for asynchronous runs.
pub(crate) enum AsyncCode<'a> {
    Module(&'a wasmtime::InstancePre<GuestState>),
    Component(&'a wasmtime_wasi::p2::bindings::CommandPre<GuestState>),
    CommandP3(&'a wasmtime_wasi::p3::bindings::CommandPre<GuestState>),
    HttpService(&'a Arc<wasmtime_wasi_http::handler::ProxyPre<GuestState>>),
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guest").field("name", &self.name).field("from_cache", &self.from_cache).finish_non_exhaustive()
    }
}

impl Guest {
    /// The parameter types of the exported function `name`: what [`Guest::invoke`] and
    /// [`Instance::invoke`](crate::Instance::invoke) take, for a caller that builds the arguments from text.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::InvokeComponent`] for a component, whose exports are not core
    /// functions; [`InstantiateError::NoSuchExport`] when the guest exports no function of
    /// that name.
    pub fn export_params(&self, name: &str) -> crate::Result<Vec<WasmType>> {
        let pre = match &self.code {
            Code::Module { pre, .. } => pre,
            Code::Component { .. } | Code::CommandP3 { .. } | Code::HttpService { .. } => {
                return Err(InstantiateError::InvokeComponent { guest: self.name.to_string() }.into());
            }
        };
        let module = pre.module();
        match module.get_export(name) {
            Some(wasmtime::ExternType::Func(ty)) => Ok(ty.params().map(|ty| WasmType::of(&ty)).collect()),
            _ => Err(InstantiateError::NoSuchExport {
                guest: self.name.to_string(),
                export: name.to_owned(),
                functions: module.exports().filter(|e| e.ty().func().is_some()).map(|e| e.name().to_owned()).collect(),
            }
            .into()),
        }
    }

    /// The guest's name: its file name, or the name given with its bytes.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the guest is a component (a `wasi:cli/command` of WASI 0.2 or 0.3), rather than
    /// a core module.
    pub fn is_component(&self) -> bool {
        matches!(self.code, Code::Component { .. } | Code::CommandP3 { .. } | Code::HttpService { .. })
    }

    /// Whether the guest is a `wasi:http` service ([`Runtime::load_service_file`]), which
    /// answers requests ([`Guest::serve_async`]) rather than runs.
    pub fn is_service(&self) -> bool {
        matches!(self.code, Code::HttpService { .. })
    }

    /// Which WASI the guest is written for: a core module's preview 1, or a component's 0.2 or
    /// 0.3.
    pub fn wasi_version(&self) -> WasiVersion {
        match &self.code {
            Code::Module { .. } => WasiVersion::Preview1,
            Code::Component { .. } => WasiVersion::P2,
            Code::CommandP3 { .. } => WasiVersion::P3,
            Code::HttpService { pre } => match pre.as_ref() {
                wasmtime_wasi_http::handler::ProxyPre::P2(_) => WasiVersion::P2,
                wasmtime_wasi_http::handler::ProxyPre::P3(_) => WasiVersion::P3,
            },
        }
    }

    /// The guest linked for asynchronous runs: on the first, with the runtime's linker of
    /// asynchronous runs (another thread may link it meanwhile: either copy serves).
    pub(crate) fn linked_async(&self) -> crate::Result<AsyncCode<'_>> {
        let runtime = &self.runtime;
        Ok(match &self.code {
            Code::Module { pre, linked_async, .. } => AsyncCode::Module(match linked_async.get() {
                Some(linked) => linked,
                None => {
                    let linked = runtime.link(&self.name, pre.module(), Mode::Async)?;
                    linked_async.get_or_init(|| linked)
                }
            }),
            Code::Component { pre, linked_async } => AsyncCode::Component(match linked_async.get() {
                Some(linked) => linked,
                None => {
                    let component = pre.instance_pre().component();
                    let linked = runtime.link_component(&self.name, component, Mode::Async, false)?;
                    linked_async.get_or_init(|| linked)
                }
            }),
            Code::CommandP3 { pre } => AsyncCode::CommandP3(pre),
            Code::HttpService { pre } => AsyncCode::HttpService(pre),
        })
    }

    /// Whether the compiled code came from the on-disk cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_cross_threads() {
        fn shared<T: Clone + Send + Sync>() {}
        shared::<Guest>();
    }

    #[test]
    fn only_a_guest_that_imports_wrts_functions_may_spawn() {
        let runtime = Runtime::new().unwrap();
        let load = |wat: &str| runtime.load_bytes("guest.wat", wat.as_bytes()).unwrap().may_spawn;
        assert!(!load(r#"(module (func (export "_start")))"#));
        let wasi = r#"(module (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
            (func (export "_start")))"#;
        assert!(!load(wasi));
        let wrt = r#"(module (import "wrt_v1" "last_error" (func (param i32 i32) (result i32)))
            (memory (export "memory") 1) (func (export "_start")))"#;
        assert!(load(wrt));
    }
}

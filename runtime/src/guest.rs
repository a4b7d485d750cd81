//! A compiled guest module, linked once, run any number of times.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, mpsc};

use wasmtime::ValType;

use crate::error::InstantiateError;
use crate::instance::{Instance, Report};
use crate::options::RunOptions;
use crate::runtime::{Runtime, SlowCompileHook};
use crate::state::GuestState;
use crate::value::{WasmType, WasmValue};

/// A guest compiled and linked by a [`Runtime`] ([`Runtime::load_file`]), ready to run any
/// number of times, from any thread, each run in a fresh store with its own [`RunOptions`].
/// Cheap to clone; it keeps its runtime alive.
#[derive(Clone)]
pub struct Guest {
    pub(crate) runtime: Runtime,
    pub(crate) code: Code,
    pub(crate) name: String,
    pub(crate) from_cache: bool,
}

/// What a guest is, compiled and linked.
#[derive(Clone)]
pub(crate) enum Code {
    /// A core module (WASI preview 1).
    Module {
        pre: wasmtime::InstancePre<GuestState>,
        /// Whether it imports WASI preview 1 functions (and needs a WASI context per run).
        wasi: bool,
        /// The WASI command entry points, `_start` then the empty name, looked up once.
        entry: [Option<wasmtime::ModuleExport>; 2],
    },
    /// A `wasi:cli/command` component (WASI 0.2).
    Component(wasmtime_wasi::p2::bindings::sync::CommandPre<GuestState>),
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guest").field("name", &self.name).field("from_cache", &self.from_cache).finish_non_exhaustive()
    }
}

impl Guest {
    /// Creates an instance in a fresh store with `options`, ready to run.
    ///
    /// # Errors
    ///
    /// [`crate::ConfigError`] when the options are invalid (a zero limit, fuel on a runtime
    /// without fuel metering, a preopened directory that cannot be opened, an allowed program
    /// inside a read-write preopen); [`InstantiateError::MemoryLimit`] when the guest's own
    /// minimum memory is over the memory limit.
    pub fn instantiate(&self, options: &RunOptions) -> crate::Result<Instance> {
        Instance::new(self, options)
    }

    /// Runs the guest's `_start` in a fresh instance and returns how it ended.
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate`]; a guest ending badly (trap, timeout, no fuel) is an
    /// [`crate::Outcome`], not an error.
    pub fn run(&self, options: &RunOptions) -> crate::Result<Report> {
        let mut instance = self.instantiate(options)?;
        let outcome = instance.run_start()?;
        Ok(instance.into_report(outcome))
    }

    /// Calls the export `name` of a fresh instance with `args` as its parameters, after the
    /// guest's `_initialize` if it has one (as `wasmtime run --invoke` does);
    /// [`Instance::invoke`] in a fresh instance.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{Outcome, RunOptions, Runtime, WasmType, WasmValue};
    ///
    /// # fn main() -> wrt_runtime::Result<()> {
    /// let wat = r#"(module (func (export "add") (param i32 i64) (result i64)
    ///     (i64.add (i64.extend_i32_s (local.get 0)) (local.get 1))))"#;
    /// let guest = Runtime::new()?.load_bytes("add.wat", wat.as_bytes())?;
    /// assert_eq!(guest.export_params("add")?, [WasmType::I32, WasmType::I64]);
    /// let report = guest.invoke(&RunOptions::new(), "add", &[WasmValue::I32(-1), WasmValue::I64(1 << 40)])?;
    /// assert_eq!(report.outcome, Outcome::Returned(vec![WasmValue::I64((1 << 40) - 1)]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate`], and [`InstantiateError`] when the export is missing or the
    /// arguments do not match its parameters.
    pub fn invoke(&self, options: &RunOptions, name: &str, args: &[WasmValue]) -> crate::Result<Report> {
        let mut instance = self.instantiate(options)?;
        let outcome = instance.invoke(name, args)?;
        Ok(instance.into_report(outcome))
    }

    /// The parameter types of the exported function `name`: what [`Guest::invoke`] and
    /// [`Instance::invoke`] take, for a caller that builds the arguments from text.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::InvokeComponent`] for a component, whose exports are not core
    /// functions; [`InstantiateError::NoSuchExport`] when the guest exports no function of
    /// that name.
    pub fn export_params(&self, name: &str) -> crate::Result<Vec<WasmType>> {
        let pre = match &self.code {
            Code::Module { pre, .. } => pre,
            Code::Component(_) => return Err(InstantiateError::InvokeComponent { guest: self.name.clone() }.into()),
        };
        let module = pre.module();
        match module.get_export(name) {
            Some(wasmtime::ExternType::Func(ty)) => Ok(ty.params().map(|ty| WasmType::of(&ty)).collect()),
            _ => Err(InstantiateError::NoSuchExport {
                guest: self.name.clone(),
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

    /// Whether the guest is a component (a `wasi:cli/command`), rather than a core module.
    pub fn is_component(&self) -> bool {
        matches!(self.code, Code::Component(_))
    }

    /// Whether the compiled code came from the on-disk cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }
}

/// Compiles a binary module or component, or WebAssembly text. A text syntax error names `path` (or `name`
/// for bytes without a file). `on_slow_compile` is called, from another thread, if compiling
/// takes longer than its delay.
pub(crate) fn compile(
    engine: &wasmtime::Engine,
    name: &str,
    path: Option<&Path>,
    bytes: &[u8],
    on_slow_compile: Option<&SlowCompileHook>,
) -> wasmtime::Result<Compiled> {
    let binary = match sniff(bytes) {
        Format::Text => wat::parse_bytes(bytes).map_err(|mut e| {
            e.set_path(path.unwrap_or(Path::new(name)));
            e
        })?,
        _ => Cow::Borrowed(bytes),
    };
    let (done, wait) = mpsc::channel::<()>();
    let watcher = on_slow_compile.map(|hook| {
        let (after, hook, name, size) = (hook.after, Arc::clone(&hook.hook), name.to_owned(), bytes.len() as u64);
        std::thread::spawn(move || {
            if wait.recv_timeout(after) == Err(mpsc::RecvTimeoutError::Timeout) {
                hook(&name, size);
            }
        })
    });
    let compiled = match sniff(&binary) {
        Format::Component => wasmtime::component::Component::from_binary(engine, &binary).map(Compiled::Component),
        _ => wasmtime::Module::from_binary(engine, &binary).map(Compiled::Module),
    };
    drop(done);
    if let Some(watcher) = watcher {
        let _ = watcher.join();
    }
    compiled
}

/// A compiled core module or component.
pub(crate) enum Compiled {
    Module(wasmtime::Module),
    Component(wasmtime::component::Component),
}

/// Fails when the guest exports `wrt_gc` with another type than the collector hook's.
pub(crate) fn check_collector_hook(name: &str, module: &wasmtime::Module) -> Result<(), InstantiateError> {
    let Some(export) = module.get_export(crate::external::collector::GUEST_GC_EXPORT) else {
        return Ok(());
    };
    let found = match export {
        wasmtime::ExternType::Func(ty) if ty.params().len() == 1 && ty.results().len() == 0 => {
            match ty.params().next() {
                Some(ValType::I32) => return Ok(()),
                _ => format!("a function of type {ty}"),
            }
        }
        wasmtime::ExternType::Func(ty) => format!("a function of type {ty}"),
        wasmtime::ExternType::Global(_) => "a global".into(),
        wasmtime::ExternType::Table(_) => "a table".into(),
        wasmtime::ExternType::Memory(_) => "a memory".into(),
        wasmtime::ExternType::Tag(_) => "a tag".into(),
    };
    Err(InstantiateError::BadCollectorHook { guest: name.to_owned(), found })
}

/// What kind of WebAssembly `bytes` hold, by their header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Module,
    Component,
    Text,
    Unknown,
}

pub(crate) fn sniff(bytes: &[u8]) -> Format {
    match bytes {
        [0, b'a', b's', b'm', _, _, 0, 0, ..] => Format::Module,
        [0, b'a', b's', b'm', _, _, 1, 0, ..] => Format::Component,
        [0, b'a', b's', b'm', ..] => Format::Unknown,
        _ => {
            // WebAssembly text starts with `(` after white space and comments.
            let Ok(text) = std::str::from_utf8(bytes) else { return Format::Unknown };
            let mut rest = text.trim_start();
            loop {
                if let Some(line_comment) = rest.strip_prefix(";;") {
                    rest = line_comment.split_once('\n').map_or("", |(_, r)| r).trim_start();
                } else if let Some(block) = rest.strip_prefix("(;") {
                    rest = block.split_once(";)").map_or("", |(_, r)| r).trim_start();
                } else {
                    break;
                }
            }
            if rest.starts_with('(') { Format::Text } else { Format::Unknown }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"\0asm\x01\0\0\0"), Format::Module);
        assert_eq!(sniff(b"\0asm\x0d\0\x01\0"), Format::Component);
        assert_eq!(sniff(b"  ;; hi\n(; block ;) (module)"), Format::Text);
        assert_eq!(sniff(b"\x7fELF\x02\x01"), Format::Unknown);
        assert_eq!(sniff(b"hello"), Format::Unknown);
        assert_eq!(sniff(b""), Format::Unknown);
    }
}

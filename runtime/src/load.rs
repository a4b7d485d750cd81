//! Loading a guest into a [`Runtime`]: reading its file, compiling it (through the compile
//! cache) or mapping compiled code its user vouches for, checking and linking it once. The
//! result is a [`Guest`], ready to run any number of times.

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};

use wasmtime::{Engine, Linker, Module, ValType};
use wasmtime_wasi::p2::bindings::sync::CommandPre;

use crate::cache::CacheError;
use crate::error::{InstantiateError, LoadError, chained, wasmtime_causes};
use crate::guest::{Code, Guest};
use crate::guest_state::GuestState;
use crate::host_fn::Mode;
use crate::runtime::{Runtime, SlowCompileHook};
use crate::sys::compiled::Compiled;
use crate::sys::entry_point::EntryPoint;

/// The error of a guest `name` that does not compile: wasmtime's message and its causes, over
/// several lines for a syntax error of WebAssembly text (the file, line and column, and the
/// line with a caret), on one line otherwise.
fn compile_error(name: &str, err: &wasmtime::Error) -> wasmtime::Error {
    let syntax = err.chain().any(|cause| cause.is::<wat::Error>());
    chained(LoadError::Compile { name: name.to_owned(), syntax }, wasmtime_causes(err, syntax))
}

/// A guest's name: its file name, or the whole path when it has none.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

impl Runtime {
    /// Loads and compiles a guest from a `.wasm` or `.wat` file, using the compile cache.
    ///
    /// # Errors
    ///
    /// [`LoadError`] when the file cannot be read, is not a regular file or pipe, is larger than
    /// [`MAX_MODULE_BYTES`](crate::MAX_MODULE_BYTES), or is not a WebAssembly module or component; a
    /// compile error when the module is invalid; [`InstantiateError`] when it imports
    /// something wrt does not provide or exports a malformed collector hook.
    pub fn load_file(&self, path: impl AsRef<Path>) -> crate::Result<Guest> {
        let path = path.as_ref();
        let bytes = crate::module_file::read(path).map_err(LoadError::into_error)?;
        let name = file_name(path);
        // Only what wasmtime recognises as its own artifact: any other ELF file is no guest.
        if sniff(&bytes) == Format::Unknown && Engine::detect_precompiled(&bytes).is_some() {
            return Err(LoadError::Precompiled { name }.into());
        }
        self.load(&name, Some(path), &bytes, Purpose::Run)
    }

    /// Loads and compiles a `wasi:http` service from a `.wasm` or `.wat` file, using the
    /// compile cache: a component that exports `wasi:http/handler@0.3` (preferred when it
    /// exports both) or `wasi:http/incoming-handler@0.2`, linked with `wasi:http` (whose
    /// outgoing requests are refused) and the rest of WASI 0.2 and 0.3. It answers each
    /// request in a fresh instance ([`Guest::serve_async`]).
    ///
    /// # Errors
    ///
    /// As [`Runtime::load_file`], and [`InstantiateError::NotAService`] when the guest exports
    /// no handler.
    pub fn load_service_file(&self, path: impl AsRef<Path>) -> crate::Result<Guest> {
        let path = path.as_ref();
        let bytes = crate::module_file::read(path).map_err(LoadError::into_error)?;
        self.load(&file_name(path), Some(path), &bytes, Purpose::Serve)
    }

    /// [`Runtime::load_service_file`] for the bytes of a component or WebAssembly text.
    ///
    /// # Errors
    ///
    /// As [`Runtime::load_service_file`].
    pub fn load_service_bytes(&self, name: &str, bytes: &[u8]) -> crate::Result<Guest> {
        self.load(name, None, bytes, Purpose::Serve)
    }

    /// Compiles a guest (a `.wasm` or `.wat` module or component) ahead of time, as `wasmtime
    /// compile` does: the bytes [`Runtime::load_precompiled`] loads, into a runtime with the
    /// same settings (fuel on or off alike). `wrt compile` writes them to a `.cwasm` file.
    ///
    /// # Errors
    ///
    /// [`LoadError::NotWasm`] or a compile error, as [`Runtime::load_bytes`].
    pub fn precompile(&self, name: &str, bytes: &[u8]) -> crate::Result<Vec<u8>> {
        if sniff(bytes) == Format::Unknown {
            return Err(LoadError::NotWasm { name: name.to_owned() }.into());
        }
        let failed = |e: wasmtime::Error| compile_error(name, &e);
        let compiled = compile(&self.inner.engine, name, None, bytes, None).map_err(failed)?;
        compiled.serialize().map_err(failed)
    }

    /// Loads a guest from compiled code its user vouches for ([`Runtime::precompile`], `wrt
    /// compile`), by mapping the file: no compilation and no cache. The guest then runs as any
    /// other, under the same sandbox.
    ///
    /// # Errors
    ///
    /// [`LoadError::BadPrecompiled`] when the file is not compiled code, or was compiled by
    /// another wasmtime or with other settings (fuel); as [`Runtime::load_file`] when it
    /// imports something wrt does not provide.
    pub fn load_precompiled(&self, file: &crate::PrecompiledFile) -> crate::Result<Guest> {
        let name = file_name(file.path());
        let bad = |causes: Vec<String>| chained(LoadError::BadPrecompiled { name: name.clone() }, causes);
        if !crate::sys::precompiled::is_precompiled(file.path()) {
            return Err(bad(vec!["not a compiled module or component (`wrt compile` writes them)".to_owned()]));
        }
        let compiled =
            crate::sys::precompiled::load(&self.inner.engine, file).map_err(|e| bad(wasmtime_causes(&e, false)))?;
        self.finish(&name, compiled, false, Purpose::Run)
    }

    /// Loads and compiles a guest from the bytes of a binary module or WebAssembly text.
    ///
    /// # Errors
    ///
    /// As [`Runtime::load_file`].
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> crate::Result<Guest> {
        self.load(name, None, bytes, Purpose::Run)
    }

    fn load(&self, name: &str, path: Option<&Path>, bytes: &[u8], purpose: Purpose) -> crate::Result<Guest> {
        if sniff(bytes) == Format::Unknown {
            return Err(LoadError::NotWasm { name: name.to_owned() }.into());
        }
        let settings = &self.inner.settings;
        let engine = &self.inner.engine;
        let failed = |e: wasmtime::Error| compile_error(name, &e);
        let compile = || compile(engine, name, path, bytes, settings.on_slow_compile.as_ref());
        let (compiled, from_cache) = match settings.cache.dir() {
            Some(dir) => {
                let unusable = |err: CacheError| {
                    if let Some(hook) = &settings.on_cache_unusable
                        && !self.inner.cache_reported.swap(true, Ordering::Relaxed)
                    {
                        hook(&err);
                    }
                };
                crate::cache::load_or_compile(
                    engine,
                    &dir,
                    settings.cache_limit.unwrap_or(crate::cache::DEFAULT_CACHE_LIMIT),
                    bytes,
                    crate::cache::Load::Map,
                    compile,
                    unusable,
                )
                .map_err(failed)?
            }
            None => (compile().map_err(failed)?, false),
        };
        self.finish(name, compiled, from_cache, purpose)
    }

    /// A guest of compiled code: checked and linked, for `purpose`.
    fn finish(&self, name: &str, compiled: Compiled, from_cache: bool, purpose: Purpose) -> crate::Result<Guest> {
        let may_spawn = match &compiled {
            Compiled::Module(module) => module.imports().any(|import| import.module() == crate::abi::MODULE),
            Compiled::Component(component) => component
                .component_type()
                .imports(&self.inner.engine)
                .any(|(name, _)| name.starts_with(crate::component::wit::PACKAGE_PREFIX)),
        };
        let code = match compiled {
            Compiled::Component(component) if purpose == Purpose::Serve => {
                Code::HttpService { pre: Arc::new(self.link_service(name, &component)?) }
            }
            Compiled::Module(_) if purpose == Purpose::Serve => {
                return Err(InstantiateError::NotAService { guest: name.to_owned() }.into());
            }
            Compiled::Module(module) => {
                check_collector_hook(name, &module)?;
                let pre = self.link(name, &module, Mode::Sync)?;
                let wasi = module.imports().any(|import| import.module() == crate::wasi::original::WASI);
                let entry = EntryPoint::find(&module, &["_start", ""]);
                let memory = module.get_export_index("memory");
                Code::Module { pre, wasi, entry, memory, linked_async: Arc::default() }
            }
            // A component that exports WASI 0.3's `run` is run by it, even if it exports 0.2's
            // too (Rust's std exports that for every bin on `wasm32-wasip2`), as `wasmtime run`
            // does.
            Compiled::Component(component) if exports_p3_run(&self.inner.engine, &component) => {
                Code::CommandP3 { pre: self.link_component(name, &component, Mode::Async, false)? }
            }
            Compiled::Component(component) => Code::Component {
                pre: self.link_component(name, &component, Mode::Sync, false)?,
                linked_async: Arc::default(),
            },
        };
        Ok(Guest { runtime: self.clone(), code, name: Arc::from(name), from_cache, may_spawn })
    }

    /// Links a component once: every import must be one wrt provides (or, with
    /// [`RuntimeBuilder::unknown_imports_trap`], becomes a trapping stub), and it must export
    /// `wasi:cli/run`.
    pub(crate) fn link_component<C: LinkedCommand>(
        &self,
        name: &str,
        component: &wasmtime::component::Component,
        mode: Mode,
        service: bool,
    ) -> crate::Result<C> {
        let pre = self.instantiate_pre(name, component, mode, service)?;
        C::new(pre).map_err(|err| {
            chained(InstantiateError::NotACommand { guest: name.to_owned() }, wasmtime_causes(&err, false))
        })
    }

    /// Links a `wasi:http` service once, for asynchronous runs: 0.3's handler if it exports
    /// one, else 0.2's (as `wasmtime serve` chooses).
    fn link_service(
        &self,
        name: &str,
        component: &wasmtime::component::Component,
    ) -> crate::Result<wasmtime_wasi_http::handler::ProxyPre<GuestState>> {
        use wasmtime_wasi_http::handler::ProxyPre;
        let pre = self.instantiate_pre(name, component, Mode::Async, true)?;
        if let Ok(service) = wasmtime_wasi_http::p3::bindings::ServicePre::new(pre.clone()) {
            return Ok(ProxyPre::P3(service));
        }
        wasmtime_wasi_http::p2::bindings::ProxyPre::new(pre).map(ProxyPre::P2).map_err(|err| {
            chained(InstantiateError::NotAService { guest: name.to_owned() }, wasmtime_causes(&err, false))
        })
    }

    /// Links `component` with the linker of runs of `mode` (with `wasi:http` for a
    /// `service`): every import must be one wrt provides (or, with
    /// [`RuntimeBuilder::unknown_imports_trap`], becomes a trapping stub).
    fn instantiate_pre(
        &self,
        name: &str,
        component: &wasmtime::component::Component,
        mode: Mode,
        service: bool,
    ) -> crate::Result<wasmtime::component::InstancePre<GuestState>> {
        let http = self.inner.settings.http;
        let linkers = match mode {
            Mode::Sync => &self.inner.components,
            // A runtime with `wasi:http` links it into every component already.
            Mode::Async if service && !http => &self.inner.services,
            Mode::Async => &self.inner.components_async,
        };
        let base = match linkers.get() {
            Some(linker) => linker,
            None => {
                let embedder = self.inner.settings.link_components.as_deref();
                let linker = crate::component::link::linker(&self.inner.engine, embedder, mode, http || service)?;
                // Another thread may have built it meanwhile: either copy serves.
                linkers.get_or_init(|| linker)
            }
        };
        let mut stubbed = None;
        if self.inner.settings.unknown_imports_trap {
            let mut linker = base.clone();
            linker.define_unknown_imports_as_traps(component)?;
            stubbed = Some(linker);
        }
        let linker = stubbed.as_ref().unwrap_or(base);
        linker
            .instantiate_pre(component)
            .map_err(|err| chained(InstantiateError::Failed { guest: name.to_owned() }, wasmtime_causes(&err, false)))
    }

    /// Links `module` once, so that each run only instantiates: every import must be one wrt
    /// provides (or, with [`RuntimeBuilder::unknown_imports_trap`], becomes a trapping stub).
    pub(crate) fn link(
        &self,
        name: &str,
        module: &Module,
        mode: Mode,
    ) -> crate::Result<wasmtime::InstancePre<GuestState>> {
        let base: &Linker<GuestState> = self.linker(mode)?;
        let mut stubbed = None;
        if self.inner.settings.unknown_imports_trap {
            let mut linker = base.clone();
            linker.define_unknown_imports_as_traps(module)?;
            stubbed = Some(linker);
        }
        let linker = stubbed.as_ref().unwrap_or(base);
        let unknown = |module: &str, field: &str| InstantiateError::UnknownImport {
            guest: name.to_owned(),
            module: module.to_owned(),
            name: field.to_owned(),
        };
        if let Some(import) = module.imports().find(|import| crate::wasi::original::is_internal(import.module())) {
            return Err(unknown(import.module(), import.name()).into());
        }
        linker.instantiate_pre(module).map_err(|err| match err.downcast_ref::<wasmtime::UnknownImportError>() {
            Some(import) => unknown(import.module(), import.name()).into(),
            None => chained(InstantiateError::Failed { guest: name.to_owned() }, wasmtime_causes(&err, false)),
        })
    }
}

/// What a guest is loaded for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// Runs: a core module, or a component's `wasi:cli/run`.
    Run,
    /// Answering HTTP requests: a component's `wasi:http` handler.
    Serve,
}

/// A component's `wasi:cli/command` bindings, for synchronous or asynchronous runs.
pub(crate) trait LinkedCommand: Sized {
    fn new(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self>;
}

impl LinkedCommand for CommandPre<GuestState> {
    fn new(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        CommandPre::new(pre)
    }
}

impl LinkedCommand for wasmtime_wasi::p2::bindings::CommandPre<GuestState> {
    fn new(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        wasmtime_wasi::p2::bindings::CommandPre::new(pre)
    }
}

impl LinkedCommand for wasmtime_wasi::p3::bindings::CommandPre<GuestState> {
    fn new(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        wasmtime_wasi::p3::bindings::CommandPre::new(pre)
    }
}

/// The prefix of the name of WASI 0.3's `run` interface, which a command of WASI 0.3 exports
/// (any 0.3 release: wasmtime's bindings check the function's type).
const P3_RUN: &str = "wasi:cli/run@0.3.";

/// Whether `component` exports WASI 0.3's `run`.
fn exports_p3_run(engine: &Engine, component: &wasmtime::component::Component) -> bool {
    component.component_type().exports(engine).any(|(name, _)| name.starts_with(P3_RUN))
}

/// Compiles a binary module or component, or WebAssembly text. A text syntax error names `path` (or `name`
/// for bytes without a file). `on_slow_compile` is called, from another thread, if compiling
/// takes longer than its delay.
pub(crate) fn compile(
    engine: &Engine,
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
        _ => Module::from_binary(engine, &binary).map(Compiled::Module),
    };
    drop(done);
    if let Some(watcher) = watcher {
        let _ = watcher.join();
    }
    compiled
}

/// Fails when the guest exports `wrt_gc` with another type than the collector hook's.
pub(crate) fn check_collector_hook(name: &str, module: &Module) -> Result<(), InstantiateError> {
    let Some(export) = module.get_export(crate::collector::GUEST_GC_EXPORT) else {
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

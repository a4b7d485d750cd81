//! A configured sandbox: a wasmtime engine and linker with DONTFORK guest memory, able to
//! load guests and run them.

use std::path::Path;
use std::sync::Arc;

use wasmtime::{Config, Engine, Linker, Module};

use crate::builder::SandboxBuilder;
use crate::deadline::EpochTicker;
use crate::error::LoadError;
use crate::guest::{Format, Guest, sniff};
use crate::instance::{Instance, Report};
use crate::state::GuestState;
use crate::sys::memory_creator::GuestMemoryCreator;

/// A sandbox: guests loaded into it run with its settings, each run in a fresh store.
///
/// Create one with [`Sandbox::builder`]. A sandbox can load and run any number of guests,
/// one after another or from several threads.
#[derive(Clone)]
pub struct Sandbox {
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<GuestState>>,
    pub(crate) settings: Arc<SandboxBuilder>,
    /// Advances the engine's epoch while a guest runs under a timeout.
    pub(crate) ticker: Arc<EpochTicker>,
    /// The module through which `poll_oneoff` reaches WASI's own, compiled on first use.
    pub(crate) poll_trampoline: Arc<std::sync::OnceLock<Module>>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Sandbox {
    /// A builder with the defaults of [`SandboxBuilder`].
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::new()
    }

    pub(crate) fn new(settings: SandboxBuilder) -> wasmtime::Result<Self> {
        let mut config = Config::new();
        // Our memory creator maps every linear memory and the GC heap; it needs the on-demand
        // allocator (the default) and no copy-on-write images (wasmtime#10740).
        config
            .with_host_memory(Arc::new(GuestMemoryCreator { dontfork: settings.dontfork }))
            .memory_init_cow(false)
            .consume_fuel(settings.fuel.is_some())
            .epoch_interruption(settings.timeout.is_some());
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |state: &mut GuestState| &mut state.wasi)?;
        crate::wasi_exit::add_to_linker(&mut linker)?;
        if settings.timeout.is_some() {
            crate::wasi_deadline::add_to_linker(&mut linker)?;
        }
        crate::abi::host::add_to_linker(&mut linker)?;
        let ticker = Arc::new(EpochTicker::new(&engine));
        Ok(Self {
            engine,
            linker: Arc::new(linker),
            settings: Arc::new(settings),
            ticker,
            poll_trampoline: Arc::default(),
        })
    }

    /// Loads and compiles a guest from a `.wasm` or `.wat` file, using the compile cache.
    ///
    /// # Errors
    ///
    /// [`LoadError`] when the file cannot be read or is not a core WebAssembly module; a
    /// compile error when the module is invalid.
    pub fn load_file(&self, path: impl AsRef<Path>) -> wasmtime::Result<Guest> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read { path: path.to_owned(), source })?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        self.load(&name, Some(path), &bytes)
    }

    /// Loads and compiles a guest from the bytes of a binary module or WebAssembly text.
    ///
    /// # Errors
    ///
    /// As [`Sandbox::load_file`].
    pub fn load_bytes(&self, name: &str, bytes: &[u8]) -> wasmtime::Result<Guest> {
        self.load(name, None, bytes)
    }

    fn load(&self, name: &str, path: Option<&Path>, bytes: &[u8]) -> wasmtime::Result<Guest> {
        match sniff(bytes) {
            Format::Module | Format::Text => {}
            Format::Component => return Err(LoadError::Component { name: name.to_owned() }.into()),
            Format::Unknown => return Err(LoadError::NotWasm { name: name.to_owned() }.into()),
        }
        let compile_context = || format!("failed to compile guest `{name}`");
        let compile = || crate::guest::compile(&self.engine, name, path, bytes, self.settings.on_slow_compile.as_ref());
        let (module, from_cache) = match self.settings.cache.dir() {
            Some(dir) => crate::cache::load_or_compile(&self.engine, &dir, bytes, compile)
                .map_err(|e| e.context(compile_context()))?,
            None => (compile().map_err(|e| e.context(compile_context()))?, false),
        };
        Ok(Guest { module, name: name.to_owned(), from_cache })
    }

    /// Creates an instance of `guest` in a fresh store, ready to run.
    ///
    /// # Errors
    ///
    /// [`crate::InstantiateError::UnknownImport`] when the guest imports something wrt does not
    /// provide; [`crate::ConfigError`] when a preopened directory cannot be opened.
    pub fn instantiate(&self, guest: &Guest) -> wasmtime::Result<Instance> {
        Instance::new(self, guest)
    }

    /// Runs the guest's `_start` in a fresh instance and returns how it ended.
    ///
    /// # Errors
    ///
    /// As [`Sandbox::instantiate`]; a guest ending badly (trap, timeout, no fuel) is an
    /// [`crate::Outcome`], not an error.
    pub fn run(&self, guest: &Guest) -> wasmtime::Result<Report> {
        let mut instance = self.instantiate(guest)?;
        let outcome = instance.run_start()?;
        Ok(instance.into_report(outcome))
    }

    /// Calls the export `name` of a fresh instance with `args` parsed as its parameters (as
    /// `wasmtime run --invoke` does), after the guest's `_initialize` if it has one.
    ///
    /// # Errors
    ///
    /// As [`Sandbox::instantiate`], and [`crate::InstantiateError`] when the export is missing
    /// or the arguments do not match its parameters.
    pub fn invoke(&self, guest: &Guest, name: &str, args: &[String]) -> wasmtime::Result<Report> {
        let mut instance = self.instantiate(guest)?;
        let outcome = instance.invoke(name, args)?;
        Ok(instance.into_report(outcome))
    }
}

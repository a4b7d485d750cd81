//! The shared runtime: one wasmtime engine with DONTFORK guest memory, one linker holding WASI
//! and the `wrt_v1` ABI, the compile cache and the epoch ticker. Guests are compiled once per
//! runtime and run any number of times, from any thread, each run with its own
//! [`RunOptions`](crate::RunOptions).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::{Config, Engine, Linker};

use crate::cache::{CacheError, CacheMode};
use crate::component::link::LinkComponentsFn;
use crate::epoch_ticker::EpochTicker;
use crate::guest_state::GuestState;
use crate::host_fn::Mode;
use crate::sys::fiber_stack::{PooledStacks, StackPool};
use crate::sys::memory_creator::GuestMemoryCreator;
use crate::sys::memory_pool::{MemoryPool, PoolLimits};

/// How long a compilation runs before `wrt run` says it is compiling.
pub const SLOW_COMPILE: Duration = Duration::from_secs(1);

/// A runtime: the engine, linker, compile cache and epoch ticker that every guest loaded into
/// it shares. Cheap to clone (clones share everything), `Send` and `Sync`: create one per
/// process and hand clones to every thread.
///
/// What can change per run (arguments, environment, stdio, preopens, limits, fuel, timeout,
/// spawn and collection policies) is a [`RunOptions`](crate::RunOptions); what changes the
/// generated code or the memory layout (fuel metering, `MADV_DONTFORK`) is fixed here.
///
/// # Examples
///
/// ```no_run
/// use wrt_runtime::{Outcome, RunOptions, Runtime};
///
/// # fn main() -> wrt_runtime::Result<()> {
/// let runtime = Runtime::new()?;
/// let guest = runtime.load_file("app.wasm")?;
/// let report = guest.run(&RunOptions::new().arg("input.txt"))?;
/// assert_eq!(report.outcome, Outcome::Exited(0));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) engine: Engine,
    /// Shared with each store, whose wrappers of WASI functions look WASI's own up in it when
    /// they first need them (`wasi::original`).
    pub(crate) linker: Arc<Linker<GuestState>>,
    /// The same for asynchronous runs, built on the first one ([`Runtime::linker`]).
    pub(crate) linker_async: OnceLock<Arc<Linker<GuestState>>>,
    /// The linker of components: WASI 0.2 and `wrt:process`, built when the first component
    /// is loaded (a runtime that runs core modules only never pays for it).
    pub(crate) components: OnceLock<wasmtime::component::Linker<GuestState>>,
    /// The same for asynchronous runs, built on the first one.
    pub(crate) components_async: OnceLock<wasmtime::component::Linker<GuestState>>,
    /// The linker of `wasi:http` services (asynchronous, with `wasi:http`), on the first, when
    /// the runtime does not link `wasi:http` into every component.
    pub(crate) services: OnceLock<wasmtime::component::Linker<GuestState>>,
    pub(crate) settings: RuntimeBuilder,
    /// Advances the engine's epoch while a guest runs under a timeout.
    pub(crate) ticker: Arc<EpochTicker>,
    /// The module through which the wrappers of WASI functions reach WASI's own, compiled on
    /// first use.
    pub(crate) wasi_trampoline: Arc<crate::cache::LazyModule>,
    /// Slabs of host-buffer memory, recycled across runs.
    pub(crate) slabs: Arc<MemoryPool>,
    /// Whether [`RuntimeBuilder::on_cache_unusable`] was called: it is, once per runtime.
    pub(crate) cache_reported: AtomicBool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("settings", &self.inner.settings).finish_non_exhaustive()
    }
}

/// Settings of a [`Runtime`]. Defaults: guest memory marked `MADV_DONTFORK` and pooled
/// ([`PoolLimits::default`]), no compile cache on disk, no fuel metering, timeouts possible,
/// guests with unknown imports refused, no slow-compile hook, no unusable-cache hook.
#[derive(Clone, Default)]
pub struct RuntimeBuilder {
    pub(crate) allow_fork_copies: bool,
    pub(crate) cache: CacheMode,
    /// `None`: [`DEFAULT_CACHE_LIMIT`](crate::cache::DEFAULT_CACHE_LIMIT).
    pub(crate) cache_limit: Option<u64>,
    pub(crate) fuel: bool,
    /// [`RuntimeBuilder::timeouts`] turned off.
    pub(crate) no_timeouts: bool,
    /// [`RuntimeBuilder::parallel_compilation`] turned off.
    pub(crate) compile_on_one_thread: bool,
    pub(crate) unknown_imports_trap: bool,
    /// [`RuntimeBuilder::http`].
    pub(crate) http: bool,
    pub(crate) on_slow_compile: Option<SlowCompileHook>,
    pub(crate) on_cache_unusable: Option<Arc<CacheUnusableFn>>,
    pub(crate) pool: PoolLimits,
    pub(crate) slab_pool: Option<PoolLimits>,
    pub(crate) link_modules: Option<Arc<LinkModulesFn>>,
    pub(crate) link_components: Option<Arc<LinkComponentsFn>>,
}

/// The function of [`RuntimeBuilder::link_modules`].
pub(crate) type LinkModulesFn = crate::host_fn::LinkFn<Linker<GuestState>>;

/// Called once when compiling a guest takes longer than its delay: the guest's name and the
/// size of its bytes.
#[derive(Clone)]
pub(crate) struct SlowCompileHook {
    pub(crate) after: Duration,
    pub(crate) hook: Arc<SlowCompileFn>,
}

/// The function of a [`SlowCompileHook`].
pub(crate) type SlowCompileFn = dyn Fn(&str, u64) + Send + Sync;

/// The function of [`RuntimeBuilder::on_cache_unusable`].
pub(crate) type CacheUnusableFn = dyn Fn(&CacheError) + Send + Sync;

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("dontfork", &!self.allow_fork_copies)
            .field("cache", &self.cache)
            .field("fuel", &self.fuel)
            .field("timeouts", &!self.no_timeouts)
            .field("parallel_compilation", &!self.compile_on_one_thread)
            .field("unknown_imports_trap", &self.unknown_imports_trap)
            .field("http", &self.http)
            .field("on_slow_compile", &self.on_slow_compile.as_ref().map(|_| "Fn"))
            .field("on_cache_unusable", &self.on_cache_unusable.as_ref().map(|_| "Fn"))
            .field("pool", &self.pool)
            .field("slab_pool", &self.slab_pool())
            .field("link_modules", &self.link_modules.as_ref().map(|_| "Fn"))
            .field("link_components", &self.link_components.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl RuntimeBuilder {
    /// Whether guest memories and host buffers are marked `MADV_DONTFORK`, so a `fork()` of
    /// the host does not copy their page tables. Default: on. Turn off only to measure what
    /// it saves.
    pub fn dontfork(mut self, on: bool) -> Self {
        self.allow_fork_copies = !on;
        self
    }

    /// Where compiled modules are cached. Default: [`CacheMode::Disabled`] (a library does not
    /// write to the user's home unasked; the `wrt` CLI uses [`CacheMode::User`]).
    pub fn cache(mut self, cache: CacheMode) -> Self {
        self.cache = cache;
        self
    }

    /// The most bytes the cache directory holds: after a store, the entries used longest ago
    /// are removed until the rest fit. Default: [`DEFAULT_CACHE_LIMIT`](crate::cache::DEFAULT_CACHE_LIMIT), 1 GiB.
    pub fn cache_limit(mut self, bytes: u64) -> Self {
        self.cache_limit = Some(bytes);
        self
    }

    /// Whether Cranelift compiles a guest's functions on several threads (wasmtime's pool,
    /// started by the first compilation and kept). Default: on. Off, this runtime starts no
    /// thread to load a guest (unless [`RuntimeBuilder::on_slow_compile`] asks for its
    /// watcher), at the cost of compiling on the caller's thread alone: for a
    /// process that will fork and keep running without `exec` (a zygote), where a thread of the
    /// parent caught holding a lock leaves the child stuck on it. The generated code, and so
    /// the compile cache, is the same either way.
    pub fn parallel_compilation(mut self, on: bool) -> Self {
        self.compile_on_one_thread = !on;
        self
    }

    /// Compiles fuel accounting into guest code, so that runs may set
    /// [`RunOptions::fuel`](crate::RunOptions::fuel). Default: off (accounting slows guest
    /// code; a run asking for fuel on a runtime without it is refused).
    pub fn fuel(mut self, on: bool) -> Self {
        self.fuel = on;
        self
    }

    /// Compiles the checks that let a run stop at [`RunOptions::timeout`](crate::RunOptions::timeout)
    /// into guest code (wasmtime's epoch interruption: a check at every function entry and loop
    /// header). Default: on. Off, guest code is exactly what `wasmtime run` compiles (a little
    /// faster, and a trap at a function's first instruction is reported at that instruction's
    /// offset, where the entry check moves it one byte early), and a run asking for a timeout
    /// is refused. Code compiled one way does not load into a runtime set the other way: the
    /// compile cache keeps both.
    pub fn timeouts(mut self, on: bool) -> Self {
        self.no_timeouts = !on;
        self
    }

    /// Lets guests that import functions wrt does not provide be loaded: each such function
    /// traps when called (`wasmtime run -W unknown-imports-trap`). Default: off, and loading
    /// such a guest fails with [`crate::InstantiateError::UnknownImport`].
    pub fn unknown_imports_trap(mut self, on: bool) -> Self {
        self.unknown_imports_trap = on;
        self
    }

    /// Links `wasi:http` (0.2.12 and 0.3.0) into every component: its types (requests,
    /// responses, fields, bodies) and its outgoing handler, which refuses every request
    /// (`HTTP-request-denied`: guests get no network). [`Runtime::load_service_file`] links it
    /// whatever this says. Default: off, and a command importing `wasi:http` is refused when
    /// loaded, naming the import (`wasmtime run` without `-S http`).
    pub fn http(mut self, on: bool) -> Self {
        self.http = on;
        self
    }

    /// Called once, from another thread, when compiling a guest (a cache miss) is still running
    /// `after` it started (`wrt run` uses [`SLOW_COMPILE`]), with the guest's name and its size
    /// in bytes: for a progress line. Never called for a module loaded from the cache. Default:
    /// none.
    pub fn on_slow_compile(mut self, after: Duration, hook: impl Fn(&str, u64) + Send + Sync + 'static) -> Self {
        self.on_slow_compile = Some(SlowCompileHook { after, hook: Arc::new(hook) });
        self
    }

    /// Called once per runtime, on the first load that finds the cache directory unusable
    /// (another user's, writable by group or others, on a file system without user extended
    /// attributes, or not creatable): that load and every later one compile without the cache.
    /// `wrt run` prints the error. Default: none (the cache is skipped silently).
    pub fn on_cache_unusable(mut self, hook: impl Fn(&CacheError) + Send + Sync + 'static) -> Self {
        self.on_cache_unusable = Some(Arc::new(hook));
        self
    }

    /// How many guest memories the runtime keeps for reuse between runs (see [`PoolLimits`]).
    /// A run takes a reservation from the pool and gives it back when its instance drops:
    /// every byte the guest could reach is discarded (the next guest reads zeros, and reaches
    /// only its own memory's size), and the reservation stays `MADV_DONTFORK`. Default: [`PoolLimits::default`]; `idle: 0` maps
    /// and unmaps every memory per run.
    pub fn memory_pool(mut self, limits: PoolLimits) -> Self {
        self.pool = limits;
        self
    }

    /// How many 1 MiB slabs of host-buffer memory the runtime keeps for reuse between runs,
    /// with the same reset and `MADV_DONTFORK` as memories. Default: [`PoolLimits::SLABS`].
    pub fn buffer_slab_pool(mut self, limits: PoolLimits) -> Self {
        self.slab_pool = Some(limits);
        self
    }

    /// Adds the embedder's own host functions to the linker of core modules, once, when the
    /// runtime is built: `link` defines them with wasmtime's [`Linker`] (`func_wrap` and the
    /// rest), and a guest imports them by module and name like WASI's. They run on the guest's
    /// thread with the run's [`GuestState`] (`Caller<'_, GuestState>`), which gives the run's
    /// own data ([`GuestState::host_data`]) and, through the caller's exports, the guest's
    /// memory. Shadowing is refused: a function WASI or the `wrt_v1` ABI already defines makes
    /// [`RuntimeBuilder::build`] fail. What they do is the embedder's to bound: a timeout or a
    /// cancel stops the guest only once such a function returns. Default: none.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{RunOptions, Runtime};
    ///
    /// # fn main() -> wrt_runtime::Result<()> {
    /// let runtime = Runtime::builder()
    ///     .link_modules(|linker| {
    ///         linker.func_wrap("host", "double", |x: i32| x * 2)?;
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// let wat = r#"(module (import "host" "double" (func $double (param i32) (result i32)))
    ///     (func (export "run") (result i32) (call $double (i32.const 21))))"#;
    /// let guest = runtime.load_bytes("double.wat", wat.as_bytes())?;
    /// let mut instance = guest.instantiate(&RunOptions::new())?;
    /// let results = instance.call("run", &[])?;
    /// assert!(matches!(results.as_deref(), Ok([wrt_runtime::wasmtime::Val::I32(42)])));
    /// # Ok(()) }
    /// ```
    pub fn link_modules(
        mut self,
        link: impl Fn(&mut Linker<GuestState>) -> wasmtime::Result<()> + Send + Sync + 'static,
    ) -> Self {
        self.link_modules = Some(Arc::new(link));
        self
    }

    /// Adds the embedder's own host functions to the linker of components, once, when the
    /// first component is loaded: `link` defines them with wasmtime's component
    /// [`Linker`](wasmtime::component::Linker) (`root().func_wrap`, or `instance("pkg:name/iface")`),
    /// and a component imports them as its WIT says. As with [`RuntimeBuilder::link_modules`],
    /// shadowing what wrt defines is refused (loading the first component fails), and they
    /// run on the guest's thread with its [`GuestState`]. Default: none.
    pub fn link_components(
        mut self,
        link: impl Fn(&mut wasmtime::component::Linker<GuestState>) -> wasmtime::Result<()> + Send + Sync + 'static,
    ) -> Self {
        self.link_components = Some(Arc::new(link));
        self
    }

    fn slab_pool(&self) -> PoolLimits {
        self.slab_pool.unwrap_or(PoolLimits::SLABS)
    }

    /// Creates the runtime: its engine and linker.
    ///
    /// # Errors
    ///
    /// wasmtime cannot create the engine (for example, the host CPU lacks a feature it needs).
    pub fn build(self) -> crate::Result<Runtime> {
        let mut config = Config::new();
        // Our memory creator maps every linear memory and the GC heap; it needs the on-demand
        // allocator (the default) and no copy-on-write images (wasmtime#10740). Our stack
        // creator maps and recycles the fibers' stacks of asynchronous runs. Epoch checks are
        // compiled in unless timeouts are off, so that any run may have a timeout.
        config
            .with_host_memory(Arc::new(GuestMemoryCreator {
                pool: MemoryPool::new(!self.allow_fork_copies, self.pool),
            }))
            .with_host_stack(Arc::new(PooledStacks(StackPool::new(!self.allow_fork_copies))))
            .memory_init_cow(false)
            // The component model's async (WASI 0.3): async functions, streams and futures,
            // run by wasmtime's concurrent event loop. Asynchronous calls of WASI 0.2
            // components go through that loop too.
            .concurrency_support(true)
            .wasm_component_model_async(true)
            .consume_fuel(self.fuel)
            .epoch_interruption(!self.no_timeouts)
            .parallel_compilation(!self.compile_on_one_thread);
        let engine = Engine::new(&config)?;
        let linker = module_linker(&engine, self.link_modules.as_deref(), Mode::Sync)?;
        let ticker = Arc::new(EpochTicker::new(&engine));
        let slabs = MemoryPool::new(!self.allow_fork_copies, self.slab_pool());
        let cache = self.cache.dir().map(|dir| (dir, self.cache_limit.unwrap_or(crate::cache::DEFAULT_CACHE_LIMIT)));
        let inner = Inner {
            engine,
            linker: Arc::new(linker),
            linker_async: OnceLock::new(),
            components: OnceLock::new(),
            components_async: OnceLock::new(),
            services: OnceLock::new(),
            settings: self,
            ticker,
            wasi_trampoline: Arc::new(crate::cache::LazyModule::new(cache)),
            slabs,
            cache_reported: AtomicBool::new(false),
        };
        Ok(Runtime { inner: Arc::new(inner) })
    }
}

/// The linker of core modules for runs of `mode`: WASI preview 1 with wrt's wrappers, the
/// `wrt_v1` ABI, and the embedder's own functions (`embedder`). Those are defined first, with
/// shadowing then off: one that names a function of wrt's makes a definition below fail,
/// whatever the embedder did to the setting.
fn module_linker(
    engine: &Engine,
    embedder: Option<&LinkModulesFn>,
    mode: Mode,
) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    let own = |linker: &mut Linker<GuestState>| -> wasmtime::Result<()> {
        match mode {
            Mode::Sync => wasmtime_wasi::p1::add_to_linker_sync(linker, wasi_of)?,
            Mode::Async => wasmtime_wasi::p1::add_to_linker_async(linker, wasi_of)?,
        }
        crate::wasi::exit::add_to_linker(linker)?;
        crate::wasi::blocking_calls::add_to_linker(linker, mode)?;
        crate::wasi::limits::add_to_linker(linker, mode)?;
        crate::wasi::direct_writes::add_to_linker(linker, mode)?;
        crate::wasi::readdir::add_to_linker(linker, mode)?;
        crate::abi::add_to_linker(linker, mode)
    };
    crate::host_fn::embedder_first(&mut linker, embedder, own)?;
    Ok(linker)
}

/// The WASI context of a guest. Only a guest that imports WASI functions can call them, and such
/// a guest always has a context; the fallback (an empty context: no arguments, environment,
/// files or stdio) keeps even a broken invariant from panicking.
fn wasi_of(state: &mut GuestState) -> &mut wasmtime_wasi::p1::WasiP1Ctx {
    state.wasi.get_or_insert_with(|| Box::new(wasmtime_wasi::WasiCtxBuilder::new().build_p1()))
}

impl Runtime {
    /// The linker of core modules for runs of `mode`, the asynchronous one built on first use.
    pub(crate) fn linker(&self, mode: Mode) -> crate::Result<&Arc<Linker<GuestState>>> {
        let inner = &self.inner;
        match mode {
            Mode::Sync => Ok(&inner.linker),
            Mode::Async => match inner.linker_async.get() {
                Some(linker) => Ok(linker),
                None => {
                    let linker = module_linker(&inner.engine, inner.settings.link_modules.as_deref(), Mode::Async)?;
                    Ok(inner.linker_async.get_or_init(|| Arc::new(linker)))
                }
            },
        }
    }

    /// A runtime with the defaults of [`RuntimeBuilder`].
    ///
    /// # Errors
    ///
    /// As [`RuntimeBuilder::build`].
    pub fn new() -> crate::Result<Self> {
        RuntimeBuilder::default().build()
    }

    /// A builder with the defaults listed at [`RuntimeBuilder`].
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// Whether runs may have a timeout ([`RuntimeBuilder::timeouts`]).
    pub fn timeouts(&self) -> bool {
        !self.inner.settings.no_timeouts
    }

    /// Whether guest code counts fuel ([`RuntimeBuilder::fuel`]).
    pub fn fuel_metering(&self) -> bool {
        self.inner.settings.fuel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library must not write to the user's home by default.
    #[test]
    fn a_library_caches_nothing_unless_asked() {
        assert_eq!(Runtime::builder().cache, CacheMode::Disabled);
        assert_eq!(Runtime::new().unwrap().inner.settings.cache.dir(), None);
    }

    #[test]
    fn runtimes_and_guests_cross_threads() {
        fn shared<T: Clone + Send + Sync>() {}
        shared::<Runtime>();
        shared::<crate::RunOptions>();
    }

    /// An instance of a module whose memory starts at `pages` pages drops quickly (in a task of
    /// a server's runtime) only when small: 64 KiB is, 64 MiB is not (the line is at 8 MiB).
    #[test]
    fn an_instance_drops_quickly_when_it_holds_little_memory_only() {
        let with_memory = |pages: u32| {
            let wat = format!(r#"(module (memory {pages}) (func (export "_start")))"#);
            let guest = Runtime::new().unwrap().load_bytes("memory.wat", wat.as_bytes()).unwrap();
            guest.instantiate(&crate::RunOptions::new()).unwrap().drops_quickly()
        };
        assert!(with_memory(1));
        assert!(with_memory(100));
        assert!(!with_memory(1024));
    }
}

//! One instantiated guest in its own store: run `_start`, invoke exports, inspect memory.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, Val, ValType, WasmBacktrace};
use wasmtime_wasi::p2::bindings::sync::Command;

use crate::cancel::{CancelToken, Registration};
use crate::capture::Capture;
use crate::deadline::{DeadlineExceeded, EpochTicker, Ticking};
use crate::error::{ConfigError, InstantiateError, chained, wasmtime_causes};
use crate::external::accountant::Accountant;
use crate::guest::{Code, Guest};
use crate::host_fn::{Mode, call_wasm, now};
use crate::limiter::Limiter;
use crate::options::RunOptions;
use crate::outcome::{Outcome, TrapInfo};
use crate::process_service::state::SpawnState;
use crate::state::originals::Originals;
use crate::state::p2::P2;
use crate::state::{ExternalState, GuestState};
use crate::stats::Stats;
use crate::stdio::{DirectStdio, Stream};
use crate::stop::{self, Cancelled, Stop, StopCell};
use crate::sys::fiber_stack::FiberCount;
use crate::value::{WasmType, WasmValue};
use crate::wasi::ctx::{self as wasi_ctx, Captured};

mod asynchronous;

/// What a finished run returns: how it ended and what it wrote to captured streams.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// How the guest ended.
    pub outcome: Outcome,
    /// Captured standard output (empty unless captured).
    pub stdout: Vec<u8>,
    /// Captured standard error (empty unless captured).
    pub stderr: Vec<u8>,
    /// Whether the guest wrote more to its captured standard output than the capture's limit
    /// (see [`crate::GuestOutput::Capture`]): `stdout` holds the first `limit` bytes. For a
    /// [`crate::GuestOutput::Writer`]: whether the writer failed (a write or a flush), so bytes
    /// the guest wrote were lost.
    pub stdout_truncated: bool,
    /// The same for standard error.
    pub stderr_truncated: bool,
    /// What the guest used: memory, collections, spawns, time, fuel.
    pub stats: Stats,
}

impl Report {
    /// Whether the sandbox refused the guest memory at least once during the run (a growth
    /// past the memory limit, or a host buffer; see [`Stats::memory_refusals`]). A guest that
    /// ended badly after such a refusal most likely ran out of memory.
    pub fn hit_memory_limit(&self) -> bool {
        self.stats.memory_refusals > 0
    }
}

/// A guest instantiated in its own store. Its memories live until it is dropped.
///
/// Instantiation runs wasm (the module's start function) under the sandbox's timeout and fuel.
/// When that code stops the guest (a trap, `proc_exit`, the timeout, no fuel left), the
/// instance is created anyway, in the ended state. A call in which the guest exits (`_start`
/// returns, or it calls `proc_exit`) ends it the same way; a call that traps, times out or runs
/// out of fuel ends its children but not the instance, which wasm lets run again (each later
/// call gets a fresh budget). Once ended, [`Instance::ended`] says how, and
/// [`Instance::run_start`] and [`Instance::invoke`] return that outcome without running
/// anything.
///
/// The timeout and fuel make one budget for instantiation and the first call together (the
/// timeout counts from the start of instantiation); each later call gets a fresh budget.
pub struct Instance {
    store: Store<GuestState>,
    state: State,
    /// The budget armed at instantiation is still the first call's.
    carried: bool,
    /// The deadline of the current budget.
    budget_deadline: Option<Instant>,
    stop_cell: StopCell,
    ticker: Arc<EpochTicker>,
    captured: Captured,
    guest_name: String,
    fuel: Option<u64>,
    /// Whether the runtime meters fuel (so a run without a limit gets all it could need).
    metering: bool,
    /// The guest's command entry points, as the guest looked them up (none for a component).
    entry: [Option<wasmtime::ModuleExport>; 2],
    timeout: Option<Duration>,
    /// When instantiation started ([`Stats::wall_time`]).
    started: Instant,
    /// CPU time of the calls so far, instantiation included ([`Stats::cpu_time`]), when measured.
    cpu_time: Option<Duration>,
    /// Fuel burned by the calls so far ([`Stats::fuel_consumed`]).
    fuel_consumed: u64,
    /// The run's place with its cancel token, if it has one.
    cancel: Option<Registration>,
    /// Whether a call has looked for `_initialize` (and run it).
    initialized: bool,
    /// The fibers the run's asynchronous calls hold.
    fibers: FiberCount,
}

enum State {
    Ready(wasmtime::Instance),
    /// A component, ready to run `wasi:cli/run`.
    Command(Box<Command>),
    /// A component of an asynchronous run, ready to run `wasi:cli/run`.
    CommandAsync(Box<wasmtime_wasi::p2::bindings::Command>),
    /// Instantiation or a call stopped the guest.
    Ended(Outcome),
}

/// Running a guest: each run in a fresh instance.
///
/// These calls block the calling thread while the guest runs, and work on any thread,
/// inside a tokio runtime too: in a multi-thread runtime's task (or its `block_on`) the guest
/// runs on the same thread through `tokio::task::block_in_place`, which hands the thread's
/// other tasks to another worker; in a current-thread runtime it runs on a thread of its own,
/// started and joined for each call. A server with many runs in flight does better with
/// [`Guest::run_async`], which holds no thread while the guest waits. The guest's WASI calls
/// use wrt's own runtime, never the caller's.
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
        crate::ambient::blocking(|| {
            let mut instance = self.instantiate(options)?;
            let outcome = instance.run_start()?;
            Ok(instance.into_report(outcome))
        })
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
        crate::ambient::blocking(|| {
            let mut instance = self.instantiate(options)?;
            let outcome = instance.invoke(name, args)?;
            Ok(instance.into_report(outcome))
        })
    }
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").field("guest", &self.guest_name).finish_non_exhaustive()
    }
}

impl Instance {
    pub(crate) fn new(guest: &Guest, options: &RunOptions) -> crate::Result<Self> {
        let mut this = Self::prepare(guest, options, Mode::Sync)?;
        if this.cancelled_before_start() {
            return Ok(this);
        }
        // Instantiation runs wasm (the start function; data and element segments), under the
        // same deadline and fuel as the first call.
        let instantiated = match &guest.code {
            Code::Module { pre, .. } => this.enter(|store| pre.instantiate(store).map(State::Ready)),
            Code::Component { pre, .. } => {
                this.enter(|store| pre.instantiate(store).map(|c| State::Command(Box::new(c))))
            }
        };
        this.instantiated(instantiated, guest, options)?;
        Ok(this)
    }

    /// An instance of `guest` with `options`, for runs of `mode`, before instantiation (its
    /// state a placeholder until then); ended, cancelled, when its cancel token already is.
    fn prepare(guest: &Guest, options: &RunOptions, mode: Mode) -> crate::Result<Self> {
        let started = Instant::now();
        // Instantiation may run guest code (a start function) and build WASI streams.
        let _tokio = crate::ambient::enter();
        let runtime = &guest.runtime.inner;
        options.check(runtime.settings.cache.dir().as_deref()).map_err(ConfigError::into_error)?;
        if options.fuel.is_some() && !runtime.settings.fuel {
            let reason = "the runtime was built without fuel metering (`RuntimeBuilder::fuel`)".into();
            return Err(ConfigError::BadLimit { what: "fuel", reason }.into());
        }
        if runtime.settings.no_timeouts {
            let reason = || "the runtime was built without timeouts (`RuntimeBuilder::timeouts`)".into();
            if options.timeout.is_some() {
                return Err(ConfigError::BadLimit { what: "timeout", reason: reason() }.into());
            }
            if options.cancel.is_some() {
                return Err(ConfigError::BadLimit { what: "cancel token", reason: reason() }.into());
            }
        }
        let stop_cell = StopCell::new(options.cancel.clone());
        wasi_ctx::check_preopens(options).map_err(ConfigError::into_error)?;
        let captured = wasi_ctx::captures(options);
        let (mut wasi, mut p2) = (None, None);
        match &guest.code {
            Code::Module { wasi: true, .. } => {
                wasi = Some(wasi_ctx::build(options, &guest.name, &stop_cell, &captured, mode)?);
            }
            Code::Module { .. } => {}
            Code::Component { .. } => {
                let ctx = wasi_ctx::builder(options, &guest.name, &stop_cell, &captured, mode)?.build();
                p2 = Some(P2::new(ctx));
            }
        }
        let inherit = [
            matches!(options.stdin, crate::GuestStdin::Inherit),
            matches!(options.stdout, crate::GuestOutput::Inherit),
            matches!(options.stderr, crate::GuestOutput::Inherit),
        ];
        let captures = [captured.stdout.clone(), captured.stderr.clone()];
        let stream = |output: &crate::GuestOutput, captured: bool| match output {
            _ if wasi.is_none() || captured => Stream::Wasi,
            crate::GuestOutput::Inherit => Stream::Host,
            crate::GuestOutput::Null => Stream::Discard,
            _ => Stream::Wasi,
        };
        let direct_stdio = DirectStdio::new(
            stream(&options.stdout, captured.stdout.is_some()),
            stream(&options.stderr, captured.stderr.is_some()),
        );
        let spawn = SpawnState::new(
            options.spawner(&guest.name).map_err(ConfigError::into_error)?,
            options.denials.clone(),
            guest.name.clone(),
            inherit,
            captures,
        );
        let cancel = options
            .cancel
            .as_ref()
            .map(|token| token.register(spawn.spawner.kill_switch(), Arc::clone(&runtime.ticker)));
        let accountant = Accountant::new(options.gc_policy.clone());
        let external = ExternalState::new(accountant, Arc::clone(&runtime.slabs));
        let instances = match guest.code {
            Code::Module { .. } => crate::limiter::MODULE_INSTANCES,
            Code::Component { .. } => crate::limiter::COMPONENT_INSTANCES,
        };
        let limiter = Limiter::new(options.max_memory, Arc::clone(&external.pool), instances);
        let state = GuestState {
            wasi,
            p2,
            limiter,
            stop: Stop { deadline: None, cancel: options.cancel.clone() },
            stop_cell: stop_cell.clone(),
            spawn,
            last_error: String::new(),
            memory: None,
            direct_stdio,
            listings: Default::default(),
            external,
            wasi_originals: None,
            host_data: options.host_data.clone(),
            mode,
        };
        let mut store = Store::new(&runtime.engine, state);
        store.limiter(|state| &mut state.limiter);
        if !runtime.settings.no_timeouts {
            stop::install(&mut store, |state: &GuestState| &state.stop, mode == Mode::Async);
        }
        if let Code::Module { wasi: true, .. } = guest.code {
            let trampoline = Arc::clone(&runtime.wasi_trampoline);
            store.data_mut().wasi_originals = Some(Originals::new(guest.runtime.linker(mode)?, &trampoline));
        }
        let mut this = Self {
            store,
            state: State::Ended(Outcome::Exited(0)),
            carried: false,
            budget_deadline: None,
            stop_cell,
            ticker: Arc::clone(&runtime.ticker),
            captured,
            guest_name: guest.name.clone(),
            fuel: options.fuel,
            metering: runtime.settings.fuel,
            entry: match &guest.code {
                Code::Module { entry, .. } => *entry,
                Code::Component { .. } => [None, None],
            },
            timeout: options.timeout,
            started,
            cpu_time: options.measure_cpu_time.then_some(Duration::ZERO),
            fuel_consumed: 0,
            cancel,
            initialized: false,
            fibers: FiberCount::default(),
        };
        if options.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            this.state = State::Ended(Outcome::Cancelled);
        }
        Ok(this)
    }

    /// Whether [`Instance::prepare`] found the run's token cancelled: the instance has ended
    /// without instantiating anything.
    fn cancelled_before_start(&self) -> bool {
        matches!(self.state, State::Ended(Outcome::Cancelled))
    }

    /// Takes the result of instantiation: the instance is ready, or ended by its start
    /// function; a failure to instantiate is the error.
    fn instantiated(
        &mut self,
        instantiated: wasmtime::Result<Result<State, Outcome>>,
        guest: &Guest,
        options: &RunOptions,
    ) -> crate::Result<()> {
        let this = self;
        match instantiated {
            Ok(Ok(ready)) => {
                if let State::Ready(instance) = &ready {
                    let memory = instance.get_memory(&mut this.store, "memory");
                    this.store.data_mut().memory = memory;
                }
                this.state = ready;
                this.carried = true;
            }
            Ok(Err(outcome)) => {
                this.store.data_mut().spawn.end_children();
                this.state = State::Ended(outcome);
            }
            Err(err) => {
                return Err(match (this.store.data().limiter.refused_start, options.max_memory) {
                    (Some(refused), Some(limit)) if !err.is::<Trap>() => InstantiateError::MemoryLimit {
                        guest: guest.name.clone(),
                        minimum: refused.needed,
                        memories: refused.memories,
                        limit,
                    }
                    .into(),
                    _ => chained(InstantiateError::Failed { guest: guest.name.clone() }, wasmtime_causes(&err, false)),
                });
            }
        }
        Ok(())
    }

    /// How the guest ended, if it has: at instantiation (its start function trapped, exited,
    /// timed out or ran out of fuel) or by exiting in a call (`_start` returned, or
    /// `proc_exit`). Such an instance runs nothing more.
    pub fn ended(&self) -> Option<&Outcome> {
        match &self.state {
            State::Ready(_) | State::Command(_) | State::CommandAsync(_) => None,
            State::Ended(outcome) => Some(outcome),
        }
    }

    /// Runs the WASI command entry point (`_start`, or the empty-named export).
    ///
    /// # Errors
    ///
    /// [`InstantiateError::NoSuchExport`] when the guest has neither; a failure of the host
    /// (not of the guest) while it runs.
    pub fn run_start(&mut self) -> wasmtime::Result<Outcome> {
        let instance = match &self.state {
            State::Ready(instance) => *instance,
            State::Command(command) => {
                let run = command.wasi_cli_run().clone();
                // `run` returning `Err(())` is a failure without a code: exit 1, as `wasmtime
                // run` gives it.
                return self.run_call(move |store| {
                    run.call_run(store).map(|result| Outcome::Exited(if result.is_ok() { 0 } else { 1 }))
                });
            }
            State::CommandAsync(_) => return Err(self.wrong_mode()),
            State::Ended(outcome) => return Ok(outcome.clone()),
        };
        let func = self.start_func(instance)?;
        self.run_call(|store| func.call(store, ()).map(|()| Outcome::Exited(0)))
    }

    /// The guest's command entry point (`_start`, or the empty-named export).
    fn start_func(&mut self, instance: wasmtime::Instance) -> Result<wasmtime::TypedFunc<(), ()>, InstantiateError> {
        self.entry
            .iter()
            .flatten()
            .find_map(|export| {
                let func = instance.get_module_export(&mut self.store, export)?.into_func()?;
                func.typed::<(), ()>(&self.store).ok()
            })
            .ok_or_else(|| InstantiateError::NoSuchExport {
                guest: self.guest_name.clone(),
                export: "_start".into(),
                functions: self.exported_functions(),
            })
    }

    /// Calls the exported function `name` with `args` as its parameters and returns the
    /// values it returned ([`Outcome::Returned`]). Calls `_initialize` first if the guest
    /// exports it and no call has run it yet (once per instance, as for a WASI reactor), under
    /// the same timeout and fuel. [`Guest::export_params`] gives the types
    /// the arguments must have.
    ///
    /// # Errors
    ///
    /// [`InstantiateError`] when the guest is a component, the export is missing or is not a
    /// function, the arguments do not match its parameters in number or type, or a result has
    /// a type no [`WasmValue`] holds; a failure of the host while it runs.
    pub fn invoke(&mut self, name: &str, args: &[WasmValue]) -> wasmtime::Result<Outcome> {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(outcome),
        };
        let ty = func.ty(&self.store);
        let bad_args = |reason: String| InstantiateError::BadInvokeArgs {
            guest: self.guest_name.clone(),
            export: name.to_owned(),
            reason,
        };
        if ty.params().len() != args.len() {
            return Err(bad_args(format!("expects {} arguments, got {}", ty.params().len(), args.len())).into());
        }
        for (i, (ty, arg)) in ty.params().zip(args).enumerate() {
            match WasmType::of(&ty) {
                WasmType::Unsupported(ty) => {
                    return Err(bad_args(format!("argument {}: parameter type `{ty}` is not supported", i + 1)).into());
                }
                ty if ty != arg.ty() => {
                    let reason =
                        format!("argument {}: the parameter is `{ty}`, the value `{arg}` is `{}`", i + 1, arg.ty());
                    return Err(bad_args(reason).into());
                }
                _ => {}
            }
        }
        let params: Vec<Val> = args.iter().map(|arg| arg.to_val()).collect();
        let mut results = Vec::new();
        for ty in ty.results() {
            results.push(default_val(&ty).ok_or_else(|| bad_args(format!("result type `{ty}` is not supported")))?);
        }
        let init = self.initializer(instance);
        self.run_call(|store| {
            now(initialize(store, init))?;
            func.call(&mut *store, &params, &mut results)?;
            Ok(Outcome::Returned(results.iter().filter_map(WasmValue::from_val).collect()))
        })
    }

    /// Calls the exported function `name` with `params`, after the guest's `_initialize` if it
    /// exports one and it has not run yet, under the run's timeout, fuel and cancel token: the
    /// values it returned, or how the guest stopped (as [`Instance::invoke`] would return it;
    /// an exit or a cancel ends the instance, and a stop ends its children). Values of any type
    /// the export has pass, references included.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::wasmtime::Val;
    /// use wrt_runtime::{RunOptions, Runtime};
    ///
    /// # fn main() -> wrt_runtime::Result<()> {
    /// let wat = r#"(module (func (export "mul") (param f64 f64) (result f64)
    ///     (f64.mul (local.get 0) (local.get 1))))"#;
    /// let guest = Runtime::new()?.load_bytes("mul.wat", wat.as_bytes())?;
    /// let mut instance = guest.instantiate(&RunOptions::new())?;
    /// let results = instance.call("mul", &[Val::from(1.5f64), Val::from(4.0f64)])?;
    /// assert_eq!(results.expect("returned")[0].unwrap_f64(), 6.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InstantiateError`] when the guest is a component or has no such export; wasmtime's
    /// error when the values do not match the export's parameters; a failure of the host while
    /// it runs.
    pub fn call(&mut self, name: &str, params: &[Val]) -> wasmtime::Result<Result<Vec<Val>, Outcome>> {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let ty = func.ty(&self.store);
        let mut results: Vec<Val> = ty.results().map(|ty| Val::default_for_ty(&ty).unwrap_or(Val::I32(0))).collect();
        let init = self.initializer(instance);
        let called = self.enter(|store| {
            now(initialize(store, init))?;
            func.call(&mut *store, params, &mut results)
        })?;
        Ok(match called {
            Ok(()) => Ok(results),
            Err(outcome) => {
                self.settle(&outcome);
                Err(outcome)
            }
        })
    }

    /// [`Instance::call`] with the export's types given: `P` and `R` are wasmtime's typed
    /// parameters and results (`i32`, `(i64, f32)`, `()`, …), checked once against the export.
    /// The fastest way to call an export many times.
    ///
    /// # Errors
    ///
    /// As [`Instance::call`]; wasmtime's error when the types do not match the export's.
    pub fn typed_call<P, R>(&mut self, name: &str, params: P) -> wasmtime::Result<Result<R, Outcome>>
    where
        P: wasmtime::WasmParams + Send,
        R: wasmtime::WasmResults + Send,
    {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let typed = func.typed::<P, R>(&self.store)?;
        let init = self.initializer(instance);
        let called = self.enter(|store| {
            now(initialize(store, init))?;
            typed.call(&mut *store, params)
        })?;
        if let Err(outcome) = &called {
            self.settle(outcome);
        }
        Ok(called)
    }

    /// The instance and its exported function `name`, or the outcome of an instance that ended.
    fn export_func(&mut self, name: &str) -> wasmtime::Result<Result<(wasmtime::Instance, wasmtime::Func), Outcome>> {
        let instance = match &self.state {
            State::Ready(instance) => *instance,
            State::Command(_) | State::CommandAsync(_) => {
                return Err(InstantiateError::InvokeComponent { guest: self.guest_name.clone() }.into());
            }
            State::Ended(outcome) => return Ok(Err(outcome.clone())),
        };
        let func = instance.get_func(&mut self.store, name).ok_or_else(|| InstantiateError::NoSuchExport {
            guest: self.guest_name.clone(),
            export: name.to_owned(),
            functions: self.exported_functions(),
        })?;
        Ok(Ok((instance, func)))
    }

    /// The guest's `_initialize`, the first time a call asks (later calls get `None`: it runs
    /// once per instance, as for a WASI reactor).
    fn initializer(&mut self, instance: wasmtime::Instance) -> Option<wasmtime::TypedFunc<(), ()>> {
        if std::mem::replace(&mut self.initialized, true) {
            return None;
        }
        // Looked up as a plain export first: a failed typed lookup builds an error (and its
        // backtrace), which costs more than the call itself for most guests.
        instance.get_func(&mut self.store, "_initialize").and_then(|init| init.typed::<(), ()>(&self.store).ok())
    }

    /// Copies `buf.len()` bytes of the guest's exported `memory`, from `offset`, into `buf`.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::MemoryAccess`] when the bytes reach past the memory's end, or the
    /// guest (a component, or a module without one) exports no `memory`.
    pub fn read_memory(&mut self, offset: usize, buf: &mut [u8]) -> crate::Result<()> {
        let len = buf.len();
        let (memory, size) = self.memory_for(offset, len)?;
        memory.read(&self.store, offset, buf).map_err(|_| self.outside(offset, len, size))
    }

    /// Copies `bytes` into the guest's exported `memory` at `offset`.
    ///
    /// # Errors
    ///
    /// As [`Instance::read_memory`].
    pub fn write_memory(&mut self, offset: usize, bytes: &[u8]) -> crate::Result<()> {
        let (memory, size) = self.memory_for(offset, bytes.len())?;
        memory.write(&mut self.store, offset, bytes).map_err(|_| self.outside(offset, bytes.len(), size))
    }

    /// The guest's memory and its size, for an access of `len` bytes at `offset`.
    fn memory_for(&mut self, offset: usize, len: usize) -> crate::Result<(wasmtime::Memory, usize)> {
        let memory = match &self.state {
            State::Ready(instance) => instance.get_memory(&mut self.store, "memory"),
            _ => self.store.data().memory,
        };
        match memory {
            Some(memory) => Ok((memory, memory.data_size(&self.store))),
            None => Err(self.outside(offset, len, 0)),
        }
    }

    fn outside(&self, offset: usize, len: usize, size: usize) -> wasmtime::Error {
        InstantiateError::MemoryAccess { guest: self.guest_name.clone(), offset, len, size }.into()
    }

    /// The names of the functions the guest exports, in its order.
    fn exported_functions(&self) -> Vec<String> {
        let State::Ready(instance) = &self.state else { return Vec::new() };
        let module = instance.module(&self.store);
        module.exports().filter(|e| e.ty().func().is_some()).map(|e| e.name().to_owned()).collect()
    }

    /// The address range of the guest's exported `memory` in this process, for inspecting the
    /// mapping (for example in `/proc/self/smaps`).
    pub fn memory_range(&mut self) -> Option<Range<usize>> {
        let State::Ready(instance) = &self.state else { return None };
        let memory = instance.get_memory(&mut self.store, "memory")?;
        let base = memory.data_ptr(&self.store) as usize;
        Some(base..base + memory.data_size(&self.store))
    }

    /// What the guest used so far: memory, collections, spawns.
    pub fn stats(&self) -> Stats {
        let state = self.store.data();
        let accountant = &state.external.accountant;
        Stats {
            peak_linear_memory: state.limiter.peak_linear,
            peak_external: accountant.ledger.peak(),
            peak_buffer_memory: state.external.pool.peak_footprint(),
            final_external: accountant.ledger.live(),
            young_collections: accountant.young_collections,
            full_collections: accountant.full_collections,
            spawns: state.spawn.spawns,
            spawns_refused: state.spawn.refused,
            stream_bytes: state.spawn.stream_bytes
                + state.spawn.shared_stream_bytes.load(std::sync::atomic::Ordering::Relaxed),
            gc_time: accountant.gc_time,
            memory_refusals: state.limiter.refusals,
            fuel_consumed: self.fuel_consumed,
            wall_time: self.started.elapsed(),
            cpu_time: self.cpu_time.unwrap_or_default(),
        }
    }

    /// Ends the instance and returns the report of a run that ended with `outcome`.
    pub fn into_report(mut self, outcome: Outcome) -> Report {
        // A collection a component pulled last has ended with the run.
        crate::collector::settle_pulled(self.store.data_mut());
        let take = |capture: &Option<Capture>| capture.as_ref().map(Capture::contents).unwrap_or_default();
        let truncated = |capture: &Option<Capture>| capture.as_ref().is_some_and(Capture::truncated);
        let captured = &self.captured;
        for capture in [&captured.stdout, &captured.stderr].into_iter().flatten() {
            // A failure marks the stream truncated, which the report says.
            let _ = capture.flush();
        }
        Report {
            stdout: take(&captured.stdout),
            stderr: take(&captured.stderr),
            stdout_truncated: truncated(&captured.stdout),
            stderr_truncated: truncated(&captured.stderr),
            outcome,
            stats: self.stats(),
        }
    }

    /// Runs one call into the guest with the fuel and deadline of the sandbox, and turns the
    /// ways a guest stops into an [`Outcome`]. A guest that ended (exit, trap, timeout, fuel)
    /// takes its children with it; a call that returned leaves them to the next call.
    fn run_call(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<Outcome> + Send,
    ) -> wasmtime::Result<Outcome> {
        let outcome = self.enter(f)?.unwrap_or_else(|outcome| outcome);
        self.settle(&outcome);
        Ok(outcome)
    }

    /// After a call that ended with `outcome`: a guest that stopped takes its children with it;
    /// one that exited or was cancelled has ended.
    fn settle(&mut self, outcome: &Outcome) {
        if !matches!(outcome, Outcome::Returned(_)) {
            self.store.data_mut().spawn.end_children();
        }
        if let Outcome::Exited(_) | Outcome::Cancelled = outcome {
            self.state = State::Ended(outcome.clone());
        }
    }

    /// Runs `f` under the current budget (the one armed at instantiation for the first call,
    /// a fresh one after), with the epoch ticking while a deadline is set. A guest stopping is
    /// `Ok(Err(outcome))`; a failure of the host is `Err`. Inside a tokio runtime the call runs
    /// where it may block (`ambient::blocking`): the deadline's signal goes to the thread that
    /// runs the guest, so the whole call moves, budget and all.
    fn enter<R: Send>(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<R> + Send,
    ) -> wasmtime::Result<Result<R, Outcome>> {
        if self.store.data().mode == Mode::Async {
            return Err(self.wrong_mode());
        }
        crate::ambient::blocking(|| self.enter_here(f))
    }

    /// The error of a call of the kind (synchronous or asynchronous) the instance was not made
    /// for.
    fn wrong_mode(&self) -> wasmtime::Error {
        let asynchronous = self.store.data().mode == Mode::Async;
        InstantiateError::WrongMode { guest: self.guest_name.clone(), asynchronous }.into()
    }

    /// Arms the budget of the next call: the one armed at instantiation for the first call, a
    /// fresh one after.
    fn arm_budget(&mut self) -> wasmtime::Result<()> {
        if !std::mem::take(&mut self.carried) {
            match self.fuel {
                Some(fuel) => self.store.set_fuel(fuel)?,
                // A runtime that meters fuel, and a run without a fuel limit.
                None if self.metering => self.store.set_fuel(u64::MAX)?,
                None => {}
            }
            self.budget_deadline = self.timeout.map(|timeout| Instant::now() + timeout);
        }
        Ok(())
    }

    /// The fuel left, asked only of a runtime that meters fuel: otherwise the answer is an
    /// error, whose backtrace (when `RUST_BACKTRACE` is set) costs more than a whole run of a
    /// small guest.
    fn fuel_left(&self) -> Option<u64> {
        if self.metering { self.store.get_fuel().ok() } else { None }
    }

    /// [`Instance::enter`] on this thread.
    fn enter_here<R>(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<R>,
    ) -> wasmtime::Result<Result<R, Outcome>> {
        self.arm_budget()?;
        if self.cancel.as_ref().is_some_and(|run| run.token().is_cancelled()) {
            return Ok(Err(Outcome::Cancelled));
        }
        let ticking = match self.budget_deadline {
            Some(deadline) => Some(self.ticker.tick(deadline)?),
            None => None,
        };
        self.set_deadline(self.budget_deadline);
        if let Some(run) = &self.cancel {
            run.enter_call();
        }
        let fuel_before = self.fuel_left();
        let cpu_before = self.cpu_time.map(|_| thread_cpu_time());
        let result = f(&mut self.store);
        if let (Some(total), Some(before)) = (&mut self.cpu_time, cpu_before) {
            *total += thread_cpu_time().saturating_sub(before);
        }
        if let (Some(before), Some(after)) = (fuel_before, self.fuel_left()) {
            self.fuel_consumed += before.saturating_sub(after);
        }
        // No signal may reach this thread once the call has returned.
        let cancel_interrupted = self.cancel.as_ref().is_some_and(Registration::leave_call);
        let interrupted = ticking.is_some_and(Ticking::finish);
        self.set_deadline(None);
        if cancel_interrupted {
            // A system call failed at the cancel: what the guest made of it is no result.
            return Ok(Err(Outcome::Cancelled));
        }
        if interrupted {
            // A system call failed at the deadline: what the guest made of it is no result.
            return Ok(Err(Outcome::TimedOut(self.timeout.unwrap_or_default())));
        }
        match result {
            Ok(value) => Ok(Ok(value)),
            Err(err) => self.outcome_of(err).map(Err),
        }
    }

    /// The deadline blocking host calls see: the `wrt_v1` ABI and `poll_oneoff` through the
    /// store, stdin through the shared cell.
    fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.store.data_mut().stop.deadline = deadline;
        if self.timeout.is_some() {
            self.stop_cell.set(deadline);
        }
    }

    fn outcome_of(&self, err: wasmtime::Error) -> wasmtime::Result<Outcome> {
        if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return Ok(Outcome::Exited(exit.0));
        }
        let trap = err.downcast_ref::<Trap>().copied();
        let stopped = err.is::<DeadlineExceeded>() || err.is::<Cancelled>() || trap == Some(Trap::Interrupt);
        if stopped && self.cancel.as_ref().is_some_and(|run| run.token().is_cancelled()) {
            // A cancel stops the guest through the deadline's paths too (its cell, the ticker).
            return Ok(Outcome::Cancelled);
        }
        if err.is::<DeadlineExceeded>() {
            return Ok(Outcome::TimedOut(self.timeout.unwrap_or_default()));
        }
        match trap {
            Some(Trap::OutOfFuel) => return Ok(Outcome::OutOfFuel(self.fuel.unwrap_or_default())),
            Some(Trap::Interrupt) if self.timeout.is_some() => {
                return Ok(Outcome::TimedOut(self.timeout.unwrap_or_default()));
            }
            _ => {}
        }
        let backtrace = err.downcast_ref::<WasmBacktrace>();
        if trap.is_none() && backtrace.is_none() {
            // Not raised while guest code ran: a failure of the host.
            return Err(err);
        }
        // wasmtime adds the address the guest reached for, and the size of the memory it missed,
        // as context of an out-of-bounds trap (its `WasmFault` is not public).
        let fault = err.chain().map(|e| e.to_string()).find(|m| m.starts_with("memory fault at wasm address"));
        let message = match (trap, fault) {
            (Some(trap), Some(fault)) => format!("{trap}: {fault}"),
            (Some(trap), None) => trap.to_string(),
            (None, _) => crate::shown_text::shown_line(&format!("{:#}", err.root_cause())),
        };
        let backtrace = backtrace.filter(|bt| !bt.frames().is_empty()).map(format_backtrace);
        Ok(Outcome::Trapped(TrapInfo { trap, message, backtrace }))
    }
}

/// `wasm backtrace:` and one line a frame, innermost first: index, module offset, module and
/// demangled function name, as wasmtime prints them, without its notes about environment
/// variables.
///
/// Module and function names come from the module's name section: a line break in one would
/// start a line of the module's choosing, so every line that does not start the next frame
/// (`N:`) or give a frame's source location (`at …`) is joined to the line before it, and every
/// line is escaped and capped.
fn format_backtrace(backtrace: &WasmBacktrace) -> String {
    let text = backtrace.to_string();
    let mut lines: Vec<String> = vec!["wasm backtrace:".into()];
    let mut next_frame = 0usize;
    let mut in_frames = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let frame_start = trimmed
            .split_once(':')
            .is_some_and(|(index, _)| line.starts_with(' ') && index.parse::<usize>() == Ok(next_frame));
        if frame_start {
            next_frame += 1;
            in_frames = true;
            lines.push(line.to_owned());
        } else if !in_frames || (line.starts_with(' ') && trimmed.starts_with("note:")) {
            // wasmtime's header and notes.
        } else if line.starts_with(' ') && trimmed.starts_with("at ") {
            lines.push(line.to_owned());
        } else if let Some(last) = lines.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    let shown: Vec<String> =
        lines.iter().take(crate::shown_text::MAX_LINES).map(|l| crate::shown_text::shown_line(l)).collect();
    let mut shown = shown.join("\n");
    if lines.len() > crate::shown_text::MAX_LINES {
        shown.push_str(&format!("\n  … ({} more lines)", lines.len() - crate::shown_text::MAX_LINES));
    }
    shown
}

/// Runs the guest's `_initialize` if given; an exit with status 0 from it is no stop.
async fn initialize(store: &mut Store<GuestState>, init: Option<wasmtime::TypedFunc<(), ()>>) -> wasmtime::Result<()> {
    let Some(init) = init else { return Ok(()) };
    match call_wasm(store, &init, ()).await {
        Ok(()) => Ok(()),
        Err(err) if err.downcast_ref::<wasmtime_wasi::I32Exit>().is_some_and(|exit| exit.0 == 0) => Ok(()),
        Err(err) => Err(err),
    }
}

fn default_val(ty: &ValType) -> Option<Val> {
    Some(match ty {
        ValType::I32 => Val::I32(0),
        ValType::I64 => Val::I64(0),
        ValType::F32 => Val::F32(0),
        ValType::F64 => Val::F64(0),
        _ => return None,
    })
}

/// CPU time (user and system) of the calling thread so far; zero if the system cannot say.
fn thread_cpu_time() -> Duration {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

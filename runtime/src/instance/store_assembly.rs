//! Assembling an instance: its store and everything the store holds (WASI contexts, stdio,
//! the spawner, host buffers, the limiter, the epoch callback), then instantiation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap};

use super::{Instance, State};
use crate::cancel::CancelToken;
use crate::error::{ConfigError, InstantiateError, chained, wasmtime_causes};
use crate::guest::{Code, Guest};
use crate::guest_state::http::Http;
use crate::guest_state::originals::Originals;
use crate::guest_state::p2::P2;
use crate::guest_state::{BufferSource, GuestState};
use crate::guest_stdio::{DirectStdio, Stream};
use crate::host_fn::Mode;
use crate::limiter::Limiter;
use crate::options::RunOptions;
use crate::outcome::Outcome;
use crate::process_service::spawn_state::SpawnState;
use crate::stop::{self, RunDeadline};
use crate::wasi::ctx as wasi_ctx;

impl Instance {
    pub(crate) fn new(guest: &Guest, options: &RunOptions) -> crate::Result<Self> {
        if let Code::HttpService { .. } = guest.code {
            return Err(InstantiateError::ServiceNotRun { guest: guest.name.to_string() }.into());
        }
        if let Code::CommandP3 { .. } = guest.code {
            // A command of WASI 0.3 runs only asynchronously: this thread waits for it, and
            // the instance takes synchronous calls the same way.
            return crate::tokio_runtime::block_on(Self::new_async(guest, options));
        }
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
            Code::CommandP3 { .. } | Code::HttpService { .. } => unreachable!("returned above"),
        };
        this.instantiated(instantiated, guest, options)?;
        Ok(this)
    }

    /// An instance of `guest` with `options`, for runs of `mode`, before instantiation (its
    /// state a placeholder until then); ended, cancelled, when its cancel token already is.
    pub(super) fn prepare(guest: &Guest, options: &RunOptions, mode: Mode) -> crate::Result<Self> {
        let started = Instant::now();
        // Instantiation may run guest code (a start function) and build WASI streams.
        let _tokio = crate::tokio_runtime::enter();
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
        let deadline = RunDeadline::new(options.timeout, options.cancel.clone());
        wasi_ctx::check_preopens(options).map_err(ConfigError::into_error)?;
        let captured = wasi_ctx::captures(options);
        let (mut wasi, mut p2) = (None, None);
        match &guest.code {
            Code::Module { wasi: true, .. } => {
                wasi = Some(Box::new(wasi_ctx::build(options, &guest.name, deadline.cell(), &captured, mode)?));
            }
            Code::Module { .. } => {}
            Code::Component { .. } | Code::CommandP3 { .. } | Code::HttpService { .. } => {
                let ctx = wasi_ctx::builder(options, &guest.name, deadline.cell(), &captured, mode)?.build();
                p2 = Some(Box::new(P2::new(ctx, Http::new(Arc::clone(&options.http_servers)))));
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
            options.spawner(&guest.name, guest.may_spawn).map_err(ConfigError::into_error)?,
            options.denials.clone(),
            guest.name.clone(),
            inherit,
            captures,
        );
        let cancel =
            options.cancel.as_ref().map(|token| token.register(spawn.kill_switch(), Arc::clone(&runtime.ticker)));
        let instances = match guest.code {
            Code::Module { .. } => crate::limiter::MODULE_INSTANCES,
            Code::Component { .. } | Code::CommandP3 { .. } | Code::HttpService { .. } => {
                crate::limiter::COMPONENT_INSTANCES
            }
        };
        let limiter = Limiter::new(options.max_memory, instances);
        let state = GuestState {
            wasi,
            p2,
            limiter,
            stop: deadline.stop(),
            stop_cell: deadline.cell().clone(),
            spawn,
            last_error: String::new(),
            memory: None,
            direct_stdio,
            listings: Default::default(),
            external: None,
            buffer_source: BufferSource { gc_policy: options.gc_policy.clone(), slabs: Arc::clone(&runtime.slabs) },
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
            deadline,
            ticker: Arc::clone(&runtime.ticker),
            captured,
            guest_name: guest.name.clone(),
            fuel: options.fuel,
            metering: runtime.settings.fuel,
            entry: match &guest.code {
                Code::Module { entry, .. } => *entry,
                Code::Component { .. } | Code::CommandP3 { .. } | Code::HttpService { .. } => None,
            },
            started,
            cpu_time: options.measure_cpu_time.then_some(Duration::ZERO),
            fuel_consumed: 0,
            cancel,
            initialized: false,
            fibers: None,
            repoll: None,
        };
        if options.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            this.state = State::Ended(Outcome::Cancelled);
        }
        Ok(this)
    }

    /// Whether [`Instance::prepare`] found the run's token cancelled: the instance has ended
    /// without instantiating anything.
    pub(super) fn cancelled_before_start(&self) -> bool {
        matches!(self.state, State::Ended(Outcome::Cancelled))
    }

    /// Takes the result of instantiation: the instance is ready, or ended by its start
    /// function; a failure to instantiate is the error.
    pub(super) fn instantiated(
        &mut self,
        instantiated: wasmtime::Result<Result<State, Outcome>>,
        guest: &Guest,
        options: &RunOptions,
    ) -> crate::Result<()> {
        let this = self;
        match instantiated {
            Ok(Ok(ready)) => {
                if let (State::Ready(instance), Code::Module { memory: Some(export), .. }) = (&ready, &guest.code) {
                    let memory =
                        instance.get_module_export(&mut this.store, export).and_then(wasmtime::Extern::into_memory);
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
                        guest: guest.name.to_string(),
                        minimum: refused.needed,
                        memories: refused.memories,
                        limit,
                    }
                    .into(),
                    _ => chained(
                        InstantiateError::Failed { guest: guest.name.to_string() },
                        wasmtime_causes(&err, false),
                    ),
                });
            }
        }
        Ok(())
    }
}

//! `wrt bench instantiate`: instantiate + run in process. Each run is [`Guest::run`] of a guest
//! loaded once into one shared [`Runtime`], with one [`RunOptions`] built once per
//! configuration. The floor, in the same run: plain wasmtime with the pooling allocator and
//! copy-on-write memory images (otherwise the engine settings of wrt's runtime: epoch
//! interruption on, fuel off), an `InstancePre` and a fresh `Store` per run, WASI preview 1
//! from `wasmtime-wasi`; and, as a second reference, the same with wasmtime's on-demand
//! allocator. With several threads, every thread runs its batch at once, sharing the runtime and
//! guest (and the floor's engine and `InstancePre`), and the rate is the aggregate. The same runs
//! through [`Guest::run_async`], on a current-thread tokio executor per thread with 1, 2 and 4
//! runs in flight at once, give the async figures (and the async/sync ratio, one in flight).

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module, PoolingAllocationConfig, Store,
};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p1::WasiP1Ctx;
use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{GcPolicy, Guest, GuestOutput, Outcome, RunOptions, Runtime};

use crate::BenchError;
use crate::figures::Centre;
use crate::result::ConfigResult;
use crate::sample::Sample;
use crate::setting::{InstantiateGuest, ParamError, RunConfig, Setting};
use crate::workload::columns::{Column, Measure, figure, ratio};
use crate::workload::compared::Baseline;
use crate::workload::{self, Workload};

/// `(func (export "_start"))`: no import, no memory.
pub const TRIVIAL_WAT: &str = r#"(module (func (export "_start")))"#;

/// Imports five WASI preview 1 functions and exports a memory; `_start` calls none of them.
pub const WASI_WAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#;

/// What [`HELLO_WAT`] prints.
pub const HELLO_LINE: &str = "hello from wrt bench instantiate\n";

/// Prints [`HELLO_LINE`] to stdout with `fd_write`, then exits 7 with `proc_exit` (1 if the
/// write failed).
pub const HELLO_WAT: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello from wrt bench instantiate\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 33))
    (if (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))
      (then (call $proc_exit (i32.const 1))))
    (call $proc_exit (i32.const 7))))"#;

impl InstantiateGuest {
    /// The guest's WebAssembly text.
    pub fn wat(self) -> &'static str {
        match self {
            InstantiateGuest::Trivial => TRIVIAL_WAT,
            InstantiateGuest::Wasi => WASI_WAT,
            InstantiateGuest::Hello => HELLO_WAT,
        }
    }

    /// The exit code of a good run.
    pub fn exit_code(self) -> i32 {
        match self {
            InstantiateGuest::Hello => 7,
            InstantiateGuest::Trivial | InstantiateGuest::Wasi => 0,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The timeout of the `timeout` and `all` configurations: never reached.
pub const TIMEOUT: Duration = Duration::from_secs(10);

impl RunConfig {
    /// The options of every run of this configuration. Stdout is discarded (the hello guest
    /// prints).
    ///
    /// # Errors
    ///
    /// The spawn policy (allowing `/bin/true`) or the collection policy does not validate.
    pub fn options(self) -> Result<RunOptions, BenchError> {
        let base = RunOptions::new().stdout(GuestOutput::Null);
        let config = |e: wrt_runtime::ConfigError| BenchError::Runtime {
            context: format!("options of configuration `{}`", self.name()),
            source: e.into_error(),
        };
        let policy = || Policy::deny_all().allow_program("/bin/true");
        Ok(match self {
            RunConfig::Defaults => base,
            RunConfig::Timeout => base.timeout(TIMEOUT),
            RunConfig::Policy => base.spawn_policy(&policy()).map_err(config)?,
            RunConfig::All => base
                .args(["--input", "data.txt"])
                .spawn_policy(&policy())
                .map_err(config)?
                .max_memory(64 << 20)
                .gc_policy(GcPolicy::new(4 << 20, 64 << 20, 2.0).map_err(config)?)
                .timeout(TIMEOUT),
        })
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Which plain wasmtime reference runs the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// The pooling allocator with copy-on-write memory images: the floor.
    Pooling,
    /// The on-demand allocator (wasmtime's default).
    OnDemand,
}

/// A guest linked for plain wasmtime: the trivial one needs no WASI context.
enum FloorPre {
    Plain(InstancePre<()>),
    Wasi(InstancePre<WasiP1Ctx>),
}

/// Plain wasmtime with one engine and the three guests, linked once.
struct Floor {
    pres: Vec<FloorPre>,
}

impl Floor {
    fn new(reference: Reference) -> Result<Self, BenchError> {
        let floor = |e: wasmtime::Error| BenchError::Floor(format!("{e:#}"));
        let mut config = Config::new();
        // wrt's engine settings: epoch interruption on, fuel off.
        config.epoch_interruption(true).consume_fuel(false);
        if reference == Reference::Pooling {
            // Two slots a thread: enough for every thread, without reserving the default
            // 1000 memories of address space.
            let slots = 2 * MAX_THREADS;
            let mut pool = PoolingAllocationConfig::default();
            pool.total_memories(slots).total_tables(slots).total_core_instances(slots).total_gc_heaps(slots);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool)).memory_init_cow(true);
        }
        let engine = Engine::new(&config).map_err(floor)?;
        let mut wasi_linker: Linker<WasiP1Ctx> = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut wasi_linker, |ctx| ctx).map_err(floor)?;
        let plain_linker: Linker<()> = Linker::new(&engine);
        let mut pres = Vec::new();
        for guest in InstantiateGuest::ALL {
            let module = Module::new(&engine, guest.wat()).map_err(floor)?;
            pres.push(match guest {
                InstantiateGuest::Trivial => FloorPre::Plain(plain_linker.instantiate_pre(&module).map_err(floor)?),
                InstantiateGuest::Wasi | InstantiateGuest::Hello => {
                    FloorPre::Wasi(wasi_linker.instantiate_pre(&module).map_err(floor)?)
                }
            });
        }
        Ok(Self { pres })
    }

    /// One instantiate + `_start` in a fresh store: the exit code (`I32Exit`, or 0 when
    /// `_start` returns).
    fn run(&self, guest: InstantiateGuest) -> Result<i32, BenchError> {
        let floor = |e: wasmtime::Error| BenchError::Floor(format!("{e:#}"));
        let result = match &self.pres[guest.index()] {
            FloorPre::Plain(pre) => start(Store::new(pre.module().engine(), ()), pre),
            FloorPre::Wasi(pre) => {
                // As wrt does: argv[0] is the guest's name, stdout discarded (the builder's
                // default), nothing of the host inherited.
                let ctx = WasiCtxBuilder::new().arg(guest.name()).build_p1();
                start(Store::new(pre.module().engine(), ctx), pre)
            }
        };
        match result {
            Ok(()) => Ok(0),
            Err(e) => match e.downcast_ref::<wasmtime_wasi::I32Exit>() {
                Some(exit) => Ok(exit.0),
                None => Err(floor(e)),
            },
        }
    }
}

fn start<T: 'static>(mut store: Store<T>, pre: &InstancePre<T>) -> wasmtime::Result<()> {
    // Nothing advances this engine's epoch: the deadline is never reached.
    store.set_epoch_deadline(1);
    let instance = pre.instantiate(&mut store)?;
    instance.get_typed_func::<(), ()>(&mut store, "_start")?.call(&mut store, ())
}

/// Everything `wrt bench instantiate` runs, set up once per process: one wrt [`Runtime`] with
/// the three guests and the four configurations' options, and the plain wasmtime references.
pub struct InstantiateBench {
    guests: Vec<Guest>,
    options: Vec<RunOptions>,
    pooling: Floor,
    on_demand: Floor,
}

impl std::fmt::Debug for InstantiateBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstantiateBench").field("guests", &self.guests).finish_non_exhaustive()
    }
}

impl InstantiateBench {
    /// Creates the runtime and the references, and compiles every guest for each.
    ///
    /// # Errors
    ///
    /// An engine, a guest or an option set could not be made.
    pub fn new() -> Result<Self, BenchError> {
        let runtime = crate::runtime("failed to create the runtime", Runtime::new())?;
        let mut guests = Vec::new();
        for guest in InstantiateGuest::ALL {
            let name = format!("{}.wat", guest.name());
            guests.push(crate::runtime("failed to load a guest", runtime.load_bytes(&name, guest.wat().as_bytes()))?);
        }
        let options = RunConfig::ALL.iter().map(|c| c.options()).collect::<Result<_, _>>()?;
        Ok(Self {
            guests,
            options,
            pooling: Floor::new(Reference::Pooling)?,
            on_demand: Floor::new(Reference::OnDemand)?,
        })
    }

    /// The instance of this process, set up on first use.
    ///
    /// # Errors
    ///
    /// As [`InstantiateBench::new`] (the first time; later calls repeat its message).
    pub fn shared() -> Result<&'static Self, BenchError> {
        static SHARED: OnceLock<Result<InstantiateBench, String>> = OnceLock::new();
        SHARED.get_or_init(|| Self::new().map_err(|e| e.to_string())).as_ref().map_err(|e| BenchError::Guest(e.clone()))
    }

    /// One [`Guest::run`] of `guest` with `config`'s options, checked: the guest must exit with
    /// its code.
    ///
    /// # Errors
    ///
    /// The run failed or the guest ended otherwise.
    pub fn run_wrt(&self, guest: InstantiateGuest, config: RunConfig) -> Result<(), BenchError> {
        let report =
            crate::runtime("failed to run the guest", self.guests[guest.index()].run(&self.options[config.index()]))?;
        match report.outcome {
            Outcome::Exited(code) if code == guest.exit_code() => Ok(()),
            other => Err(BenchError::Guest(format!(
                "`{}` with `{}` ended with {other:?}, not exit {}",
                guest.name(),
                config.name(),
                guest.exit_code()
            ))),
        }
    }

    /// `in_flight` [`Guest::run_async`]s of `guest` with `config`'s options at once, on this
    /// thread's current-thread tokio executor, each checked as [`Self::run_wrt`].
    ///
    /// # Errors
    ///
    /// A run failed or a guest ended otherwise.
    pub fn run_wrt_async(&self, guest: InstantiateGuest, config: RunConfig, in_flight: u32) -> Result<(), BenchError> {
        thread_local! {
            static EXECUTOR: Option<tokio::runtime::Runtime> =
                tokio::runtime::Builder::new_current_thread().build().ok();
        }
        let (target, options) = (&self.guests[guest.index()], &self.options[config.index()]);
        let runs: Vec<_> = (0..in_flight).map(|_| target.run_async(options)).collect();
        let reports = EXECUTOR.with(|executor| match executor {
            Some(executor) => Ok(executor.block_on(join_all(runs))),
            None => Err(BenchError::Guest("failed to create a tokio executor".into())),
        })?;
        for report in reports {
            let report = crate::runtime("failed to run the guest", report)?;
            match report.outcome {
                Outcome::Exited(code) if code == guest.exit_code() => {}
                other => {
                    return Err(BenchError::Guest(format!(
                        "`{}` with `{}` ended with {other:?} when run asynchronously, not exit {}",
                        guest.name(),
                        config.name(),
                        guest.exit_code()
                    )));
                }
            }
        }
        Ok(())
    }

    /// One instantiate + run of `guest` in plain wasmtime, checked as [`Self::run_wrt`].
    ///
    /// # Errors
    ///
    /// The run failed or the guest ended otherwise.
    pub fn run_reference(&self, guest: InstantiateGuest, reference: Reference) -> Result<(), BenchError> {
        let floor = match reference {
            Reference::Pooling => &self.pooling,
            Reference::OnDemand => &self.on_demand,
        };
        match floor.run(guest)? {
            code if code == guest.exit_code() => Ok(()),
            code => Err(BenchError::Floor(format!(
                "`{}` exited with {code} under {reference:?}, not {}",
                guest.name(),
                guest.exit_code()
            ))),
        }
    }
}

/// Runs `run` `n` times on each of `threads` threads at once and returns the wall-clock time
/// from the first thread's start to the last thread's end (each thread reads the clock itself:
/// on a busy machine the spawning thread may be descheduled while the others run).
///
/// # Errors
///
/// The first failure of a run, or a thread that panicked.
pub fn timed(threads: u32, n: u32, run: impl Fn() -> Result<(), BenchError> + Sync) -> Result<Duration, BenchError> {
    let batch = || -> Result<(Instant, Instant), BenchError> {
        let start = Instant::now();
        (0..n).try_for_each(|_| run())?;
        Ok((start, Instant::now()))
    };
    if threads == 1 {
        let (start, end) = batch()?;
        return Ok(end - start);
    }
    let barrier = Barrier::new(threads as usize);
    let spans = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    batch()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let (mut first, mut last) = (None::<Instant>, None::<Instant>);
    for span in spans {
        let (start, end) = span.map_err(|_| BenchError::Guest("a benchmark thread panicked".into()))??;
        first = Some(first.map_or(start, |f| f.min(start)));
        last = Some(last.map_or(end, |l| l.max(end)));
    }
    match (first, last) {
        (Some(first), Some(last)) => Ok(last - first),
        _ => Ok(Duration::ZERO),
    }
}

/// Polls every future in `futures` until all have finished, on the caller's task: the runs
/// share one executor thread, each yielding while it waits.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut done: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (slot, out) in pending.iter_mut().zip(done.iter_mut()) {
            if let Some(future) = slot
                && let std::task::Poll::Ready(value) = future.as_mut().poll(cx)
            {
                *out = Some(value);
                *slot = None;
            }
        }
        match pending.iter().all(Option::is_none) {
            true => std::task::Poll::Ready(()),
            false => std::task::Poll::Pending,
        }
    })
    .await;
    done.into_iter().flatten().collect()
}

/// How many asynchronous runs each batch of the async figures keeps in flight at once.
const IN_FLIGHT: [u32; 3] = [1, 2, 4];

/// Warm-up runs before each timed batch (caches, the pool's warm slots, the ticker thread).
const WARM_UP: u32 = 50;

/// µs per run of wrt, in each run's figures and the table.
const US_PER_RUN: Measure = ("us_per_run", "µs/run");
/// µs per [`Guest::run_async`], one in flight.
const ASYNC_US_PER_RUN: Measure = ("async1_us_per_run", "async µs");
/// µs per run of the floor.
const FLOOR_US_PER_RUN: Measure = ("floor_us_per_run", "floor µs");

pub(crate) fn run_once(p: &InstantiateParams) -> Result<Sample, BenchError> {
    let bench = InstantiateBench::shared()?;
    let wrt = || bench.run_wrt(p.guest, p.config);
    let pooling = || bench.run_reference(p.guest, Reference::Pooling);
    let on_demand = || bench.run_reference(p.guest, Reference::OnDemand);
    let warm = WARM_UP.min(p.n);
    timed(1, warm, wrt)?;
    let elapsed = timed(p.threads, p.n, wrt)?;
    timed(1, warm, pooling)?;
    let floor_elapsed = timed(p.threads, p.n, pooling)?;
    timed(1, warm, on_demand)?;
    let on_demand_elapsed = timed(p.threads, p.n, on_demand)?;
    let runs = f64::from(p.n) * f64::from(p.threads);
    let us_per_run = |d: Duration| d.as_secs_f64() * 1e6 / runs;
    let mut extra = BTreeMap::from([
        ("us_per_run".to_owned(), us_per_run(elapsed)),
        ("floor_us_per_run".to_owned(), us_per_run(floor_elapsed)),
        ("time_of_floor".to_owned(), elapsed.as_secs_f64() / floor_elapsed.as_secs_f64()),
        ("ondemand_us_per_run".to_owned(), us_per_run(on_demand_elapsed)),
    ]);
    // The same runs through `run_async`, 1, 2 and 4 in flight on each thread's executor: n runs
    // per thread in batches of that many.
    for in_flight in IN_FLIGHT {
        let batch = || bench.run_wrt_async(p.guest, p.config, in_flight);
        timed(1, warm.div_ceil(in_flight), batch)?;
        let batches = p.n.div_ceil(in_flight);
        let elapsed = timed(p.threads, batches, batch)?;
        let async_runs = f64::from(batches * in_flight) * f64::from(p.threads);
        extra.insert(format!("async{in_flight}_us_per_run"), elapsed.as_secs_f64() * 1e6 / async_runs);
    }
    let per_second = |d: Duration| runs / d.as_secs_f64();
    Ok(Sample { rate: per_second(elapsed), floor_rate: per_second(floor_elapsed), extra })
}

/// The most threads `wrt bench instantiate --threads` takes (the floor's instance pool holds
/// twice as many slots).
pub const MAX_THREADS: u32 = 64;

/// Parameters of `wrt bench instantiate`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstantiateParams {
    /// Instantiate+runs per batch, per thread.
    pub n: u32,
    /// Which guest.
    pub guest: InstantiateGuest,
    /// Which options each run gets.
    pub config: RunConfig,
    /// Threads running batches at once, sharing one runtime and guest (and one floor engine).
    pub threads: u32,
}

impl Default for InstantiateParams {
    fn default() -> Self {
        Self { n: 2000, guest: InstantiateGuest::Trivial, config: RunConfig::Defaults, threads: 1 }
    }
}

impl Workload for InstantiateParams {
    fn name(&self) -> &'static str {
        "instantiate"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "guest", "config", "threads"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("instantiations", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        Some(match key {
            "n" => Setting::N(self.n),
            "guest" => Setting::InstantiateGuest(self.guest),
            "config" => Setting::Config(self.config),
            "threads" => Setting::Threads(self.threads),
            _ => return None,
        })
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::N(n) => self.n = n,
            Setting::InstantiateGuest(g) => self.guest = g,
            Setting::Config(c) => self.config = c,
            Setting::Threads(t) => {
                self.threads = Some(t)
                    .filter(|t| (1..=MAX_THREADS).contains(t))
                    .ok_or_else(|| setting.out_of_range(&format!("must be between 1 and {MAX_THREADS}")))?;
            }
            other => return Err(workload::unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "runs/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            figure(US_PER_RUN),
            figure(FLOOR_US_PER_RUN),
            ratio(US_PER_RUN, FLOOR_US_PER_RUN, "time/floor"),
            figure(("ondemand_us_per_run", "on-demand µs")),
            figure(ASYNC_US_PER_RUN),
            ratio(ASYNC_US_PER_RUN, US_PER_RUN, "async/sync"),
            figure(("async2_us_per_run", "async µs, 2 in flight")),
            figure(("async4_us_per_run", "async µs, 4 in flight")),
        ];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt: Guest::run"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: wasmtime pooling + copy-on-write, InstancePre, a store per run")
    }

    fn plot_subject(&self) -> &'static str {
        "instantiate + run in process"
    }

    /// What a timeout and a spawn policy add to a run: the median µs of each configuration
    /// minus that of `defaults` with the same guest and threads, in the same run.
    fn notes(&self, results: &[ConfigResult<&dyn Workload>]) -> String {
        let mut out = String::new();
        for r in results {
            let (Some(Setting::Config(config)), Some(guest), Some(threads)) =
                (r.params.get("config"), r.params.get("guest"), r.params.get("threads"))
            else {
                continue;
            };
            if config == RunConfig::Defaults {
                continue;
            }
            let defaults = results.iter().find(|d| {
                d.params.get("config") == Some(Setting::Config(RunConfig::Defaults))
                    && d.params.get("guest") == Some(guest)
                    && d.params.get("threads") == Some(threads)
            });
            if let (Some(d), Some(us)) = (defaults, r.figure(US_PER_RUN.0))
                && let Some(base) = d.figure(US_PER_RUN.0)
            {
                let _ = writeln!(
                    out,
                    "{} of guest={} threads={}: {:+.2} µs/run over defaults",
                    config.name(),
                    guest.value(),
                    threads.value(),
                    us - base
                );
            }
        }
        out
    }

    /// Its runs are batches.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("plain wasmtime")
    }

    fn compare_replaces(&self) -> &'static [&'static str] {
        &["guest", "config", "threads"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each guest does what it says under wrt, and each reference runs it with the same code.
    #[test]
    fn every_guest_runs_under_wrt_and_both_references() {
        let bench = InstantiateBench::shared().unwrap();
        for guest in InstantiateGuest::ALL {
            for config in RunConfig::ALL {
                bench.run_wrt(guest, config).unwrap_or_else(|e| panic!("{} {}: {e}", guest.name(), config.name()));
            }
            bench.run_reference(guest, Reference::Pooling).unwrap();
            bench.run_reference(guest, Reference::OnDemand).unwrap();
        }
        // The hello guest prints its line (captured here) and exits 7.
        let options = RunOptions::new().stdout(GuestOutput::Capture { limit: 1024 });
        let report = bench.guests[InstantiateGuest::Hello.index()].run(&options).unwrap();
        assert_eq!(report.outcome, Outcome::Exited(7));
        assert_eq!(String::from_utf8_lossy(&report.stdout), HELLO_LINE);
    }

    #[test]
    fn each_configuration_sets_what_it_names() {
        let debug = |c: RunConfig| format!("{:?}", c.options().unwrap());
        assert!(debug(RunConfig::Defaults).contains("timeout: None"));
        assert!(debug(RunConfig::Timeout).contains("timeout: Some(10s)"));
        assert!(debug(RunConfig::Policy).contains("/bin/true") && debug(RunConfig::Policy).contains("timeout: None"));
        let all = debug(RunConfig::All);
        for part in ["data.txt", "/bin/true", "max_memory: Some(67108864)", "timeout: Some(10s)"] {
            assert!(all.contains(part), "no `{part}` in {all}");
        }
    }

    /// The time of a multi-threaded batch covers every thread's runs, however the threads are
    /// scheduled: it runs from the first start to the last end, not from when the spawning
    /// thread resumes after releasing the others (on a busy machine, after they all finished).
    #[test]
    fn threaded_batches_are_timed_from_the_first_start_to_the_last_end() {
        for threads in [1, 3] {
            let elapsed = timed(threads, 4, || {
                std::thread::sleep(Duration::from_millis(2));
                Ok(())
            })
            .unwrap();
            assert!(elapsed >= Duration::from_millis(8), "{threads} threads: {elapsed:?}");
        }
        let failed = timed(2, 3, || Err(BenchError::Guest("no".into())));
        assert!(matches!(failed, Err(BenchError::Guest(_))), "{failed:?}");
    }

    #[test]
    fn a_sample_has_every_figure_with_threads() {
        for threads in [1, 2] {
            let p = InstantiateParams { n: 3, guest: InstantiateGuest::Hello, config: RunConfig::All, threads };
            let sample = run_once(&p).unwrap();
            assert!(sample.rate > 0.0 && sample.floor_rate > 0.0);
            for key in ["us_per_run", "floor_us_per_run", "time_of_floor", "ondemand_us_per_run"] {
                assert!(sample.extra[key] > 0.0, "{key}: {:?}", sample.extra);
            }
        }
    }
}

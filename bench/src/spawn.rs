//! `wrt bench spawn`: a guest spawning `/bin/true` through the `wrt_v1` ABI while it holds
//! touched linear memory and live host buffers, against `posix_spawn` + `waitpid` of
//! `/bin/true` from this process while it holds the same memory.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{ConfigError, Instance, Outcome, RunOptions, Runtime, Stats, WasmValue};

use crate::peers::{self, PeerResult, Script};
use crate::sample::Sample;
use crate::setting::{Method, ParamError, Setting, Strategy};
use crate::workload::columns::{Column, FLOOR_US_PER_SPAWN, US_PER_SPAWN, figure};
use crate::workload::compared::Baseline;
use crate::workload::{self, Workload};
use crate::{BenchError, floor, guests, runtime};

const MIB: u64 = 1 << 20;

/// Calls `export(arg)` and returns its `i32` result.
fn call(instance: &mut Instance, export: &str, arg: u64) -> Result<i32, BenchError> {
    let arg = i32::try_from(arg)
        .map_err(|_| BenchError::Guest(format!("`{export}` takes an `i32`: {arg} is out of its range")))?;
    match runtime(export, instance.invoke(export, &[WasmValue::I32(arg)]))? {
        Outcome::Returned(values) if values.len() == 1 => match values[0] {
            WasmValue::I32(v) => Ok(v),
            other => Err(BenchError::Guest(format!("`{export}` returned {other}"))),
        },
        other => Err(BenchError::Guest(format!("`{export}` ended with {other:?}"))),
    }
}

/// The spawn guest (`guests/test-guests/wat/bench_spawn.wat`) in a sandbox that may run `/bin/true` and
/// `/bin/sh`, holding `heap` bytes of touched linear memory and `external` bytes of written
/// host buffers: what the spawn workloads measure, here and in the criterion benches.
///
/// A guest whose children are confined runs on a thread of its own, which keeps the children's
/// seccomp filter (`RunOptions::filter_on_guest_thread`) as `wrt run`'s guest thread does;
/// the floor and the unconfined sides stay on threads without it.
#[derive(Debug)]
pub struct SpawnGuest {
    home: Home,
}

#[derive(Debug)]
enum Home {
    /// Called on the caller's thread.
    Here(Box<Instance>),
    /// Called on its own thread.
    Own(GuestThread),
}

type Job = Box<dyn FnOnce(&mut Instance) + Send>;

/// A thread that owns an instance and runs calls on it, one at a time.
#[derive(Debug)]
struct GuestThread {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl GuestThread {
    fn new(mut instance: Instance) -> Result<Self, BenchError> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("guest".to_owned())
            .spawn(move || {
                for job in rx {
                    job(&mut instance);
                }
            })
            .map_err(|e| BenchError::Guest(format!("cannot start the guest's thread: {e}")))?;
        Ok(Self { jobs: Some(jobs), thread: Some(thread) })
    }

    /// Runs `f` on the thread and returns its result.
    fn call<R: Send + 'static>(&self, f: impl FnOnce(&mut Instance) -> R + Send + 'static) -> R {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |instance| {
            let _ = tx.send(f(instance));
        });
        self.jobs
            .as_ref()
            .expect("jobs are taken only on drop")
            .send(job)
            .expect("the guest's thread runs until dropped");
        rx.recv().expect("the guest's thread answers every call")
    }
}

impl Drop for GuestThread {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl SpawnGuest {
    /// Instantiates the guest with `p`'s strategy and DONTFORK setting and makes it hold `p`'s
    /// memory (rounded up to whole MiB). `p.n` and `p.method` are for [`SpawnGuest::spawn`].
    ///
    /// # Errors
    ///
    /// When the sandbox fails, or the guest cannot grow its memory or hold the buffers.
    pub fn new(p: &SpawnParams) -> Result<Self, BenchError> {
        let policy = Policy::deny_all().allow_program("/bin/true").allow_program("/bin/sh");
        let options =
            runtime("invalid spawn policy", RunOptions::new().spawn_policy(&policy).map_err(ConfigError::into_error))?
                .spawn_strategy(p.strategy, true)
                .child_sandbox(p.sandbox)
                .child_view(p.view)
                .filter_on_guest_thread(p.sandbox);
        let wrt = runtime("failed to create the runtime", Runtime::builder().dontfork(p.dontfork).build())?;
        let guest = runtime("failed to load the spawn guest", wrt.load_bytes("bench_spawn.wat", guests::BENCH_SPAWN))?;
        let mut instance = runtime("failed to instantiate the spawn guest", guest.instantiate(&options))?;
        if p.heap > 0 {
            let mib = p.heap.div_ceil(MIB);
            if call(&mut instance, "touch", mib)? < 0 {
                return Err(BenchError::Guest(format!("could not grow linear memory to {mib} MiB")));
            }
        }
        if p.external > 0 {
            let mib = p.external.div_ceil(MIB);
            let held = call(&mut instance, "hold_buffers", mib)?;
            if u64::try_from(held).ok() != Some(mib) {
                return Err(BenchError::Guest(format!("could not hold {mib} MiB of host buffers: {held}")));
            }
        }
        let home = if p.sandbox { Home::Own(GuestThread::new(instance)?) } else { Home::Here(Box::new(instance)) };
        Ok(Self { home })
    }

    /// Spawns `/bin/true` `n` times as `method` says, and returns how long that took.
    ///
    /// # Errors
    ///
    /// When the guest fails or a spawn does.
    pub fn spawn(&mut self, method: Method, n: u64) -> Result<Duration, BenchError> {
        let export = method.export();
        let timed = move |instance: &mut Instance| {
            let start = Instant::now();
            call(instance, export, n).map(|ret| (ret, start.elapsed()))
        };
        let (ret, elapsed) = match &mut self.home {
            Home::Here(instance) => timed(instance)?,
            Home::Own(thread) => thread.call(timed)?,
        };
        if ret != 0 {
            return Err(BenchError::Guest(format!("`{export}` failed with {ret}")));
        }
        Ok(elapsed)
    }

    /// The guest's memory figures so far.
    pub fn stats(&self) -> Stats {
        match &self.home {
            Home::Here(instance) => instance.stats(),
            Home::Own(thread) => thread.call(|instance| instance.stats()),
        }
    }
}

pub(crate) fn run_once(p: &SpawnParams) -> Result<Sample, BenchError> {
    let mut guest = SpawnGuest::new(p)?;
    let elapsed = guest.spawn(p.method, u64::from(p.n))?;
    // The floor runs while the guest's memory and buffers are still held by this process.
    let start = Instant::now();
    floor::posix_spawn_wait("/bin/true", p.n)?;
    let floor_elapsed = start.elapsed();
    let stats = guest.stats();
    drop(guest);
    let per_second = |d: Duration| f64::from(p.n) / d.as_secs_f64();
    let extra = BTreeMap::from([
        ("us_per_spawn".to_owned(), elapsed.as_secs_f64() * 1e6 / f64::from(p.n)),
        ("floor_us_per_spawn".to_owned(), floor_elapsed.as_secs_f64() * 1e6 / f64::from(p.n)),
        ("peak_linear_memory".to_owned(), stats.peak_linear_memory as f64),
        ("peak_external".to_owned(), stats.peak_external as f64),
    ]);
    Ok(Sample { rate: per_second(elapsed), floor_rate: per_second(floor_elapsed), extra })
}

/// Parameters of `wrt bench spawn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpawnParams {
    /// Spawns per run.
    pub n: u32,
    /// Touched guest linear memory, bytes.
    pub heap: u64,
    /// Live host buffers, bytes.
    pub external: u64,
    /// How programs start.
    #[serde(serialize_with = "crate::setting::serialize_strategy")]
    pub strategy: Strategy,
    /// Whether guest memory is `MADV_DONTFORK`.
    pub dontfork: bool,
    /// What each spawn does.
    pub method: Method,
    /// Whether children are confined by the child sandbox (needs `vfork-exec` or `fork-exec`).
    pub sandbox: bool,
    /// Whether confined children run in the child view (on, as in `wrt run`).
    #[serde(skip)]
    pub view: bool,
}

impl Default for SpawnParams {
    fn default() -> Self {
        Self {
            n: 200,
            heap: 0,
            external: 0,
            strategy: Strategy::PosixSpawn,
            dontfork: true,
            method: Method::Spawn,
            sandbox: false,
            view: true,
        }
    }
}

impl Workload for SpawnParams {
    fn name(&self) -> &'static str {
        "spawn"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "heap", "external", "strategy", "dontfork", "method", "sandbox"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("spawns", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        Some(match key {
            "n" => Setting::N(self.n),
            "heap" => Setting::Heap(self.heap),
            "external" => Setting::External(self.external),
            "strategy" => Setting::Strategy(self.strategy),
            "dontfork" => Setting::Dontfork(self.dontfork),
            "method" => Setting::Method(self.method),
            "sandbox" => Setting::Sandbox(self.sandbox),
            _ => return None,
        })
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::N(n) => self.n = n,
            Setting::Heap(b) => self.heap = b,
            Setting::External(b) => self.external = b,
            Setting::Strategy(s) => self.strategy = s,
            Setting::Dontfork(on) => self.dontfork = on,
            Setting::Method(m) => self.method = m,
            Setting::Sandbox(on) => self.sandbox = on,
            other => return Err(workload::unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "spawns/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[figure(US_PER_SPAWN), figure(FLOOR_US_PER_SPAWN)];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt guest: spawn + wait"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: posix_spawn + waitpid in the bench process")
    }

    fn plot_subject(&self) -> &'static str {
        "a guest spawning /bin/true while holding memory"
    }

    fn plot_memory(&self) -> Option<(u64, u64)> {
        Some((self.heap, self.external))
    }

    /// Node's `child_process.spawn('/bin/true')`, holding the same amount as a touched
    /// `WebAssembly.Memory`, and the buffers as `Buffer`s (which, malloc'd, are not DONTFORK).
    fn peer(&self, name: String) -> Result<Option<PeerResult>, BenchError> {
        let (heap_mb, kind) =
            if self.external > 0 { (self.external / MIB, "buffer") } else { (self.heap / MIB, "wasm") };
        let env = [("N", self.n.to_string()), ("HEAP_MB", heap_mb.to_string()), ("KIND", kind.to_owned())];
        let json = peers::node(Script::SpawnHeap, &[], &env)?.json;
        let ms = peers::number(&json, "ms_per_spawn")?;
        let extra = BTreeMap::from([("us_per_spawn".to_owned(), ms * 1e3)]);
        Ok(Some(PeerResult { name, rate: 1e3 / ms, extra }))
    }
}

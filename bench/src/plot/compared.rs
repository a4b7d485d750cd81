//! What each workload's bar plot compares, in words and bars: what wrt's bar is, the other
//! sides measured in the same runs and drawn as bars of their own (wasmtime for
//! component-startup and real, the core module for component-spawn, a confined guest and
//! host-spawn alone for spawn-overhead), what the light bar behind them is (the floor, the
//! native pipeline or the native program), and what one unit of the rate is. The title, the legend and the notes after the
//! bars all take their words from here, so they say the same thing.

use plotters::style::RGBColor;

use crate::params::Params;

/// A side measured in every run besides wrt's, drawn as a bar of its own.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// What the side is, in the legend and on its rows.
    pub name: &'static str,
    /// Its time per operation in each run's figures.
    pub key: &'static str,
    /// How many of that time's unit a second has: its rate in a run is `per / time`.
    pub per: f64,
    /// The table's ratio of wrt's time over this side's, written after wrt's bar: its title
    /// and the key of wrt's time.
    pub versus: Option<(&'static str, &'static str)>,
    /// The colour of its bars.
    pub color: RGBColor,
}

/// The light bar behind the bars (the floor, the native pipeline or the native program).
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    /// Its short name, after each bar (`0.92× of native`).
    pub name: &'static str,
    /// What it is, in the legend (starting with the short name).
    pub legend: &'static str,
    /// What the title says the rates are against (`the floor`).
    pub against: &'static str,
}

impl Baseline {
    /// A floor: short name `floor`, what the title's rates are against `the floor`, and `legend`.
    pub const fn floor(legend: &'static str) -> Self {
        Baseline { name: "floor", legend, against: "the floor" }
    }
}

/// The colour of a second side's bars.
pub const PURPLE: RGBColor = RGBColor(148, 103, 189);
/// The colour of a second side's bars.
pub const CYAN: RGBColor = RGBColor(23, 190, 207);
/// The colour of a third side's bars.
pub const BROWN: RGBColor = RGBColor(140, 86, 75);

/// The sides of `params`'s workload besides wrt, in the order their rows are drawn.
pub(super) fn sides(params: &Params) -> &'static [Side] {
    params.workload().plot_sides()
}

/// What wrt's bar is.
pub(super) fn wrt_name(params: &Params) -> &'static str {
    params.workload().plot_wrt()
}

/// The light bar behind the bars: its short name, in the title and after each bar (`0.92× of
/// native`), and what it is, in the legend (which starts with the short name).
pub(super) fn baseline(params: &Params) -> (&'static str, &'static str) {
    let baseline = params.workload().plot_baseline();
    (baseline.name, baseline.legend)
}

/// The plot's title: the workload, what it compares, against what.
pub(super) fn title(params: &Params) -> String {
    let workload = params.workload();
    format!("wrt bench {}: {} against {}", params.name(), workload.plot_rates(), workload.plot_baseline().against)
}

/// What the workload runs, for a subtitle that has no parameters to show (each of them varies).
pub(super) fn what(params: &Params) -> &'static str {
    params.workload().plot_subject()
}

/// The rate axis: the unit, and what one operation is where the unit does not say.
pub(super) fn axis(params: &Params) -> String {
    params.workload().plot_axis().to_owned()
}

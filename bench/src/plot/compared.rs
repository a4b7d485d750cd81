//! What each workload's bar plot compares, in words and bars, read from the configuration's
//! workload: what wrt's bar is, the other sides measured in the same runs and drawn as bars of
//! their own (wasmtime for component-startup and real, the core module for component-spawn, a
//! confined guest and host-spawn alone for spawn-overhead), what the light bar behind them is
//! (the floor, the native pipeline or the native program), and what one unit of the rate is.
//! The title, the legend and the notes after the bars all take their words from here, so they
//! say the same thing.

use crate::params::Params;
use crate::workload::compared::Side;

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

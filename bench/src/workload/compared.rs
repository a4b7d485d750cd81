//! What a workload's bar plot compares, as the workload declares it: the sides measured in the
//! same runs besides wrt's, drawn as bars of their own, the light bar behind them (the floor, the
//! native pipeline or the native program), and their colours. The plot takes its words from here
//! and from the workload ([`Workload::plot_wrt`](crate::Workload::plot_wrt), …), so that its
//! title, legend and notes say the same thing.

use plotters::style::RGBColor;

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

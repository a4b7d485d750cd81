//! Error bars (± 1 sd) that the axis may cut: an end inside the axis gets a cap, an end beyond
//! it stops at the axis's edge with an arrowhead pointing on, so a cut bar does not read as a
//! short one.

use plotters::element::PathElement;
use plotters::style::ShapeStyle;

/// An error bar along one axis, in the axis's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Whisker {
    /// Where the bar starts: `value - sd`, or the axis's low end.
    pub(super) low: f64,
    /// Where the bar ends: `value + sd`, or the axis's high end.
    pub(super) high: f64,
    /// Whether the axis cut the bar at its low end.
    pub(super) low_cut: bool,
    /// Whether the axis cut the bar at its high end.
    pub(super) high_cut: bool,
}

impl Whisker {
    /// The bar of `value ± sd` on an axis from `lo` to `hi`.
    pub(super) fn new(value: f64, sd: f64, lo: f64, hi: f64) -> Self {
        let (low, high) = (value - sd, value + sd);
        Self { low: low.max(lo), high: high.min(hi), low_cut: low < lo, high_cut: high > hi }
    }
}

/// The mark at one end of a bar, at pixel offset `at` along the bar from its anchor: a cap, or,
/// where the axis cut the bar, an arrowhead pointing away from the bar's middle (`outward` is
/// +1 or -1 along the axis's pixels). `along_x` says whether the bar is horizontal.
pub(super) fn end(
    at: (i32, i32),
    cut: bool,
    outward: i32,
    along_x: bool,
    style: ShapeStyle,
) -> PathElement<(i32, i32)> {
    PathElement::new(end_points(at, cut, outward, along_x), style)
}

/// The points of [`end`]'s mark: two for a cap, three for an arrowhead.
pub(super) fn end_points(at: (i32, i32), cut: bool, outward: i32, along_x: bool) -> Vec<(i32, i32)> {
    let (x, y) = at;
    match (cut, along_x) {
        (false, true) => vec![(x, y - 6), (x, y + 6)],
        (false, false) => vec![(x - 4, y), (x + 4, y)],
        (true, true) => vec![(x - 7 * outward, y - 5), (x, y), (x - 7 * outward, y + 5)],
        (true, false) => vec![(x - 5, y - 7 * outward), (x, y), (x + 5, y - 7 * outward)],
    }
}

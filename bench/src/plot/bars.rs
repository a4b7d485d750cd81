//! The bar plot of every workload but spawn over several memory sizes: one row per
//! configuration, its rate as a bar with the standard deviation over the runs as an error bar,
//! drawn over a light bar as long as its floor's rate, so the share of the floor reads at a
//! glance; below it, the other sides its workload measures in the same runs ([`sides`]:
//! wasmtime, the core module, host-spawn alone), each over the same floor; the Node peer's rate
//! below its configuration; and, for the buffer workload, a second panel with young (blue) and
//! full (red) collections per run, or a line saying there were none. Rows are labelled on the
//! left, so any number of configurations and any label length fit, and the image grows with
//! the rows. When the bars differ tenfold or more (the instantiate workload's guests), the rate
//! axis is logarithmic.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::compared;
use super::ticks::{Ticked, linear_ticks, log_ticks, mean_sd, round_down, si};
use super::whisker::{self, Whisker};
use super::{
    FLOOR_FILL, FLOOR_LINE, FONT, FULL, INK, MUTED, PEER, Swatch, WIDTH, WRT, YOUNG, house_mesh, legend, legend_height,
    plot_err, subtitle, text, title,
};
use crate::BenchError;
use crate::figures;
use crate::params::Params;
use crate::report::{short_label, unit};
use crate::result::ConfigResult;
use crate::stats::Summary;
use crate::workload::compared::Side;

/// Pixels per row of bars.
const ROW: u32 = 40;
const TITLE: u32 = 70;
/// The x axis and its description.
const AXIS: u32 = 56;
/// A panel's own heading.
const HEADING: u32 = 34;
/// The line that says there were no collections.
const NOTE: u32 = 34;
/// How many times the smallest rate the largest bar must reach for a logarithmic axis.
const LOG_SPREAD: f64 = 10.0;

struct Row {
    label: String,
    color: RGBColor,
    rate: f64,
    sd: f64,
    /// The floor's rate, for wrt's rows and its workload's other sides.
    floor: Option<f64>,
    /// What the bar is worth: `0.76× of floor`, `0.14× of wrt`.
    ratio: String,
    /// Young and full collections per run.
    collections: Option<(f64, f64)>,
}

fn collections(extra: &std::collections::BTreeMap<String, f64>) -> Option<(f64, f64)> {
    Some((*extra.get("young_collections")?, *extra.get("full_collections")?))
}

/// The row of `side` of `r`, when its runs measured it: its rate in each run is `per` over
/// its time, summed up as the table sums up every figure ([`Centre`](crate::figures::Centre)).
fn side_row(r: &ConfigResult<Params>, side: &Side, label: String, baseline: &str) -> Option<Row> {
    let rates: Vec<f64> = r
        .samples
        .iter()
        .filter_map(|s| s.extra.get(side.key).copied())
        .filter(|t| *t > 0.0)
        .map(|t| side.per / t)
        .collect();
    let rate = r.centre.of_values(&rates)?;
    let floor = r.floor_rate_figure();
    let ratio = figures::ratio(Some(rate), Some(floor)).map_or_else(String::new, |q| format!("{q:.2}× of {baseline}"));
    Some(Row {
        label,
        color: side.color,
        rate,
        sd: Summary::of(&rates).sd,
        floor: Some(floor),
        ratio,
        collections: None,
    })
}

fn rows(results: &[ConfigResult<Params>]) -> Vec<Row> {
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut rows = Vec::new();
    for r in results {
        let (baseline, _) = compared::baseline(&r.params);
        let config = short_label(&r.params, &all);
        // Nothing varies: the subtitle has the parameters, and a row names its side alone.
        let single = config == r.params.name();
        let mut ratio = format!("{:.2}× of {baseline}", r.of_floor);
        for side in compared::sides(&r.params) {
            if let Some((title, wrt_key)) = side.versus
                && let Some(q) = figures::ratio(r.figure(wrt_key), r.figure(side.key))
            {
                ratio.push_str(&format!(" · {title} {q:.2}×"));
            }
        }
        rows.push(Row {
            label: if single { compared::wrt_name(&r.params).to_owned() } else { config.clone() },
            color: WRT,
            rate: r.rate_figure(),
            sd: r.rate.sd,
            floor: Some(r.floor_rate_figure()),
            ratio,
            collections: collections(&r.extra),
        });
        for side in compared::sides(&r.params) {
            let label = if single { side.name.to_owned() } else { format!("{config}: {}", side.name) };
            rows.extend(side_row(r, side, label, baseline));
        }
        if let Some(peer) = &r.peer {
            rows.push(Row {
                label: format!("peer: {}", peer.name),
                color: PEER,
                rate: peer.rate,
                sd: 0.0,
                floor: None,
                ratio: format!("{:.2}× of wrt", peer.rate / r.rate_figure()),
                collections: collections(&peer.extra),
            });
        }
    }
    rows
}

/// The legend: wrt, each other side drawn, the floor, the peer.
fn legend_items(params: &Params, rows: &[Row]) -> Vec<(Swatch, String)> {
    let mut items = vec![(Swatch::Fill(WRT), format!("{} ({})", compared::wrt_name(params), unit(params)))];
    for side in compared::sides(params) {
        if rows.iter().any(|r| r.color == side.color) {
            items.push((Swatch::Fill(side.color), side.name.to_owned()));
        }
    }
    items.push((Swatch::Outline, compared::baseline(params).1.to_owned()));
    if rows.iter().any(|r| r.color == PEER) {
        items.push((Swatch::Fill(PEER), "peer (one run)".to_owned()));
    }
    items
}

/// Whether the plot has a collections panel (some collection happened), a line saying there
/// were none (the buffer workload without any), or neither.
enum Collections {
    Panel,
    None,
    NotMeasured,
}

fn collections_of(rows: &[Row]) -> Collections {
    if rows.iter().any(|r| r.collections.is_some_and(|(y, f)| y > 0.0 || f > 0.0)) {
        Collections::Panel
    } else if rows.iter().any(|r| r.collections.is_some()) {
        Collections::None
    } else {
        Collections::NotMeasured
    }
}

fn panel_height(rows: usize) -> u32 {
    AXIS + ROW * u32::try_from(rows).unwrap_or(u32::MAX / (2 * ROW)) + 12
}

/// The height of the plot of `results`.
///
/// # Errors
///
/// When the built-in font cannot measure the legend.
pub(super) fn height(results: &[ConfigResult<Params>]) -> Result<u32, BenchError> {
    let rows = rows(results);
    let collections = match collections_of(&rows) {
        Collections::Panel => HEADING + panel_height(rows.len()),
        Collections::None => NOTE,
        Collections::NotMeasured => 0,
    };
    let legend = legend_height(&legend_items(&results[0].params, &rows), WIDTH)?;
    Ok(TITLE + legend + panel_height(rows.len()) + collections)
}

/// The rate axis: from `lo` to `hi`, logarithmic or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
}

impl Axis {
    /// The axis for `rates` (each row's rate, sd and floor) over `pixels`, leaving `room`
    /// pixels after the longest bar for its note: logarithmic when one row (its bar or its
    /// floor's, whichever is longer) is [`LOG_SPREAD`] times as long as another or more, so
    /// that the shorter rows stay readable; a bar against its own floor does not count.
    pub(super) fn of(rates: &[(f64, f64, Option<f64>)], pixels: f64, room: f64) -> Self {
        let end = |&(rate, sd, floor): &(f64, f64, Option<f64>)| (rate + sd).max(floor.unwrap_or(0.0));
        let widest = rates.iter().map(end).fold(0.0, f64::max).max(1.0);
        let shortest = rates.iter().map(end).filter(|e| *e > 0.0).fold(f64::INFINITY, f64::min);
        let smallest = rates.iter().map(|(rate, _, _)| *rate).filter(|r| *r > 0.0).fold(f64::INFINITY, f64::min);
        // The share of the axis the longest bar may take.
        let share = ((pixels - room - 16.0) / pixels).max(0.5);
        if smallest.is_finite() && widest / shortest >= LOG_SPREAD {
            let lo = round_down(smallest / 1.3);
            Self { lo, hi: lo * (widest / lo).powf(1.0 / share), log: true }
        } else {
            Self { lo: 0.0, hi: widest / share, log: false }
        }
    }

    fn ticked(self, pixels: f64) -> Ticked {
        if self.log {
            Ticked::log(self.lo..self.hi, log_ticks(self.lo, self.hi, pixels, 56.0))
        } else {
            Ticked::linear(self.lo..self.hi, linear_ticks(self.hi, pixels, 80.0))
        }
    }
}

/// One horizontal bar chart of `rows` in `area`, labelled on the left.
struct Panel<'a> {
    rows: &'a [Row],
    label_width: u32,
    x_desc: &'a str,
}

impl Panel<'_> {
    fn chart<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, Shift>,
        axis: Axis,
    ) -> Result<ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>, BenchError>
    where
        DB::ErrorType: 'static,
    {
        let n = self.rows.len();
        // Row i is drawn at y = n - 1 - i, so that the first row is at the top.
        let centers: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let labels: Vec<String> = self.rows.iter().rev().map(|r| r.label.clone()).collect();
        let (w, _) = area.dim_in_pixel();
        let pixels = f64::from(w.saturating_sub(self.label_width + 36)).max(100.0);
        let mut chart = ChartBuilder::on(area)
            .margin_left(12)
            .margin_right(24)
            .margin_top(6)
            .x_label_area_size(AXIS - 6)
            .y_label_area_size(self.label_width)
            .build_cartesian_2d(axis.ticked(pixels), Ticked::linear(-0.6..n as f64 - 0.4, centers))
            .map_err(plot_err)?;
        house_mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .x_desc(self.x_desc)
            .x_label_formatter(&|x| si(*x))
            .y_label_formatter(&|y| labels.get(y.round().max(0.0) as usize).cloned().unwrap_or_default())
            .draw()
            .map_err(plot_err)?;
        Ok(chart)
    }
}

fn y_of(rows: &[Row], i: usize) -> f64 {
    (rows.len() - 1 - i) as f64
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    results: &[ConfigResult<Params>],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let params = &results[0].params;
    let rows = rows(results);
    let (head, rest) = root.split_vertically(TITLE);
    title(&head, &compared::title(params), &subtitle(results))?;
    let items = legend_items(params, &rows);
    let (legend_area, rest) = rest.split_vertically(legend_height(&items, WIDTH)?);
    legend(&legend_area, &items)?;

    let label_style: TextStyle = (FONT, 14).into_font().into();
    let mut label_width = 0;
    for r in &rows {
        label_width = label_width.max(root.estimate_text_size(&r.label, &label_style).map_err(plot_err)?.0);
    }
    let label_width = (label_width + 20).clamp(90, 460);
    let (rates_area, rest) = rest.split_vertically(panel_height(rows.len()));

    // Rates: each bar over its floor, with the sd and the ratio written after it.
    let note_style = text(13, INK, HPos::Left, VPos::Center);
    let notes: Vec<String> = rows.iter().map(|r| format!("{} · {}", mean_sd(r.rate, r.sd), r.ratio)).collect();
    let (plot_w, _) = rates_area.dim_in_pixel();
    let plot_w = f64::from(plot_w.saturating_sub(label_width + 40)).max(100.0);
    // Room after the longest bar for its note.
    let mut note_w: f64 = 0.0;
    for note in &notes {
        note_w = note_w.max(f64::from(root.estimate_text_size(note, &note_style).map_err(plot_err)?.0));
    }
    let rates: Vec<(f64, f64, Option<f64>)> = rows.iter().map(|r| (r.rate, r.sd, r.floor)).collect();
    let axis = Axis::of(&rates, plot_w, note_w);
    let x_desc = if axis.log { format!("{} (log scale)", compared::axis(params)) } else { compared::axis(params) };
    let panel = Panel { rows: &rows, label_width, x_desc: &x_desc };
    let mut chart = panel.chart(&rates_area, axis)?;
    let start = if axis.log { axis.lo } else { 0.0 };
    for (i, (r, note)) in rows.iter().zip(&notes).enumerate() {
        let y = y_of(&rows, i);
        if let Some(floor) = r.floor {
            chart
                .draw_series([
                    Rectangle::new([(start, y - 0.4), (floor, y + 0.4)], FLOOR_FILL.filled()),
                    Rectangle::new([(start, y - 0.4), (floor, y + 0.4)], FLOOR_LINE.stroke_width(1)),
                ])
                .map_err(plot_err)?;
        }
        chart
            .draw_series([Rectangle::new([(start, y - 0.26), (r.rate, y + 0.26)], r.color.filled())])
            .map_err(plot_err)?;
        let mut end = r.rate.max(r.floor.unwrap_or(0.0));
        if r.sd > 0.0 {
            let bar = Whisker::new(r.rate, r.sd, start, axis.hi);
            let style = INK.stroke_width(1);
            chart.draw_series([PathElement::new(vec![(bar.low, y), (bar.high, y)], style)]).map_err(plot_err)?;
            chart
                .draw_series([
                    EmptyElement::at((bar.low, y)) + whisker::end((0, 0), bar.low_cut, -1, true, style),
                    EmptyElement::at((bar.high, y)) + whisker::end((0, 0), bar.high_cut, 1, true, style),
                ])
                .map_err(plot_err)?;
            end = end.max(bar.high);
        }
        chart
            .draw_series([EmptyElement::at((end, y)) + Text::new(note.clone(), (8, 0), note_style.clone())])
            .map_err(plot_err)?;
    }

    match collections_of(&rows) {
        Collections::NotMeasured => {}
        Collections::None => {
            let (w, _) = rest.dim_in_pixel();
            rest.draw_text(
                "collections: none (0 young, 0 full in every run)",
                &text(14, MUTED, HPos::Center, VPos::Center),
                (i32::try_from(w / 2).unwrap_or(0), i32::try_from(NOTE / 2).unwrap_or(0)),
            )
            .map_err(plot_err)?;
        }
        Collections::Panel => {
            let (heading, area) = rest.split_vertically(HEADING);
            legend(
                &heading,
                &[
                    (Swatch::Fill(YOUNG), "young collections per run".to_owned()),
                    (Swatch::Fill(FULL), "full collections per run".to_owned()),
                ],
            )?;
            let counts: Vec<(f64, f64)> = rows.iter().map(|r| r.collections.unwrap_or_default()).collect();
            let notes: Vec<String> = rows
                .iter()
                .map(|r| match r.collections {
                    Some((young, full)) => format!("{young:.0} young · {full:.0} full"),
                    None => "not measured".to_owned(),
                })
                .collect();
            let widest = counts.iter().map(|(y, f)| y.max(*f)).fold(1.0, f64::max);
            let axis = Axis { lo: 0.0, hi: widest * 1.3, log: false };
            let panel = Panel { rows: &rows, label_width, x_desc: "collections per run (mean)" };
            let mut chart = panel.chart(&area, axis)?;
            for (i, ((young, full), note)) in counts.iter().zip(notes).enumerate() {
                let y = y_of(&rows, i);
                chart
                    .draw_series([
                        Rectangle::new([(0.0, y + 0.02), (*young, y + 0.3)], YOUNG.filled()),
                        Rectangle::new([(0.0, y - 0.3), (*full, y - 0.02)], FULL.filled()),
                    ])
                    .map_err(plot_err)?;
                chart
                    .draw_series(
                        [EmptyElement::at((young.max(*full), y)) + Text::new(note, (8, 0), note_style.clone())],
                    )
                    .map_err(plot_err)?;
            }
        }
    }
    Ok(())
}

/// The rows of the plot of `results` as (label, rate, note), for the tests.
#[cfg(test)]
pub(super) fn rows_for_test(results: &[ConfigResult<Params>]) -> Vec<(String, f64, String)> {
    rows(results).into_iter().map(|r| (r.label, r.rate, r.ratio)).collect()
}

/// The legend of the plot of `results`, for the tests.
#[cfg(test)]
pub(super) fn legend_for_test(results: &[ConfigResult<Params>]) -> Vec<String> {
    legend_items(&results[0].params, &rows(results)).into_iter().map(|(_, label)| label).collect()
}

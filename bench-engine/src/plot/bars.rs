//! The bar plot of the buffer and startup workloads (and of spawn runs at one memory size): one
//! row per configuration, its rate as a bar with the standard deviation over the runs as an
//! error bar, drawn over a light bar as long as its floor's rate, so the share of the floor
//! reads at a glance; the Node peer's rate below its configuration; and, for the buffer
//! workload, a second panel with young (blue) and full (red) collections per run, or a line
//! saying there were none. Rows are labelled on the left, so any number of configurations and
//! any label length fit, and the image grows with the rows.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::shared;
use super::ticks::{Ticked, mean_sd, si};
use super::{
    FLOOR_FILL, FLOOR_LINE, FONT, FULL, INK, MUTED, PEER, Swatch, WRT, YOUNG, house_mesh, legend_row, plot_err, text,
    title,
};
use crate::BenchError;
use crate::central::{self, Centre};
use crate::params::Params;
use crate::report::{short_label, unit};
use crate::runner::ConfigResult;

/// Pixels per row of bars.
const ROW: u32 = 40;
const TITLE: u32 = 70;
const LEGEND: u32 = 30;
/// The x axis and its description.
const AXIS: u32 = 56;
/// A panel's own heading.
const HEADING: u32 = 34;
/// The line that says there were no collections.
const NOTE: u32 = 34;

struct Row {
    label: String,
    color: RGBColor,
    rate: f64,
    sd: f64,
    /// The floor's rate, for wrt's rows.
    floor: Option<f64>,
    /// What the bar is worth: `0.76× of floor`, `0.14× of wrt`.
    ratio: String,
    /// Young and full collections per run.
    collections: Option<(f64, f64)>,
}

fn collections(extra: &std::collections::BTreeMap<String, f64>) -> Option<(f64, f64)> {
    Some((*extra.get("young_collections")?, *extra.get("full_collections")?))
}

fn rows(results: &[ConfigResult]) -> Vec<Row> {
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut rows = Vec::new();
    for r in results {
        let mut label = short_label(&r.params, &all);
        if label == r.params.workload() {
            // Nothing varies: the subtitle has the parameters.
            "wrt".clone_into(&mut label);
        }
        rows.push(Row {
            label,
            color: WRT,
            rate: central::rate(r),
            sd: r.rate.sd,
            floor: Some(central::floor_rate(r)),
            ratio: format!("{:.2}× of floor", r.of_floor),
            collections: collections(&r.extra),
        });
        if let Some(peer) = &r.peer {
            rows.push(Row {
                label: format!("peer: {}", peer.name),
                color: PEER,
                rate: peer.rate,
                sd: 0.0,
                floor: None,
                ratio: format!("{:.2}× of wrt", peer.rate / central::rate(r)),
                collections: collections(&peer.extra),
            });
        }
    }
    rows
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
pub(super) fn height(results: &[ConfigResult]) -> u32 {
    let rows = rows(results);
    let collections = match collections_of(&rows) {
        Collections::Panel => HEADING + panel_height(rows.len()),
        Collections::None => NOTE,
        Collections::NotMeasured => 0,
    };
    TITLE + LEGEND + panel_height(rows.len()) + collections
}

fn floor_name(params: &Params) -> &'static str {
    match params {
        Params::Spawn(_) => "floor: posix_spawn + waitpid in the bench process",
        Params::Buffer(_) => "floor: the same copies as plain memcpy",
        Params::Startup(_) => "floor: posix_spawn + waitpid of /bin/true",
        Params::Instantiate(_) => "floor: wasmtime pooling + copy-on-write, InstancePre, a store per run",
        Params::Pipeline(_) => "baseline: the same pipeline run natively by sh -c",
        Params::ComponentSpawn(_) => "floor: posix_spawn + waitpid in the bench process",
        Params::ComponentStartup(_) => "floor: posix_spawn + waitpid of /bin/true",
        Params::SpawnOverhead(_) => "floor: posix_spawn + waitpid in the bench process, CPU time",
    }
}

/// One horizontal bar chart of `rows` in `area`: `value` of each row as a bar, labelled on
/// the left, `annotate` written after its end.
struct Panel<'a> {
    rows: &'a [Row],
    label_width: u32,
    x_desc: &'a str,
}

impl Panel<'_> {
    fn chart<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, Shift>,
        x_max: f64,
    ) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Ticked>>, BenchError>
    where
        DB::ErrorType: 'static,
    {
        let n = self.rows.len();
        // Row i is drawn at y = n - 1 - i, so that the first row is at the top.
        let centers: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let labels: Vec<String> = self.rows.iter().rev().map(|r| r.label.clone()).collect();
        let mut chart = ChartBuilder::on(area)
            .margin_left(12)
            .margin_right(24)
            .margin_top(6)
            .x_label_area_size(AXIS - 6)
            .y_label_area_size(self.label_width)
            .build_cartesian_2d(0.0..x_max, Ticked::linear(-0.6..n as f64 - 0.4, centers))
            .map_err(plot_err)?;
        house_mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .x_desc(self.x_desc)
            .x_label_formatter(&|x| si(*x))
            .y_label_formatter(&|y| labels.get(y.round().max(0.0) as usize).cloned().unwrap_or_default())
            .x_labels(8)
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
    results: &[ConfigResult],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let params = &results[0].params;
    let rows = rows(results);
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let runs = results[0].rate.n;
    let (head, rest) = root.split_vertically(TITLE);
    title(
        &head,
        &format!("wrt bench {}: {} against the floor", params.workload(), unit(params)),
        &format!(
            "{} · {} ± sd of {runs} run{}",
            shared(&all),
            Centre::of(params).name(),
            if runs == 1 { "" } else { "s" }
        ),
    )?;
    let (legend, rest) = rest.split_vertically(LEGEND);
    let mut items =
        vec![(Swatch::Fill(WRT), format!("wrt ({})", unit(params))), (Swatch::Outline, floor_name(params).to_owned())];
    if rows.iter().any(|r| r.color == PEER) {
        items.push((Swatch::Fill(PEER), "peer (one run)".to_owned()));
    }
    legend_row(&legend, &items, 12)?;

    let label_style: TextStyle = (FONT, 14).into_font().into();
    let mut label_width = 0;
    for r in &rows {
        label_width = label_width.max(root.estimate_text_size(&r.label, &label_style).map_err(plot_err)?.0);
    }
    let label_width = (label_width + 20).clamp(90, 460);
    let (rates_area, rest) = rest.split_vertically(panel_height(rows.len()));

    // Rates: each bar over its floor, with the sd and the ratio written after it.
    let note_style = text(13, INK, HPos::Left, VPos::Center);
    let mut notes: Vec<String> = Vec::new();
    for r in &rows {
        let value = if r.sd > 0.0 { mean_sd(r.rate, r.sd) } else { mean_sd(r.rate, 0.0) };
        notes.push(format!("{value} · {}", r.ratio));
    }
    let end = |r: &Row| (r.rate + r.sd).max(r.floor.unwrap_or(0.0));
    let widest = rows.iter().map(end).fold(0.0, f64::max).max(1.0);
    let (plot_w, _) = rates_area.dim_in_pixel();
    let plot_w = f64::from(plot_w.saturating_sub(label_width + 40)).max(100.0);
    // Room after the longest bar for its note.
    let mut note_w: f64 = 0.0;
    for note in &notes {
        note_w = note_w.max(f64::from(root.estimate_text_size(note, &note_style).map_err(plot_err)?.0));
    }
    let x_max = widest * plot_w / (plot_w - note_w - 16.0).max(plot_w / 2.0);
    let panel = Panel { rows: &rows, label_width, x_desc: unit(params) };
    let mut chart = panel.chart(&rates_area, x_max)?;
    for (i, (r, note)) in rows.iter().zip(&notes).enumerate() {
        let y = y_of(&rows, i);
        if let Some(floor) = r.floor {
            chart
                .draw_series([
                    Rectangle::new([(0.0, y - 0.4), (floor, y + 0.4)], FLOOR_FILL.filled()),
                    Rectangle::new([(0.0, y - 0.4), (floor, y + 0.4)], FLOOR_LINE.stroke_width(1)),
                ])
                .map_err(plot_err)?;
        }
        chart
            .draw_series([Rectangle::new([(0.0, y - 0.26), (r.rate, y + 0.26)], r.color.filled())])
            .map_err(plot_err)?;
        if r.sd > 0.0 {
            let (lo, hi) = ((r.rate - r.sd).max(0.0), r.rate + r.sd);
            chart.draw_series([PathElement::new(vec![(lo, y), (hi, y)], INK.stroke_width(1))]).map_err(plot_err)?;
            for at in [lo, hi] {
                chart
                    .draw_series([
                        EmptyElement::at((at, y)) + PathElement::new(vec![(0, -6), (0, 6)], INK.stroke_width(1))
                    ])
                    .map_err(plot_err)?;
            }
        }
        chart
            .draw_series([EmptyElement::at((end(r), y)) + Text::new(note.clone(), (8, 0), note_style.clone())])
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
            legend_row(
                &heading,
                &[
                    (Swatch::Fill(YOUNG), "young collections per run".to_owned()),
                    (Swatch::Fill(FULL), "full collections per run".to_owned()),
                ],
                i32::try_from(HEADING / 2).unwrap_or(0),
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
            let x_max = widest * 1.3;
            let panel = Panel { rows: &rows, label_width, x_desc: "collections per run (mean)" };
            let mut chart = panel.chart(&area, x_max)?;
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

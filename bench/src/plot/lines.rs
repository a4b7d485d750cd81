//! The spawn plot: time per spawn against guest memory (linear memory plus host buffers), one
//! line per setting, each with its own floor (`posix_spawn` + `waitpid` in the bench process,
//! measured in the same runs while that setting's guest held its memory) dashed in its colour,
//! the Node peer, and the standard deviation over the runs as error bars; a bar that the axis
//! cuts ends in an arrowhead at the axis. The latency axis is logarithmic, with labelled ticks
//! wherever there is room (600 µs, 800 µs, … where most lines sit), and the memory axis is
//! ticked at the measured sizes.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::ticks::{Ticked, log_ticks, mib, micros, spaced};
use super::whisker::{self, Whisker};
use super::{FLOOR_LINE, INK, MUTED, PEER, SERIES, Swatch, WIDTH, house_mesh, plot_err, subtitle, swatch, text, title};
use crate::BenchError;
use crate::params::{Params, Setting};
use crate::report::short_label;
use crate::result::ConfigResult;
use crate::stats::Summary;

pub(super) const SIZE: (u32, u32) = (WIDTH, 640);
const MIB: f64 = (1 << 20) as f64;

/// One point: memory (MiB), mean µs per spawn, and its sd.
#[derive(Debug, Clone, Copy)]
struct Point {
    x: f64,
    y: f64,
    sd: f64,
}

struct Series {
    label: String,
    color: RGBColor,
    /// A floor's line: dashed.
    dashed: bool,
    points: Vec<Point>,
}

/// The floor's line of a setting.
const FLOOR: &str = "floor: posix_spawn + waitpid";

/// Guest memory of a spawn configuration in MiB: linear memory plus host buffers.
fn memory(params: &Params) -> f64 {
    params.workload().plot_memory().map_or(0.0, |(heap, external)| (heap + external) as f64 / MIB)
}

/// How many different memory sizes `results` ran at.
pub(super) fn memory_sizes(results: &[ConfigResult<Params>]) -> usize {
    let mut sizes: Vec<f64> = results.iter().map(|r| memory(&r.params)).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes.len()
}

/// Mean and sd of the per-run `key` (µs), or of 1e6 / `rate` when a run lacks it.
fn micros_of(r: &ConfigResult<Params>, key: &str, rate: impl Fn(&crate::sample::Sample) -> f64) -> Vec<f64> {
    r.samples.iter().map(|s| s.extra.get(key).copied().unwrap_or_else(|| 1e6 / rate(s))).collect()
}

fn point(x: f64, values: &[f64]) -> Point {
    let s = Summary::of(values);
    Point { x, y: s.mean, sd: s.sd }
}

/// The series of `results`: one per setting apart from memory, then the peer, then each
/// setting's floor, in the setting's colour (grey when there is one setting), labelled
/// `floor: posix_spawn + waitpid` and, with several settings, the setting's label.
fn series(results: &[ConfigResult<Params>]) -> Vec<Series> {
    let without_memory = |p: &Params| {
        let mut p = p.clone();
        let _ = p.set(Setting::Heap(0));
        let _ = p.set(Setting::External(0));
        p
    };
    let others: Vec<Params> = results.iter().map(|r| without_memory(&r.params)).collect();
    let mut out: Vec<Series> = Vec::new();
    let mut floors: Vec<Series> = Vec::new();
    let mut peer: Option<Series> = None;
    for r in results {
        let x = memory(&r.params);
        let setting = short_label(&without_memory(&r.params), &others);
        let single = setting == r.params.name();
        let label = if single { "wrt guest: spawn + wait".to_owned() } else { setting.clone() };
        let p = point(x, &micros_of(r, "us_per_spawn", |s| s.rate));
        let floor = point(x, &micros_of(r, "floor_us_per_spawn", |s| s.floor_rate));
        match out.iter().position(|s| s.label == label) {
            Some(i) => {
                out[i].points.push(p);
                floors[i].points.push(floor);
            }
            None => {
                let color = SERIES[out.len() % SERIES.len()];
                out.push(Series { label: label.clone(), color, dashed: false, points: vec![p] });
                let label = if single { FLOOR.to_owned() } else { format!("{FLOOR} ({setting})") };
                floors.push(Series { label, color, dashed: true, points: vec![floor] });
            }
        }
        if let Some(result) = &r.peer {
            let peer = peer.get_or_insert_with(|| Series {
                label: format!("peer: {}", result.name),
                color: PEER,
                dashed: false,
                points: Vec::new(),
            });
            if !peer.points.iter().any(|p| p.x == x) {
                peer.points.push(Point { x, y: 1e6 / result.rate, sd: 0.0 });
            }
        }
    }
    if let [floor] = floors.as_mut_slice() {
        floor.color = FLOOR_LINE;
    }
    out.extend(peer);
    out.extend(floors);
    for s in &mut out {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

fn x_desc(results: &[ConfigResult<Params>]) -> &'static str {
    let held = |r: &ConfigResult<Params>| r.params.workload().plot_memory().unwrap_or_default();
    let heap = results.iter().any(|r| held(r).0 > 0);
    let external = results.iter().any(|r| held(r).1 > 0);
    match (heap, external) {
        (true, false) => "touched guest linear memory",
        (false, true) => "live host buffers held by the guest",
        _ => "guest memory: touched linear memory + live host buffers",
    }
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    results: &[ConfigResult<Params>],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let series = series(results);
    let (head, body) = root.split_vertically(70);
    title(&head, "wrt bench spawn: time per spawn against guest memory", &subtitle(results))?;

    // The legend on the right, as wide as its longest label: each line, and the floors, by
    // name when there is one, else as one entry (each in its line's colour).
    let floors = series.iter().filter(|s| s.dashed).count();
    let mut entries: Vec<(Swatch, String)> = series
        .iter()
        .filter(|s| !s.dashed || floors == 1)
        .map(|s| (Swatch::Line(s.color, s.dashed), s.label.clone()))
        .collect();
    if floors > 1 {
        entries.push((Swatch::Line(FLOOR_LINE, true), "dashed: each line's own floor,".to_owned()));
    }
    let label_style = text(14, INK, HPos::Left, VPos::Center);
    let mut legend_width = 0;
    for (_, label) in &entries {
        legend_width = legend_width.max(root.estimate_text_size(label, &label_style).map_err(plot_err)?.0);
    }
    let (plot, legend) = body.split_horizontally(WIDTH - (legend_width + 56).clamp(160, 420));
    let mut y = 40;
    for (kind, label) in &entries {
        swatch(&legend, *kind, (8, y))?;
        legend.draw_text(label, &label_style, (40, y)).map_err(plot_err)?;
        y += 26;
    }
    let muted = text(13, MUTED, HPos::Left, VPos::Center);
    if floors > 1 {
        legend.draw_text("in its colour: posix_spawn +", &muted, (40, y - 6)).map_err(plot_err)?;
        legend.draw_text("waitpid, the same memory held", &muted, (40, y + 12)).map_err(plot_err)?;
        y += 40;
    }
    legend.draw_text("bars: ± 1 sd over runs", &muted, (8, y + 8)).map_err(plot_err)?;
    legend.draw_text("an arrowhead: past the axis", &muted, (8, y + 30)).map_err(plot_err)?;

    let points = || series.iter().flat_map(|s| s.points.iter());
    let lo = points().map(|p| (p.y - p.sd).max(p.y / 2.0)).fold(f64::INFINITY, f64::min) / 1.15;
    let hi = points().map(|p| p.y + p.sd).fold(1.0, f64::max) * 1.15;
    let mut xs: Vec<f64> = points().map(|p| p.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let x_max = xs.last().copied().unwrap_or(1.0).max(1.0);
    let x_range = -x_max * 0.04..x_max * 1.04;
    let (plot_w, plot_h) = plot.dim_in_pixel();
    let (plot_w, plot_h) = (f64::from(plot_w) - 110.0, f64::from(plot_h) - 70.0);
    let y_ticks = log_ticks(lo, hi, plot_h, 22.0);
    let x_ticks = spaced(&xs, x_max * 1.08, plot_w, 70.0);
    let mut chart = ChartBuilder::on(&plot)
        .margin_left(10)
        .margin_right(20)
        .margin_top(10)
        .x_label_area_size(52)
        .y_label_area_size(84)
        .build_cartesian_2d(Ticked::linear(x_range, x_ticks), Ticked::log(lo..hi, y_ticks))
        .map_err(plot_err)?;
    house_mesh(&mut chart.configure_mesh())
        .x_desc(x_desc(results))
        .y_desc("time per spawn (log scale)")
        .x_label_formatter(&|x| mib(*x))
        .y_label_formatter(&|y| micros(*y))
        .draw()
        .map_err(plot_err)?;
    // The floor first, so that the lines of wrt are drawn over it; error bars a few pixels
    // apart, so that bars of lines that meet stay apart.
    let count = series.len() as i32;
    for (i, s) in series.iter().enumerate().rev() {
        let style = s.color.stroke_width(2);
        let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        if s.dashed {
            chart.draw_series(DashedLineSeries::new(line, 8, 5, style)).map_err(plot_err)?;
        } else {
            chart.draw_series(LineSeries::new(line, style)).map_err(plot_err)?;
        }
        let dx = (2 * i as i32 - (count - 1)) * 3;
        for p in &s.points {
            if p.sd > 0.0 {
                let bar = Whisker::new(p.y, p.sd, lo, hi);
                let spec = chart.as_coord_spec();
                let center = spec.translate(&(p.x, p.y)).1;
                let top = spec.translate(&(p.x, bar.high)).1 - center;
                let bottom = spec.translate(&(p.x, bar.low)).1 - center;
                let style = s.color.stroke_width(1);
                let whisker = EmptyElement::at((p.x, p.y))
                    + PathElement::new(vec![(dx, top), (dx, bottom)], style)
                    + whisker::end((dx, top), bar.high_cut, -1, false, style)
                    + whisker::end((dx, bottom), bar.low_cut, 1, false, style);
                chart.draw_series([whisker]).map_err(plot_err)?;
            }
            chart.draw_series([Circle::new((p.x, p.y), 4, s.color.filled())]).map_err(plot_err)?;
        }
    }
    Ok(())
}

/// Points as (x, y, sd), for the tests.
#[cfg(test)]
pub(super) type TestPoints = Vec<(f64, f64, f64)>;

/// The series of `results` as labels and points, for the tests.
#[cfg(test)]
pub(super) fn series_for_test(results: &[ConfigResult<Params>]) -> Vec<(String, TestPoints)> {
    series(results).into_iter().map(|s| (s.label, s.points.iter().map(|p| (p.x, p.y, p.sd)).collect())).collect()
}

//! The spawn plot: time per spawn against guest memory (linear memory plus host buffers), one
//! line per setting, the floor (`posix_spawn` + `waitpid` in the bench process) dashed, the Node
//! peer, and the standard deviation over the runs as error bars. The latency axis is
//! logarithmic, with labelled ticks wherever there is room (600 µs, 800 µs, … where most lines
//! sit), and the memory axis is ticked at the measured sizes.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::shared;
use super::ticks::{Ticked, log_ticks, mib, micros, spaced};
use super::{FLOOR_LINE, INK, MUTED, PEER, SERIES, Swatch, WIDTH, house_mesh, plot_err, swatch, text, title};
use crate::BenchError;
use crate::params::{Params, Setting};
use crate::report::short_label;
use crate::runner::ConfigResult;
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
    dashed: bool,
    points: Vec<Point>,
}

/// Guest memory of a spawn configuration in MiB: linear memory plus host buffers.
fn memory(params: &Params) -> f64 {
    match params {
        Params::Spawn(p) => (p.heap + p.external) as f64 / MIB,
        _ => 0.0,
    }
}

/// How many different memory sizes `results` ran at.
pub(super) fn memory_sizes(results: &[ConfigResult]) -> usize {
    let mut sizes: Vec<f64> = results.iter().map(|r| memory(&r.params)).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes.len()
}

/// Mean and sd of the per-run `key` (µs), or of 1e6 / `rate` when a run lacks it.
fn micros_of(r: &ConfigResult, key: &str, rate: impl Fn(&crate::runner::Sample) -> f64) -> Vec<f64> {
    r.samples.iter().map(|s| s.extra.get(key).copied().unwrap_or_else(|| 1e6 / rate(s))).collect()
}

fn point(x: f64, values: &[f64]) -> Point {
    let s = Summary::of(values);
    Point { x, y: s.mean, sd: s.sd }
}

/// The series of `results`: one per setting apart from memory, then the peer, then the floor.
fn series(results: &[ConfigResult]) -> Vec<Series> {
    let without_memory = |p: &Params| {
        let mut p = p.clone();
        let _ = p.set(Setting::Heap(0));
        let _ = p.set(Setting::External(0));
        p
    };
    let others: Vec<Params> = results.iter().map(|r| without_memory(&r.params)).collect();
    let mut out: Vec<Series> = Vec::new();
    let mut floors: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut peer: Option<Series> = None;
    for r in results {
        let x = memory(&r.params);
        let mut label = short_label(&without_memory(&r.params), &others);
        if label == r.params.workload() {
            label = "wrt guest: spawn + wait".to_owned();
        }
        let p = point(x, &micros_of(r, "us_per_spawn", |s| s.rate));
        match out.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(p),
            None => {
                let color = SERIES[out.len() % SERIES.len()];
                out.push(Series { label, color, dashed: false, points: vec![p] });
            }
        }
        let floor = micros_of(r, "floor_us_per_spawn", |s| s.floor_rate);
        match floors.iter_mut().find(|(fx, _)| *fx == x) {
            Some((_, values)) => values.extend(floor),
            None => floors.push((x, floor)),
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
    out.extend(peer);
    out.push(Series {
        label: "floor: posix_spawn + waitpid".to_owned(),
        color: FLOOR_LINE,
        dashed: true,
        points: floors.iter().map(|(x, values)| point(*x, values)).collect(),
    });
    for s in &mut out {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

fn x_desc(results: &[ConfigResult]) -> &'static str {
    let heap = results.iter().any(|r| matches!(&r.params, Params::Spawn(p) if p.heap > 0));
    let external = results.iter().any(|r| matches!(&r.params, Params::Spawn(p) if p.external > 0));
    match (heap, external) {
        (true, false) => "touched guest linear memory",
        (false, true) => "live host buffers held by the guest",
        _ => "guest memory: touched linear memory + live host buffers",
    }
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    results: &[ConfigResult],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let series = series(results);
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let (head, body) = root.split_vertically(70);
    let runs = results[0].rate.n;
    title(
        &head,
        "wrt bench spawn: time per spawn against guest memory",
        &format!("{} · mean ± sd of {runs} run{}", shared(&all), if runs == 1 { "" } else { "s" }),
    )?;

    // The legend on the right, as wide as its longest label.
    let label_style = text(14, INK, HPos::Left, VPos::Center);
    let mut legend_width = 0;
    for s in &series {
        legend_width = legend_width.max(root.estimate_text_size(&s.label, &label_style).map_err(plot_err)?.0);
    }
    let (plot, legend) = body.split_horizontally(WIDTH - (legend_width + 56).clamp(160, 420));
    let mut y = 40;
    for s in &series {
        swatch(&legend, Swatch::Line(s.color, s.dashed), (8, y))?;
        legend.draw_text(&s.label, &label_style, (40, y)).map_err(plot_err)?;
        y += 26;
    }
    legend
        .draw_text("bars: ± 1 sd over runs", &text(13, MUTED, HPos::Left, VPos::Center), (8, y + 8))
        .map_err(plot_err)?;

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
                let spec = chart.as_coord_spec();
                let center = spec.translate(&(p.x, p.y)).1;
                let top = spec.translate(&(p.x, p.y + p.sd)).1 - center;
                let bottom = spec.translate(&(p.x, (p.y - p.sd).max(lo))).1 - center;
                let bar = s.color.stroke_width(1);
                let whisker = EmptyElement::at((p.x, p.y))
                    + PathElement::new(vec![(dx, top), (dx, bottom)], bar)
                    + PathElement::new(vec![(dx - 4, top), (dx + 4, top)], bar)
                    + PathElement::new(vec![(dx - 4, bottom), (dx + 4, bottom)], bar);
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
pub(super) fn series_for_test(results: &[ConfigResult]) -> Vec<(String, TestPoints)> {
    series(results).into_iter().map(|s| (s.label, s.points.iter().map(|p| (p.x, p.y, p.sd)).collect())).collect()
}

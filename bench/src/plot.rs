//! `--plot FILE.png`: spawn latency against heap size, one line per strategy / DONTFORK setting
//! (and the floor); ops/s and collections per configuration for the buffer workload; runs/s for
//! startup. Text is drawn with DejaVu Sans, built into the binary, so no system font is needed.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use crate::BenchError;
use crate::params::Params;
use crate::report::{short_label, unit};
use crate::runner::ConfigResult;

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1000, 640);
/// Series colours, readable on white.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(60, 60, 60),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn register_font() -> Result<(), BenchError> {
    plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| BenchError::Plot("the built-in font is invalid".into()))
}

fn plot_err(e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot(e.to_string())
}

/// Draws `results` into the PNG file `path`.
///
/// # Errors
///
/// When there is nothing to draw, or drawing or writing the file fails.
pub fn draw(results: &[ConfigResult], path: &Path) -> Result<(), BenchError> {
    let Some(first) = results.first() else {
        return Err(BenchError::Plot("no results to plot".into()));
    };
    register_font()?;
    match first.params {
        Params::Spawn(_) => spawn_lines(results, path),
        _ => bars(results, path),
    }
}

/// Heap size in MiB (linear memory plus host buffers) of a spawn configuration.
fn heap_mib(params: &Params) -> f64 {
    match params {
        Params::Spawn(p) => (p.heap + p.external) as f64 / f64::from(1 << 20),
        _ => 0.0,
    }
}

fn spawn_lines(results: &[ConfigResult], path: &Path) -> Result<(), BenchError> {
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    // One series per configuration apart from its heap size.
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut floor: BTreeMap<u64, f64> = BTreeMap::new();
    for r in results {
        let mut without_heap = r.params.clone();
        let _ = without_heap.set("heap", "0");
        let _ = without_heap.set("external", "0");
        let others: Vec<Params> = all
            .iter()
            .map(|p| {
                let mut p = p.clone();
                let _ = p.set("heap", "0");
                let _ = p.set("external", "0");
                p
            })
            .collect();
        let label = short_label(&without_heap, &others);
        let x = heap_mib(&r.params);
        series.entry(label).or_default().push((x, 1e6 / r.rate.mean));
        floor.entry(x as u64).or_insert(1e6 / r.floor_rate.mean);
        if let Some(peer) = &r.peer {
            // The peer does not depend on wrt's settings: one point per heap size.
            let points = series.entry(format!("peer: {}", peer.name)).or_default();
            if !points.iter().any(|p| p.0 == x) {
                points.push((x, 1e6 / peer.rate));
            }
        }
    }
    series.insert("floor: posix_spawn + waitpid".into(), floor.iter().map(|(&x, &y)| (x as f64, y)).collect());
    let x_max = series.values().flatten().map(|p| p.0).fold(1.0, f64::max) * 1.05;
    // Latencies span orders of magnitude (fork without DONTFORK): a log scale keeps the flat
    // lines apart.
    let y_max = series.values().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.5;
    let y_min = series.values().flatten().map(|p| p.1).fold(f64::INFINITY, f64::min).max(1.0) / 1.5;

    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("wrt bench spawn: latency against heap size", (FONT, 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max, (y_min..y_max).log_scale())
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("guest heap: touched linear memory + host buffers (MiB)")
        .y_desc("µs per spawn (log scale)")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FONT, 15))
        .draw()
        .map_err(plot_err)?;
    for (i, (label, mut points)) in series.into_iter().enumerate() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = color(i);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(plot_err)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(points.into_iter().map(|p| Circle::new(p, 4, color.filled()))).map_err(plot_err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 15))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)
}

/// One bar a configuration (and its peer): the rate; for the buffer workload, a second panel
/// with young and full collections.
fn bars(results: &[ConfigResult], path: &Path) -> Result<(), BenchError> {
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    // (label, rate, (young, full) collections)
    type Bar = (String, f64, Option<(f64, f64)>);
    let mut bars: Vec<Bar> = Vec::new();
    for r in results {
        let collections = match (r.extra.get("young_collections"), r.extra.get("full_collections")) {
            (Some(y), Some(f)) => Some((*y, *f)),
            _ => None,
        };
        bars.push((short_label(&r.params, &all), r.rate.mean, collections));
        if let Some(peer) = &r.peer {
            let collections = match (peer.extra.get("young_collections"), peer.extra.get("full_collections")) {
                (Some(y), Some(f)) => Some((*y, *f)),
                _ => None,
            };
            bars.push((peer.name.clone(), peer.rate, collections));
        }
    }
    let with_collections = bars.iter().any(|b| b.2.is_some());
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (top, bottom) =
        if with_collections { root.split_vertically(SIZE.1 * 3 / 5) } else { (root.clone(), root.clone()) };
    let title = format!("wrt bench {}: {}", results[0].params.workload(), unit(&results[0].params));
    let rates: Vec<(String, f64, RGBColor)> =
        bars.iter().enumerate().map(|(i, b)| (b.0.clone(), b.1, color(i))).collect();
    draw_bars(&top, &title, unit(&results[0].params), &rates)?;
    if with_collections {
        // Two bars a configuration: young (blue), then full (red), named once.
        let pairs: Vec<(String, f64, RGBColor)> = bars
            .iter()
            .flat_map(|b| {
                let (young, full) = b.2.unwrap_or_default();
                [(b.0.clone(), young, color(0)), (String::new(), full, color(1))]
            })
            .collect();
        draw_bars(&bottom, "collections: young (blue) and full (red)", "collections", &pairs)?;
    }
    root.present().map_err(plot_err)
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_desc: &str,
    bars: &[(String, f64, RGBColor)],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let y_max = bars.iter().map(|b| b.1).fold(1.0, f64::max) * 1.15;
    let n = bars.len();
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d((0..n.max(2) - 1).into_segmented(), 0.0..y_max)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .label_style((FONT, 13))
        .draw()
        .map_err(plot_err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, value, color))| {
            let mut bar =
                Rectangle::new([(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), *value)], color.filled());
            bar.set_margin(0, 0, 8, 8);
            bar
        }))
        .map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::params::{BufferGuest, BufferParams, Method, SpawnParams, Strategy};
    use crate::runner::Sample;
    use crate::stats::Summary;

    fn result(params: Params, rate: f64) -> ConfigResult {
        ConfigResult {
            samples: vec![Sample { rate, floor_rate: 2000.0, extra: BTreeMap::new() }],
            rate: Summary::of(&[rate]),
            floor_rate: Summary::of(&[2000.0]),
            of_floor: rate / 2000.0,
            extra: BTreeMap::from([("young_collections".into(), 80.0), ("full_collections".into(), 2.0)]),
            params,
            peer: None,
        }
    }

    #[test]
    fn plots_are_png_files() {
        let dir = tempfile::tempdir().unwrap();
        let spawn = |heap, strategy| {
            Params::Spawn(SpawnParams { n: 1, heap, external: 0, strategy, dontfork: true, method: Method::Spawn })
        };
        let results: Vec<ConfigResult> = [(0, Strategy::PosixSpawn, 1400.0), (600 << 20, Strategy::PosixSpawn, 1390.0)]
            .into_iter()
            .chain([(0, Strategy::ForkExec, 1000.0), (600 << 20, Strategy::ForkExec, 90.0)])
            .map(|(heap, strategy, rate)| result(spawn(heap, strategy), rate))
            .collect();
        let path = dir.path().join("spawn.png");
        draw(&results, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");

        let buffer = |guest| {
            Params::Buffer(BufferParams {
                n: 1,
                body_size: 1,
                guest,
                gc: true,
                gc_young: 1,
                gc_soft_limit: 1,
                gc_growth: 2.0,
            })
        };
        let results = vec![result(buffer(BufferGuest::Rust), 90000.0), result(buffer(BufferGuest::Externref), 60000.0)];
        let path = dir.path().join("buffer.png");
        draw(&results, &path).unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
        assert!(draw(&[], &path).is_err());
    }
}

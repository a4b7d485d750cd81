//! `--plot FILE.png` or `FILE.svg`: spawn latency against guest memory, one line per setting
//! with its own floor and error bars (sd); for every other workload (and spawn runs at a single
//! memory size), one bar per configuration over its floor, with the other sides its workload
//! measures beside it (wasmtime, the core module, host-spawn alone), on a logarithmic axis
//! when rows differ tenfold, and young and full collections below for the buffer workload. The
//! figures and ratios are those of the table ([`crate::figures`]). Text is drawn with DejaVu
//! Sans, built into the binary, so no system font is needed: in PNG files as pixels, in SVG
//! files as outlines.

mod bars;
mod compared;
mod lines;
mod text;
mod ticks;
mod whisker;

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use crate::workload::compared::{BROWN, Baseline, CYAN, PURPLE, Side};

use crate::BenchError;
use crate::params::Params;
use crate::result::ConfigResult;

const FONT: &str = "sans-serif";
/// Width of every plot, in pixels.
const WIDTH: u32 = 1000;

/// The colour of wrt's own bars.
const WRT: RGBColor = RGBColor(44, 160, 44);
/// The colour of the peer (Node).
const PEER: RGBColor = RGBColor(255, 127, 14);
/// Young collections.
const YOUNG: RGBColor = RGBColor(31, 119, 180);
/// Full collections.
const FULL: RGBColor = RGBColor(214, 39, 40);
/// The floor: a light bar with a dark outline, or a dark dashed line.
const FLOOR_FILL: RGBColor = RGBColor(228, 228, 228);
const FLOOR_LINE: RGBColor = RGBColor(90, 90, 90);
/// Text and axes.
const INK: RGBColor = RGBColor(40, 40, 40);
const MUTED: RGBColor = RGBColor(100, 100, 100);
/// Grid lines.
const GRID: RGBColor = RGBColor(226, 226, 226);
/// The lines of the spawn plot, after the floor (dark) and the peer ([`PEER`]): none is the
/// blue or red of young and full collections.
const SERIES: [RGBColor; 7] = [
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(31, 119, 180),
];

/// The image formats `--plot` writes, chosen by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `.png`
    Png,
    /// `.svg`, text drawn as outlines
    Svg,
}

impl Format {
    /// The format of `path`, by its extension (`.png` or `.svg`, any case).
    ///
    /// # Errors
    ///
    /// [`BenchError::PlotFormat`] for any other extension or none.
    pub fn of(path: &Path) -> Result<Self, BenchError> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("png") => Ok(Format::Png),
            Some("svg") => Ok(Format::Svg),
            _ => Err(BenchError::PlotFormat { path: path.to_owned() }),
        }
    }
}

/// Checks, before any run, that a plot can be written to `path`: its extension names a
/// [`Format`] and its directory exists.
///
/// # Errors
///
/// [`BenchError::PlotFormat`] or [`BenchError::PlotDir`].
pub fn check_path(path: &Path) -> Result<Format, BenchError> {
    let format = Format::of(path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(BenchError::PlotDir { dir: PathBuf::from(dir) });
    }
    Ok(format)
}

fn register_font() -> Result<(), BenchError> {
    plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| BenchError::Plot("the built-in font is invalid".into()))
}

fn plot_err(e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot(e.to_string())
}

/// The house style of every chart's mesh: ink labels, light grid lines only at labelled ticks,
/// muted axes, short tick marks.
fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, 14).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(MUTED)
        .set_all_tick_mark_size(4)
}

/// Text of `size` pixels in `color`, anchored at `pos`.
fn text(size: u32, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&color).pos(Pos::new(h, v))
}

/// How one plot is laid out: which kind, and its height.
enum Kind {
    Lines,
    Bars,
}

fn kind(results: &[ConfigResult<Params>]) -> Kind {
    if results[0].params.workload().plot_memory().is_some() && lines::memory_sizes(results) >= 2 {
        Kind::Lines
    } else {
        Kind::Bars
    }
}

/// Draws `results` into `path`, a PNG or SVG file by its extension.
///
/// # Errors
///
/// When there is nothing to draw, the extension is neither `.png` nor `.svg`, or drawing or
/// writing the file fails.
pub fn draw(results: &[ConfigResult<Params>], path: &Path) -> Result<(), BenchError> {
    let format = Format::of(path)?;
    if results.is_empty() {
        return Err(BenchError::Plot("no results to plot".into()));
    }
    register_font()?;
    let kind = kind(results);
    let size = match kind {
        Kind::Lines => lines::SIZE,
        Kind::Bars => (WIDTH, bars::height(results)?),
    };
    match format {
        Format::Png => {
            let root = text::GlyphText::pixels(BitMapBackend::new(path, size)).into_drawing_area();
            render(&root, &kind, results)?;
            root.present().map_err(plot_err)
        }
        Format::Svg => {
            let mut out = String::new();
            {
                let root = text::GlyphText::outlines(SVGBackend::with_string(&mut out, size)).into_drawing_area();
                render(&root, &kind, results)?;
                root.present().map_err(plot_err)?;
            }
            std::fs::write(path, text::outline(&out))
                .map_err(|source| BenchError::Write { path: path.to_owned(), source })
        }
    }
}

fn render<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    kind: &Kind,
    results: &[ConfigResult<Params>],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(plot_err)?;
    match kind {
        Kind::Lines => lines::draw(root, results),
        Kind::Bars => bars::draw(root, results),
    }
}

/// The parameters every configuration of `all` shares, as `key=value` pairs.
fn shared(all: &[Params]) -> String {
    let line = crate::report::common_line(all);
    line.split_once(": ").map_or(line.clone(), |(_, pairs)| pairs.to_owned())
}

/// The line under the title: the parameters every configuration shares (or, when each of them
/// varies, what the workload runs), and what the bars or points are.
fn subtitle(results: &[ConfigResult<Params>]) -> String {
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut what = shared(&all);
    if what.is_empty() {
        compared::what(&all[0]).clone_into(&mut what);
    }
    let runs = results[0].rate.n;
    format!("{what} · {} ± sd of {runs} run{}", all[0].workload().centre().name(), if runs == 1 { "" } else { "s" })
}

/// The title band: `title` and, below it in grey, `subtitle`.
fn title<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str, subtitle: &str) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let center = i32::try_from(w / 2).unwrap_or(0);
    area.draw_text(title, &text(22, INK, HPos::Center, VPos::Top), (center, 10)).map_err(plot_err)?;
    area.draw_text(subtitle, &text(14, MUTED, HPos::Center, VPos::Top), (center, 40)).map_err(plot_err)?;
    Ok(())
}

/// A swatch in a legend.
#[derive(Clone, Copy)]
enum Swatch {
    /// A filled box.
    Fill(RGBColor),
    /// A light box with a dark outline (the floor's bar).
    Outline,
    /// A line, dashed or not, with a dot.
    Line(RGBColor, bool),
}

/// Draws `swatch` in the 24 × 14 box whose left middle is `(x, y)`.
fn swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    match swatch {
        Swatch::Fill(color) => area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], color.filled())),
        Swatch::Outline => area
            .draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], FLOOR_FILL.filled()))
            .and_then(|()| area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], FLOOR_LINE.stroke_width(1)))),
        Swatch::Line(color, dashed) => {
            let style = color.stroke_width(2);
            let segments: Vec<(i32, i32)> = if dashed { vec![(0, 7), (10, 17), (20, 24)] } else { vec![(0, 24)] };
            segments
                .into_iter()
                .try_for_each(|(a, b)| area.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], style)))
                .and_then(|()| area.draw(&Circle::new((x + 12, y), 3, color.filled())))
        }
    }
    .map_err(plot_err)
}

/// Pixels from one line of a legend to the next.
const LEGEND_LINE: u32 = 26;
/// Pixels between two items on a line of a legend.
const LEGEND_GAP: i32 = 28;

fn legend_style() -> TextStyle<'static> {
    text(14, INK, HPos::Left, VPos::Center)
}

/// The width of each item of a legend: its swatch and its label.
fn legend_widths(items: &[(Swatch, String)]) -> Result<Vec<i32>, BenchError> {
    let font = legend_style().font;
    items
        .iter()
        .map(|(_, label)| font.box_size(label).map(|(w, _)| 30 + i32::try_from(w).unwrap_or(0)).map_err(plot_err))
        .collect()
}

/// How a legend of `items` breaks into lines `width` pixels wide: the items of each line.
fn legend_lines(items: &[(Swatch, String)], width: u32) -> Result<Vec<std::ops::Range<usize>>, BenchError> {
    let widths = legend_widths(items)?;
    let room = i32::try_from(width).unwrap_or(i32::MAX) - 40;
    let mut lines = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, w) in widths.iter().enumerate() {
        if i > start && used + LEGEND_GAP + w > room {
            lines.push(start..i);
            (start, used) = (i, 0);
        }
        used += if i > start { LEGEND_GAP + w } else { *w };
    }
    if start < items.len() {
        lines.push(start..items.len());
    }
    Ok(lines)
}

/// The height of a legend of `items` in a plot `width` pixels wide.
fn legend_height(items: &[(Swatch, String)], width: u32) -> Result<u32, BenchError> {
    let lines = u32::try_from(legend_lines(items, width)?.len()).unwrap_or(1).max(1);
    Ok(30 + LEGEND_LINE * (lines - 1))
}

/// A legend of `items` in `area`, each line centred, as many lines as it takes.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, items: &[(Swatch, String)]) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let style = legend_style();
    let widths = legend_widths(items)?;
    let (w, _) = area.dim_in_pixel();
    let mut y = 12;
    for line in legend_lines(items, w)? {
        let total: i32 =
            widths[line.clone()].iter().sum::<i32>() + LEGEND_GAP * (i32::try_from(line.len()).unwrap_or(1) - 1);
        let mut x = (i32::try_from(w).unwrap_or(0) - total).max(0) / 2;
        for ((kind, label), width) in items[line.clone()].iter().zip(&widths[line]) {
            swatch(area, *kind, (x, y))?;
            area.draw_text(label, &style, (x + 30, y)).map_err(plot_err)?;
            x += width + LEGEND_GAP;
        }
        y += i32::try_from(LEGEND_LINE).unwrap_or(26);
    }
    Ok(())
}

#[cfg(test)]
mod tests;

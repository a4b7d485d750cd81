//! Tick positions and the numbers on them: `250k` rather than `250000.0`, `600 µs` and `2 ms`
//! on the logarithmic latency axis, sizes in MiB and GiB.

/// `value` with at most two decimals, trailing zeros dropped.
fn trim(value: f64) -> String {
    let s = format!("{value:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_owned() } else { s.to_owned() }
}

/// The divisor and suffix for numbers of the size of `value`: k, M or none.
fn scale(value: f64) -> (f64, &'static str) {
    match value.abs() {
        v if v >= 1e6 => (1e6, "M"),
        v if v >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    }
}

/// A tick label: `0`, `250`, `50k`, `1.5M`.
pub(super) fn si(value: f64) -> String {
    let (div, suffix) = scale(value);
    format!("{}{suffix}", trim(value / div))
}

/// A mean and its standard deviation in the mean's unit, to about three significant figures:
/// `125.7k ± 0.5k`, `205 ± 9.3`.
pub(super) fn mean_sd(mean: f64, sd: f64) -> String {
    let (div, suffix) = scale(mean);
    let m = mean / div;
    let decimals = if m.abs() >= 100.0 && suffix.is_empty() {
        0
    } else if m.abs() >= 10.0 {
        1
    } else {
        2
    };
    if sd > 0.0 {
        format!("{m:.decimals$}{suffix} ± {:.decimals$}{suffix}", sd / div)
    } else {
        format!("{m:.decimals$}{suffix}")
    }
}

/// Microseconds as a tick label: `600 µs`, `1 ms`, `1.5 ms`, `50 ms`, `1.2 s`.
pub(super) fn micros(us: f64) -> String {
    if us < 1e3 {
        format!("{} µs", trim(us))
    } else if us < 1e6 {
        format!("{} ms", trim(us / 1e3))
    } else {
        format!("{} s", trim(us / 1e6))
    }
}

/// MiB as a tick label: `0`, `600 MiB`, `2 GiB`, `1.5 GiB`.
pub(super) fn mib(value: f64) -> String {
    if value == 0.0 {
        "0".to_owned()
    } else if value >= 1024.0 {
        format!("{} GiB", trim(value / 1024.0))
    } else {
        format!("{} MiB", trim(value))
    }
}

/// Ticks of a logarithmic axis from `lo` to `hi` drawn over `pixels`: round values first (1,
/// then 2 and 5, then 3, 4, 6 and 8, then 1.5, 7 and 9 of each decade), each kept only if it is
/// at least `gap` pixels from every tick kept before it. Sorted.
pub(super) fn log_ticks(lo: f64, hi: f64, pixels: f64, gap: f64) -> Vec<f64> {
    const TIERS: [&[f64]; 4] = [&[1.0], &[2.0, 5.0], &[3.0, 4.0, 6.0, 8.0], &[1.5, 7.0, 9.0]];
    if !(lo > 0.0 && hi > lo && pixels > 0.0) {
        return Vec::new();
    }
    let per_decade = pixels / (hi / lo).log10();
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut ticks: Vec<f64> = Vec::new();
    for tier in TIERS {
        for decade in first..=last {
            for mantissa in tier {
                let value = mantissa * 10f64.powi(decade);
                let clear = ticks.iter().all(|t| (value / t).log10().abs() * per_decade >= gap);
                if (lo..=hi).contains(&value) && clear {
                    ticks.push(value);
                }
            }
        }
    }
    ticks.sort_by(f64::total_cmp);
    ticks
}

/// Of the sorted `values` on a linear axis from 0 to `max` over `pixels`, those at least `gap`
/// pixels apart, smallest first.
pub(super) fn spaced(values: &[f64], max: f64, pixels: f64, gap: f64) -> Vec<f64> {
    let mut kept: Vec<f64> = Vec::new();
    for &v in values {
        if kept.last().is_none_or(|last| (v - last) / max * pixels >= gap) {
            kept.push(v);
        }
    }
    kept
}

/// An axis from `lo` to `hi`, linear or logarithmic, ticked exactly at `ticks` (plotters' own
/// key points cannot be both chosen and formatted).
#[derive(Debug, Clone)]
pub(super) struct Ticked {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Ticked {
    pub(super) fn linear(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Self {
        Self { lo: range.start, hi: range.end, log: false, ticks }
    }

    pub(super) fn log(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Self {
        Self { lo: range.start, hi: range.end, log: true, ticks }
    }
}

impl plotters::coord::ranged1d::Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = if self.log {
            (value.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (value - self.lo) / (self.hi - self.lo)
        };
        let t = if t.is_finite() { t } else { 0.0 };
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Ticks of a linear axis from 0 to `max` drawn over `pixels`: every multiple of the smallest
/// round step (1, 2 or 5 times a power of ten) that leaves at least `gap` pixels between ticks.
pub(super) fn linear_ticks(max: f64, pixels: f64, gap: f64) -> Vec<f64> {
    if !(max > 0.0 && pixels > 0.0) {
        return vec![0.0];
    }
    let least = max * gap / pixels;
    let power = 10f64.powf(least.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|s| *s >= least).unwrap_or(10.0 * power);
    (0..).map(|i| f64::from(i) * step).take_while(|t| *t <= max).collect()
}

/// The largest round value (1, 2 or 5 times a power of ten) at most `value`: where a
/// logarithmic axis whose smallest value is `value` starts.
pub(super) fn round_down(value: f64) -> f64 {
    if !(value > 0.0 && value.is_finite()) {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [5.0, 2.0, 1.0].into_iter().map(|m| m * power).find(|v| *v <= value).unwrap_or(power)
}

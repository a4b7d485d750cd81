//! The one figure a report gives for each measurement of a configuration, and every ratio
//! between two of them, computed one way for the tables, the goal lines, `of_floor` in `--json`
//! and the plots.
//!
//! A figure is the central value of the measurement over the runs: the median for the
//! workloads whose runs are batches or whose ratios are read against goals (instantiate,
//! component-spawn, component-startup, spawn-overhead, real: one run hit by a burst of load on a
//! shared machine does not move it), the mean for the others. A ratio is always the quotient
//! of two figures, so that dividing the two columns it compares gives it back. The median of an
//! even number of runs is the geometric mean of the middle two, so that the median of rates is
//! exactly the inverse of the median of times: `of floor` is then `1 / time/floor`.

use crate::sample::Sample;

/// How the runs of a configuration are summed up into one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Centre {
    /// The arithmetic mean.
    Mean,
    /// The median (of an even number of values, the geometric mean of the middle two).
    Median,
}

impl Centre {
    /// `mean` or `median`.
    pub fn name(self) -> &'static str {
        match self {
            Centre::Mean => "mean",
            Centre::Median => "median",
        }
    }

    /// The centre of `values`, or `None` when there are none.
    pub fn of_values(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        Some(match self {
            Centre::Mean => values.iter().sum::<f64>() / values.len() as f64,
            Centre::Median => {
                let mut sorted = values.to_vec();
                sorted.sort_by(f64::total_cmp);
                let mid = sorted.len() / 2;
                if sorted.len().is_multiple_of(2) {
                    let (a, b) = (sorted[mid - 1], sorted[mid]);
                    // The geometric mean keeps median(1 / x) = 1 / median(x); values that are
                    // not positive and finite (a subtraction that left nothing) get the
                    // arithmetic one.
                    if a > 0.0 && b.is_finite() { (a * b).sqrt() } else { (a + b) / 2.0 }
                } else {
                    sorted[mid]
                }
            }
        })
    }
}

/// The figure of the measurement `get` over `samples`, summed up by `centre` (a workload's
/// [`Workload::centre`](crate::Workload::centre)).
pub fn figure_of(centre: Centre, samples: &[Sample], get: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter_map(get).collect();
    centre.of_values(&values)
}

/// `of / to`, or `None` when either is missing or the quotient is not a finite number.
pub fn ratio(of: Option<f64>, to: Option<f64>) -> Option<f64> {
    let q = of? / to?;
    q.is_finite().then_some(q)
}

/// The share of the floor's rate that `samples` reached, summed up by `centre`: the figure of
/// the rates over that of the floor's rates (1 is the floor, 0.5 takes twice as long), or 0 when
/// it is not a number.
pub fn of_floor(centre: Centre, samples: &[Sample]) -> f64 {
    ratio(figure_of(centre, samples, |s| Some(s.rate)), figure_of(centre, samples, |s| Some(s.floor_rate)))
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_inverses_is_the_inverse_of_the_median() {
        for values in [&[4.0, 1.0, 2.0][..], &[4.0, 1.0, 2.0, 3.0], &[5.0, 0.5]] {
            let inverse: Vec<f64> = values.iter().map(|v| 1.0 / v).collect();
            let (m, mi) = (Centre::Median.of_values(values).unwrap(), Centre::Median.of_values(&inverse).unwrap());
            assert!((m * mi - 1.0).abs() < 1e-12, "{values:?}: {m} and {mi}");
        }
        assert_eq!(Centre::Median.of_values(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(Centre::Median.of_values(&[1.0, 4.0]), Some(2.0));
        assert_eq!(Centre::Median.of_values(&[0.0, 4.0]), Some(2.0));
        assert_eq!(Centre::Mean.of_values(&[1.0, 4.0]), Some(2.5));
        assert_eq!(Centre::Mean.of_values(&[]), None);
    }

    #[test]
    fn a_ratio_of_nothing_is_none() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
    }
}

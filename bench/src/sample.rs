//! One run of a workload: its rate, its floor's rate, and its own figures.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::Summary;

/// One run of one configuration (or, in a suite, of one runner).
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Operations per second (spawns, burst iterations, `wrt run`s).
    pub rate: f64,
    /// Operations per second of the floor, measured in the same run; NaN for a suite's runner,
    /// whose floor is a runner of its own.
    pub floor_rate: f64,
    /// Figures of the workload: collections, peak bytes, microseconds per spawn, …; a figure
    /// that does not apply to a run is left out.
    pub extra: BTreeMap<String, f64>,
}

impl Sample {
    /// The median of each figure over `samples` (the runs of one configuration or runner): of
    /// the rates, of the floor's rates, and of each extra figure over the runs that have it.
    ///
    /// # Panics
    ///
    /// When `samples` is empty.
    pub fn median(samples: &[Sample]) -> Sample {
        let median = |values: Vec<f64>| Summary::median(&values);
        let mut keys: Vec<&String> = samples.iter().flat_map(|s| s.extra.keys()).collect();
        keys.sort();
        keys.dedup();
        let extra = keys
            .into_iter()
            .map(|key| (key.clone(), median(samples.iter().filter_map(|s| s.extra.get(key).copied()).collect())))
            .collect();
        Sample {
            rate: median(samples.iter().map(|s| s.rate).collect()),
            floor_rate: median(samples.iter().map(|s| s.floor_rate).collect()),
            extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_sample_takes_each_figure_over_the_runs_that_have_it() {
        let sample = |rate: f64, extra: &[(&str, f64)]| Sample {
            rate,
            floor_rate: 2.0 * rate,
            extra: extra.iter().map(|&(k, v)| (k.to_owned(), v)).collect(),
        };
        let median = Sample::median(&[
            sample(3.0, &[("young", 1.0)]),
            sample(1.0, &[("young", 5.0), ("rss", 7.0)]),
            sample(2.0, &[("young", 3.0)]),
        ]);
        assert_eq!((median.rate, median.floor_rate), (2.0, 4.0));
        assert_eq!(median.extra, BTreeMap::from([("rss".to_owned(), 7.0), ("young".to_owned(), 3.0)]));
    }
}

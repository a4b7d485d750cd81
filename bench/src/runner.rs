//! Running configurations: every run of a workload measures its floor in the same run, runs of
//! several configurations are interleaved (A B A B …) so that drift on a shared machine hits
//! them alike, and a progress bar shows how far it got.

use std::collections::BTreeMap;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::BenchError;
use crate::params::Params;
use crate::peers::{self, PeerResult};
use crate::stats::{Comparison, Summary};

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

/// All runs of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigResult {
    /// The configuration.
    pub params: Params,
    /// Its runs, in order.
    pub samples: Vec<Sample>,
    /// Summary of the rates.
    pub rate: Summary,
    /// Summary of the floor's rates.
    pub floor_rate: Summary,
    /// How many times the floor's rate the workload reached: the figure of the rates over that
    /// of the floor's rates ([`crate::figures`]: the mean or the median over the runs, as the
    /// table prints them); 1 is the floor, 0.5 takes twice as long.
    pub of_floor: f64,
    /// Means of the extra figures over the runs.
    pub extra: BTreeMap<String, f64>,
    /// The peer (Node) running the same workload in the same run, with `--peers`.
    pub peer: Option<PeerResult>,
}

impl ConfigResult {
    /// The result of `samples` of `params`, with `peer`'s.
    pub(crate) fn new(params: Params, samples: Vec<Sample>, peer: Option<PeerResult>) -> Self {
        let rates: Vec<f64> = samples.iter().map(|s| s.rate).collect();
        let floors: Vec<f64> = samples.iter().map(|s| s.floor_rate).collect();
        let of_floor = crate::figures::of_floor(&params, &samples);
        let mut extra: BTreeMap<String, f64> = BTreeMap::new();
        for sample in &samples {
            for (key, value) in &sample.extra {
                *extra.entry(key.clone()).or_default() += value / samples.len() as f64;
            }
        }
        Self { params, rate: Summary::of(&rates), floor_rate: Summary::of(&floors), of_floor, extra, samples, peer }
    }
}

/// Two configurations compared.
#[derive(Debug, Clone, Serialize)]
pub struct CompareResult {
    /// A (the first `--compare` value).
    pub a: ConfigResult,
    /// B (the second).
    pub b: ConfigResult,
    /// B's rates against A's.
    pub comparison: Comparison,
}

/// How many runs, and whether to show progress.
#[derive(Debug, Clone)]
pub struct Bench {
    runs: u32,
    progress: bool,
    peers: bool,
}

impl Bench {
    /// `runs` runs of each configuration (at least 1), with a progress bar on a terminal and no
    /// peers.
    pub fn new(runs: u32) -> Self {
        Self { runs: runs.max(1), progress: true, peers: false }
    }

    /// Whether to draw a progress bar (only ever drawn on a terminal).
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Whether to run the Node peer of each configuration too (when `node` is on PATH).
    pub fn peers(mut self, on: bool) -> Self {
        self.peers = on;
        self
    }

    /// One run of `params` with its floor.
    ///
    /// # Errors
    ///
    /// When the sandbox, the guest or the floor fails.
    pub fn run_once(params: &Params) -> Result<Sample, BenchError> {
        params.workload().run_once()
    }

    fn bar(&self, configs: usize) -> ProgressBar {
        let total = u64::from(self.runs) * configs as u64;
        if !self.progress || total < 2 {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} ({eta} left)")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix("wrt bench");
        bar
    }

    /// Runs every configuration `runs` times, interleaved round by round.
    ///
    /// # Errors
    ///
    /// The first failure of a run or a peer.
    pub fn run_all(&self, configs: &[Params]) -> Result<Vec<ConfigResult>, BenchError> {
        let bar = self.bar(configs.len());
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); configs.len()];
        for _ in 0..self.runs {
            for (config, out) in configs.iter().zip(&mut samples) {
                bar.set_message(config.to_string());
                out.push(Self::run_once(config)?);
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        let mut results = Vec::with_capacity(configs.len());
        for (config, samples) in configs.iter().zip(samples) {
            let peer = if self.peers { peers::run(config)? } else { None };
            results.push(ConfigResult::new(config.clone(), samples, peer));
        }
        Ok(results)
    }

    /// Runs A and B interleaved (A B A B …) and compares their rates.
    ///
    /// # Errors
    ///
    /// As [`Bench::run_all`].
    pub fn compare(&self, a: &Params, b: &Params) -> Result<CompareResult, BenchError> {
        let mut results = self.run_all(&[a.clone(), b.clone()])?.into_iter();
        let (Some(a), Some(b)) = (results.next(), results.next()) else {
            unreachable!("run_all returns one result per configuration");
        };
        let rates = |r: &ConfigResult| r.samples.iter().map(|s| s.rate).collect::<Vec<_>>();
        let comparison = Comparison::welch(&rates(&a), &rates(&b));
        Ok(CompareResult { a, b, comparison })
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

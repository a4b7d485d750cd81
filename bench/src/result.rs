//! All runs of one configuration, summed up: what a report reads, and what `--json` prints for
//! each configuration.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::figures::{self, Centre};
use crate::peers::PeerResult;
use crate::sample::Sample;
use crate::stats::Summary;

/// All runs of one configuration. `P` is the configuration: [`Params`](crate::Params) in what
/// `wrt bench` runs and reports, a workload's view of it (`&dyn Workload`) in the hooks with
/// which a workload reads its own results ([`Workload::notes`](crate::Workload::notes)).
#[derive(Debug, Clone, Serialize)]
pub struct ConfigResult<P> {
    /// The configuration.
    pub params: P,
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
    /// How the workload sums up its runs into one figure.
    #[serde(skip)]
    pub centre: Centre,
}

impl<P> ConfigResult<P> {
    /// The result of `samples` of `params`, whose workload sums up its runs by `centre`, with
    /// `peer`'s.
    pub(crate) fn summed(params: P, centre: Centre, samples: Vec<Sample>, peer: Option<PeerResult>) -> Self {
        let rates: Vec<f64> = samples.iter().map(|s| s.rate).collect();
        let floors: Vec<f64> = samples.iter().map(|s| s.floor_rate).collect();
        let of_floor = figures::of_floor(centre, &samples);
        let mut extra: BTreeMap<String, f64> = BTreeMap::new();
        for sample in &samples {
            for (key, value) in &sample.extra {
                *extra.entry(key.clone()).or_default() += value / samples.len() as f64;
            }
        }
        Self {
            params,
            rate: Summary::of(&rates),
            floor_rate: Summary::of(&floors),
            of_floor,
            extra,
            samples,
            peer,
            centre,
        }
    }

    /// The same runs, of the configuration `params` (a view of this one).
    pub fn with_params<Q>(&self, params: Q) -> ConfigResult<Q> {
        ConfigResult {
            params,
            samples: self.samples.clone(),
            rate: self.rate,
            floor_rate: self.floor_rate,
            of_floor: self.of_floor,
            extra: self.extra.clone(),
            peer: self.peer.clone(),
            centre: self.centre,
        }
    }

    /// The figure of the workload's own measurement `key` (`us_per_spawn`, …), or `None` when
    /// no run has it.
    pub fn figure(&self, key: &str) -> Option<f64> {
        figures::figure_of(self.centre, &self.samples, |s| s.extra.get(key).copied())
    }

    /// The figure of the rate.
    pub fn rate_figure(&self) -> f64 {
        figures::figure_of(self.centre, &self.samples, |s| Some(s.rate)).unwrap_or(self.rate.mean)
    }

    /// The figure of the floor's rate.
    pub fn floor_rate_figure(&self) -> f64 {
        figures::figure_of(self.centre, &self.samples, |s| Some(s.floor_rate)).unwrap_or(self.floor_rate.mean)
    }
}

//! Running configurations: every run of a workload measures its floor in the same run, runs of
//! several configurations are interleaved (A B A B …) so that drift on a shared machine hits
//! them alike, and a progress bar shows how far it got.

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::BenchError;
use crate::params::Params;
use crate::peers::{self, PeerResult};
use crate::result::ConfigResult;
use crate::sample::Sample;
use crate::stats::Comparison;

/// Runs the Node peer of `params` ([`Workload::peer`](crate::Workload::peer)), or `None` when
/// `node` is not on PATH or the workload has no peer.
///
/// # Errors
///
/// When `node` is there but the script fails.
fn peer(params: &Params) -> Result<Option<PeerResult>, BenchError> {
    let Some(version) = peers::node_version() else {
        return Ok(None);
    };
    params.workload().peer(format!("node {version}"))
}

impl ConfigResult<Params> {
    /// The result of `samples` of `params`, summed up as its workload says, with `peer`'s.
    pub(crate) fn new(params: Params, samples: Vec<Sample>, peer: Option<PeerResult>) -> Self {
        let centre = params.workload().centre();
        ConfigResult::summed(params, centre, samples, peer)
    }
}

/// Two configurations compared.
#[derive(Debug, Clone, Serialize)]
pub struct CompareResult {
    /// A (the first `--compare` value).
    pub a: ConfigResult<Params>,
    /// B (the second).
    pub b: ConfigResult<Params>,
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
    pub fn run_all(&self, configs: &[Params]) -> Result<Vec<ConfigResult<Params>>, BenchError> {
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
            let peer = if self.peers { peer(config)? } else { None };
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
        let rates = |r: &ConfigResult<Params>| r.samples.iter().map(|s| s.rate).collect::<Vec<_>>();
        let comparison = Comparison::welch(&rates(&a), &rates(&b));
        Ok(CompareResult { a, b, comparison })
    }
}

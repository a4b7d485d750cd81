//! What makes a workload of `wrt bench`: one trait, implemented on each workload's parameters
//! in the workload's own file (`spawn.rs`, `buffer.rs`, …) and registered once, in
//! [`Params::workload`](crate::Params::workload).

use crate::BenchError;
use crate::central::Centre;
use crate::peers::PeerResult;
use crate::runner::Sample;

/// One configuration of a workload: what one run does and how its runs are read.
pub trait Workload {
    /// One run: the workload and its floor, measured in the same run.
    ///
    /// # Errors
    ///
    /// When the sandbox, the guest or the floor fails.
    fn run_once(&self) -> Result<Sample, BenchError>;

    /// The unit of the workload's rate (`spawns/s`, `runs/s`, …).
    fn unit(&self) -> &'static str;

    /// How the runs of a configuration are summed up into one figure ([`crate::central`]).
    /// Default: the mean.
    fn centre(&self) -> Centre {
        Centre::Mean
    }

    /// For a workload that measures its baselines in every run and has no Node peer: what
    /// they are, for the refusal of `--peers`. Default: none (`--peers` is taken).
    fn baselines_in_every_run(&self) -> Option<&'static str> {
        None
    }

    /// Runs the Node peer of this configuration (`node` is on PATH; `name` names it), or
    /// `None` when the workload has none. Default: none.
    ///
    /// # Errors
    ///
    /// When the peer's script fails.
    fn peer(&self, name: String) -> Result<Option<PeerResult>, BenchError> {
        let _ = name;
        Ok(None)
    }

    /// The keys whose flag gives every value by default, so that a `--compare` of the key
    /// replaces that flag's values rather than meeting them. Default: none.
    fn compare_replaces(&self) -> &'static [&'static str] {
        &[]
    }

    /// Rejects, before any run, a configuration the runtime would reject in its first run.
    /// Default: every configuration is taken.
    ///
    /// # Errors
    ///
    /// [`BenchError::BadConfig`], naming the configuration.
    fn check(&self) -> Result<(), BenchError> {
        Ok(())
    }
}

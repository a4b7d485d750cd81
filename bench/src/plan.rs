//! What a `wrt bench` command line asks for, checked before anything runs: the configurations
//! (every combination of the flags' values) or, with `--compare`, the pair A and B.

use crate::params::{Params, Setting};
use crate::result::ConfigResult;
use crate::runner::{Bench, CompareResult};
use crate::{BenchError, peers};

/// The configurations a command runs, every one checked.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The configurations, one per combination of the axes' values.
    pub configs: Vec<Params>,
    /// With `--compare`: A and B.
    pub pair: Option<(Params, Params)>,
    /// Whether to run the Node peer of each configuration.
    pub peers: bool,
}

/// What a [`Plan`] measured.
#[derive(Debug, Clone)]
pub enum Measured {
    /// Every configuration's runs.
    Results(Vec<ConfigResult<Params>>),
    /// A and B, compared.
    Comparison(Box<CompareResult>),
}

impl Plan {
    /// The configurations of `base` over `axes` (each the values of one flag; the first
    /// varies slowest, [`Params::grid`]), or with `compare` (`KEY=A`, `KEY=B`) the one
    /// configuration they make, set to A and to B ([`Params::apply`]). An axis whose key
    /// `compare` sets and whose flag gives every value by default
    /// ([`Workload::compare_replaces`](crate::Workload::compare_replaces)) is left out.
    /// `peers` asks for the Node peer of each configuration.
    ///
    /// # Errors
    ///
    /// [`BenchError::NoPeer`] for `peers` with a workload whose baselines run in every run;
    /// [`BenchError::Param`] for a setting out of range or a `KEY=VALUE` that does not parse;
    /// [`BenchError::CompareNeedsOne`] when `compare` meets several configurations;
    /// [`BenchError::BadConfig`] for a configuration the workload rejects
    /// ([`Workload::check`](crate::Workload::check)).
    pub fn new(
        base: Params,
        axes: Vec<Vec<Setting>>,
        compare: Option<[&str; 2]>,
        peers: bool,
    ) -> Result<Self, BenchError> {
        let workload = base.workload();
        if peers && let Some(baselines) = workload.baselines_in_every_run() {
            return Err(BenchError::NoPeer { workload: base.name(), baselines });
        }
        let compared: Vec<&str> =
            compare.iter().flatten().filter_map(|kv| kv.split_once('=').map(|(key, _)| key)).collect();
        let replaced = workload.compare_replaces();
        let axes: Vec<Vec<Setting>> = axes
            .into_iter()
            .filter(|axis| !axis.first().is_some_and(|s| replaced.contains(&s.key()) && compared.contains(&s.key())))
            .collect();
        let configs = base.grid(&axes)?;
        for config in &configs {
            config.workload().check()?;
        }
        let pair = match compare {
            Some([a_setting, b_setting]) => {
                if configs.len() != 1 {
                    return Err(BenchError::CompareNeedsOne { configs: configs.len() });
                }
                let (mut a, mut b) = (configs[0].clone(), configs[0].clone());
                a.apply(a_setting)?;
                b.apply(b_setting)?;
                a.workload().check()?;
                b.workload().check()?;
                Some((a, b))
            }
            None => None,
        };
        Ok(Self { configs, pair, peers })
    }

    /// The workload's name, as in `wrt bench <name>`.
    pub fn workload(&self) -> &'static str {
        self.configs[0].name()
    }

    /// Runs the plan, `runs` times each configuration (A and B interleaved with `--compare`).
    ///
    /// # Errors
    ///
    /// The first failure of a run or a peer.
    pub fn run(&self, runs: u32) -> Result<Measured, BenchError> {
        let bench = Bench::new(runs).peers(self.peers);
        Ok(match &self.pair {
            Some((a, b)) => Measured::Comparison(Box::new(bench.compare(a, b)?)),
            None => Measured::Results(bench.run_all(&self.configs)?),
        })
    }

    /// Whether `--peers` was asked for but no peer could run (`node` is not on PATH).
    pub fn peers_missing(&self) -> bool {
        self.peers && peers::node_version().is_none()
    }
}

/// What in the environment skews the figures, one warning each: a Rust backtrace setting
/// (`RUST_BACKTRACE` or `RUST_LIB_BACKTRACE` other than `0`) makes every error capture a
/// backtrace, and a guest's `proc_exit` is an error in wasmtime, so each run that exits pays
/// for one (on this kind of machine, hello's run took twice as long with it, and an
/// asynchronous run more, since the unwinder walks the fiber's frames too). `var` reads the
/// environment.
pub fn environment_warnings(var: impl Fn(&str) -> Option<String>) -> Vec<String> {
    ["RUST_LIB_BACKTRACE", "RUST_BACKTRACE"]
        .into_iter()
        .find_map(|name| var(name).map(|value| (name, value)))
        .filter(|(_, value)| value != "0")
        .map(|(name, value)| {
            format!(
                "{name}={value} makes every guest exit capture a backtrace, which skews the figures; unset it for a measurement"
            )
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{InstantiateGuest, InstantiateParams, RunConfig, SpawnParams};

    #[test]
    fn axes_make_a_grid_and_compare_needs_one_configuration() {
        let base = Params::Spawn(SpawnParams::default());
        let heap = vec![Setting::Heap(0), Setting::Heap(1 << 20)];
        let plan = Plan::new(base.clone(), vec![heap.clone()], None, false).unwrap();
        assert_eq!(plan.configs.len(), 2);
        let err = Plan::new(base.clone(), vec![heap], Some(["heap=0", "heap=1MiB"]), false).unwrap_err();
        assert!(matches!(err, BenchError::CompareNeedsOne { configs: 2 }), "{err}");
        let plan = Plan::new(base, vec![], Some(["heap=0", "heap=1MiB"]), false).unwrap();
        let (a, b) = plan.pair.unwrap();
        assert_eq!((a.get("heap").unwrap(), b.get("heap").unwrap()), ("0".to_owned(), "1MiB".to_owned()));
    }

    #[test]
    fn a_compared_key_replaces_a_flag_that_defaults_to_every_value() {
        let base = Params::Instantiate(InstantiateParams::default());
        let guests: Vec<Setting> = InstantiateGuest::ALL.iter().copied().map(Setting::InstantiateGuest).collect();
        let configs = vec![Setting::Config(RunConfig::Defaults)];
        let plan = Plan::new(base.clone(), vec![guests, configs], Some(["guest=trivial", "guest=hello"]), false);
        assert_eq!(plan.unwrap().pair.unwrap().1.get("guest").as_deref(), Some("hello"));
        let err = Plan::new(base, vec![], None, true).unwrap_err().to_string();
        assert_eq!(err, "`wrt bench instantiate` has no Node peer: its baselines are plain wasmtime, in the same run");
    }

    #[test]
    fn a_backtrace_setting_is_warned_of_unless_off() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        assert!(environment_warnings(env(&[])).is_empty());
        assert!(environment_warnings(env(&[("RUST_BACKTRACE", "0")])).is_empty());
        let warned = environment_warnings(env(&[("RUST_BACKTRACE", "1")]));
        assert_eq!(warned.len(), 1);
        assert!(warned[0].starts_with("RUST_BACKTRACE=1 "), "{warned:?}");
        // The library's own setting wins, as in std.
        assert!(environment_warnings(env(&[("RUST_LIB_BACKTRACE", "0"), ("RUST_BACKTRACE", "1")])).is_empty());
        assert_eq!(environment_warnings(env(&[("RUST_LIB_BACKTRACE", "full")])).len(), 1);
    }
}

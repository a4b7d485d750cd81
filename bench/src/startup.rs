//! `wrt bench startup`: `wrt run hello.wasm` as a new process, n times one after another
//! (compiled module cached), against `posix_spawn` + `waitpid` of `/bin/true`.

use serde::Serialize;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

use crate::peers::PeerResult;
use crate::sample::Sample;
use crate::setting::{ParamError, Setting};
use crate::workload::columns::{Column, MS_PER_RUN, figure};
use crate::workload::compared::Baseline;
use crate::workload::{Workload, get_n, set_n};
use crate::{BenchError, child, floor, guests};

pub(crate) fn run_once(p: &StartupParams) -> Result<Sample, BenchError> {
    let wrt = std::env::current_exe().map_err(|e| BenchError::Guest(format!("cannot find the wrt binary: {e}")))?;
    let dir =
        tempfile::tempdir().map_err(|e| BenchError::Guest(format!("cannot create a temporary directory: {e}")))?;
    let hello = dir.path().join("hello.wasm");
    std::fs::write(&hello, guests::CLI_HELLO).map_err(|source| BenchError::Write { path: hello.clone(), source })?;
    let run = || child::run_quiet(Command::new(&wrt).arg("run").arg(&hello));
    // The first run compiles the module into the cache; it is not measured.
    run()?;
    let start = Instant::now();
    for _ in 0..p.n {
        run()?;
    }
    let elapsed = start.elapsed();
    let start = Instant::now();
    floor::posix_spawn_wait("/bin/true", p.n)?;
    let floor_elapsed = start.elapsed();
    let per_second = |d: std::time::Duration| f64::from(p.n) / d.as_secs_f64();
    let extra = BTreeMap::from([("ms_per_run".to_owned(), elapsed.as_secs_f64() * 1e3 / f64::from(p.n))]);
    Ok(Sample { rate: per_second(elapsed), floor_rate: per_second(floor_elapsed), extra })
}

/// Parameters of `wrt bench startup`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartupParams {
    /// `wrt run` processes per run.
    pub n: u32,
}

impl Default for StartupParams {
    fn default() -> Self {
        Self { n: 20 }
    }
}

impl Workload for StartupParams {
    fn name(&self) -> &'static str {
        "startup"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("processes", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        get_n(self.n, key)
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        self.n = set_n(self, setting)?;
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "runs/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[figure(MS_PER_RUN)];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt run hello.wasm"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: posix_spawn + waitpid of /bin/true")
    }

    fn plot_subject(&self) -> &'static str {
        "wrt run hello.wasm as a new process"
    }

    /// `node -e "console.log('hello')"` as a new process, as many times.
    fn peer(&self, name: String) -> Result<Option<PeerResult>, BenchError> {
        let start = Instant::now();
        for _ in 0..self.n {
            child::run_quiet(Command::new("node").args(["-e", "console.log('hello')"]))
                .map_err(|e| BenchError::Peer(e.to_string()))?;
        }
        let rate = f64::from(self.n) / start.elapsed().as_secs_f64();
        Ok(Some(PeerResult { name, rate, extra: BTreeMap::new() }))
    }
}

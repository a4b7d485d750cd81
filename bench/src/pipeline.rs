//! `wrt bench pipeline`: `head -c BYTES /dev/zero | tr '\0' a | wc -c` run by a guest as three
//! children wired child to child (the bytes never pass through the guest), against the same
//! pipeline run by `sh -c` from this process, one after the other in each run. The rate is the
//! throughput in MiB/s; the guest's `stream_bytes` (what it read from or wrote to its children's
//! pipes) must stay at the few bytes of `wc`'s count.

use serde::Serialize;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use wrt_runtime::wrt_host_spawn::{DEFAULT_SEARCH_PATH, Policy};
use wrt_runtime::{ConfigError, Guest, GuestOutput, Outcome, RunOptions, Runtime};

use crate::result::ConfigResult;
use crate::sample::Sample;
use crate::setting::{ParamError, Setting, size};
use crate::text_layout::{layout, rate, wrap};
use crate::workload::columns::{Column, figure};
use crate::workload::compared::Baseline;
use crate::workload::{self, Workload, common_line, short_label};
use crate::{BenchError, child, guests, runtime};

/// The most bytes the guest may read from or write to its children's pipes in one run: `wc`'s
/// count is a dozen bytes; more means the pipeline's bytes went through the guest.
pub const MAX_STREAM_BYTES: u64 = 4 << 10;

/// The stages' programs, looked up on the policy's search path (`DEFAULT_SEARCH_PATH`) by the
/// guest's policy and by `sh`'s `PATH` alike.
const STAGES: [&str; 3] = ["head", "tr", "wc"];

const MIB: f64 = (1 << 20) as f64;

/// The guest, compiled once per process: every run (and every configuration) reuses it.
fn guest() -> Result<&'static Guest, BenchError> {
    static GUEST: OnceLock<Guest> = OnceLock::new();
    if let Some(guest) = GUEST.get() {
        return Ok(guest);
    }
    let wrt = runtime("failed to create the runtime", Runtime::new())?;
    let guest =
        runtime("failed to load the pipeline guest", wrt.load_bytes("bench_pipeline.wasm", guests::BENCH_PIPELINE))?;
    Ok(GUEST.get_or_init(|| guest))
}

/// The options of a run: the guest's arguments, a policy allowing exactly the three stages
/// (with a timeout that leaves slow machines at least 8 MiB/s), captured output.
fn options(bytes: u64) -> Result<RunOptions, BenchError> {
    let timeout = Duration::from_secs(60 + (bytes >> 23));
    let policy = STAGES.iter().fold(Policy::deny_all(), |p, stage| p.allow_program(*stage)).timeout(Some(timeout));
    let options =
        runtime("invalid pipeline policy", RunOptions::new().spawn_policy(&policy).map_err(ConfigError::into_error))?;
    Ok(options
        .args([bytes.to_string()])
        .stdout(GuestOutput::Capture { limit: 1 << 12 })
        .stderr(GuestOutput::Capture { limit: 1 << 16 }))
}

/// One run of the guest: how long it took and its `stream_bytes`.
fn run_guest(guest: &Guest, options: &RunOptions, bytes: u64) -> Result<(Duration, u64), BenchError> {
    let start = Instant::now();
    let report = runtime("failed to run the pipeline guest", guest.run(options))?;
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&report.stdout);
    if report.outcome != Outcome::Exited(0) || stdout.trim() != bytes.to_string() {
        return Err(BenchError::Guest(format!(
            "`bench_pipeline {bytes}` ended with {:?}, printed `{}`: {}",
            report.outcome,
            stdout.trim(),
            String::from_utf8_lossy(&report.stderr).trim()
        )));
    }
    Ok((elapsed, child_to_child(report.stats.stream_bytes)?))
}

/// `stream_bytes` of a run, or an error when more than [`MAX_STREAM_BYTES`] went through the
/// guest.
fn child_to_child(stream_bytes: u64) -> Result<u64, BenchError> {
    if stream_bytes > MAX_STREAM_BYTES {
        return Err(BenchError::Guest(format!(
            "{stream_bytes} bytes went through the guest (at most {} expected): the pipeline is not child to child",
            size(MAX_STREAM_BYTES)
        )));
    }
    Ok(stream_bytes)
}

/// The native pipeline: `sh -c 'head -c BYTES /dev/zero | tr "\0" a | wc -c'`, with the
/// environment the guest's children get (empty, but for a `PATH` of the policy's search path).
///
/// # Errors
///
/// When `sh` cannot run, fails, or does not print `bytes`.
pub fn native(bytes: u64) -> Result<Duration, BenchError> {
    let script = format!("head -c {bytes} /dev/zero | tr '\\0' a | wc -c");
    let run = child::run_child(
        Command::new("/bin/sh").args(["-c", &script]).env_clear().env("PATH", DEFAULT_SEARCH_PATH.join(":")),
    )
    .map_err(|e| BenchError::Floor(e.to_string()))?;
    if run.code != 0 || run.stdout.trim() != bytes.to_string() {
        return Err(BenchError::Floor(format!(
            "`sh -c {script:?}` ended with {}, printed `{}`: {}",
            run.code,
            run.stdout.trim(),
            run.stderr.trim()
        )));
    }
    Ok(run.wall)
}

/// One run of the guest's pipeline of `bytes` (the guest compiled once per process): how long
/// it took, instantiation to exit, and the bytes the guest itself read from or wrote to its
/// children's pipes.
///
/// # Errors
///
/// When the guest fails, prints another count, or more than [`MAX_STREAM_BYTES`] went through
/// it.
pub fn wrt(bytes: u64) -> Result<(Duration, u64), BenchError> {
    run_guest(guest()?, &options(bytes)?, bytes)
}

pub(crate) fn run_once(p: &PipelineParams) -> Result<Sample, BenchError> {
    let (elapsed, stream_bytes) = wrt(p.bytes)?;
    let native_elapsed = native(p.bytes)?;
    let mib_per_second = |d: Duration| p.bytes as f64 / MIB / d.as_secs_f64();
    let extra = BTreeMap::from([
        ("stream_bytes".to_owned(), stream_bytes as f64),
        ("seconds".to_owned(), elapsed.as_secs_f64()),
        ("native_seconds".to_owned(), native_elapsed.as_secs_f64()),
    ]);
    Ok(Sample { rate: mib_per_second(elapsed), floor_rate: mib_per_second(native_elapsed), extra })
}

/// The pipeline's table: two rows a configuration, the guest's and the native pipeline's
/// throughput, with their ratio and the bytes that went through the guest.
fn table(results: &[ConfigResult<&dyn Workload>]) -> String {
    let header = ["pipeline", "MiB/s", "± sd", "runs", "wrt/native", "stream bytes"];
    let all: Vec<&dyn Workload> = results.iter().map(|r| r.params).collect();
    let mut rows = vec![header.map(str::to_owned).to_vec()];
    for r in results {
        let label = if all.len() > 1 { format!("{}:", short_label(r.params, &all)) } else { String::new() };
        rows.extend(self::rows(label.trim_start(), r, rate));
    }
    format!(
        "{}\n{}{}goal: wrt/native ≥ 0.90×; stream bytes (what the guest itself read from or wrote to its children) at most {}\n",
        common_line(&all),
        layout(&rows),
        wrap(&format!(
            "Each figure is the {} over the runs; wrt/native = wrt's MiB/s ÷ native MiB/s.",
            results[0].centre.name()
        )),
        size(MAX_STREAM_BYTES)
    )
}

/// The rows of the pipeline's table for `r`: the guest's throughput, the native one, their ratio
/// (`of_floor`: the one over the other, as printed) and the guest's stream bytes (the most of any
/// run).
fn rows<P>(label: &str, r: &ConfigResult<P>, fmt: fn(f64) -> String) -> [Vec<String>; 2] {
    let floors: Vec<f64> = r.samples.iter().map(|s| s.floor_rate).collect();
    let native = crate::stats::Summary::of(&floors);
    let name = |what: &str| if label.is_empty() { what.to_owned() } else { format!("{label} {what}") };
    let stream = r.samples.iter().filter_map(|s| s.extra.get("stream_bytes")).fold(0.0_f64, |a, b| a.max(*b));
    [
        vec![
            name("wrt (guest: head | tr | wc)"),
            fmt(r.rate_figure()),
            fmt(r.rate.sd),
            r.rate.n.to_string(),
            format!("{:.2}×", r.of_floor),
            format!("{stream:.0}"),
        ],
        vec![
            name("native (sh -c)"),
            fmt(r.floor_rate_figure()),
            fmt(native.sd),
            native.n.to_string(),
            "1.00×".to_owned(),
            "-".to_owned(),
        ],
    ]
}

/// The pipeline's baseline, the same pipeline run by `sh`, runs in every run; `--peers` is
/// taken, but no Node peer runs.
/// Parameters of `wrt bench pipeline`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipelineParams {
    /// Bytes through the pipeline per run.
    pub bytes: u64,
}

impl Default for PipelineParams {
    fn default() -> Self {
        Self { bytes: 1 << 30 }
    }
}

impl Workload for PipelineParams {
    fn name(&self) -> &'static str {
        "pipeline"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["bytes"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("n", "bytes")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        (key == "bytes").then_some(Setting::Bytes(self.bytes))
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::Bytes(0) => return Err(setting.out_of_range("must be at least 1 byte")),
            Setting::Bytes(b) => self.bytes = b,
            other => return Err(workload::unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "MiB/s"
    }

    /// Its own table (`table` below) has this column after its common ones.
    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[figure(("stream_bytes", "stream bytes"))];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt guest: head | tr | wc, child to child"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline { name: "native", legend: "native: the same pipeline run by sh -c", against: "the native pipeline" }
    }

    fn plot_rates(&self) -> &'static str {
        "MiB/s of the guest's pipeline"
    }

    fn plot_subject(&self) -> &'static str {
        "head -c BYTES /dev/zero | tr '\\0' a | wc -c"
    }

    fn table(&self, results: &[ConfigResult<&dyn Workload>]) -> Option<String> {
        Some(table(results))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_fails_when_the_bytes_go_through_the_guest() {
        assert_eq!(child_to_child(11).unwrap(), 11);
        assert_eq!(child_to_child(MAX_STREAM_BYTES).unwrap(), MAX_STREAM_BYTES);
        let err = child_to_child(MAX_STREAM_BYTES + 1).unwrap_err().to_string();
        assert!(err.contains("4097 bytes went through the guest (at most 4KiB expected)"), "{err}");
    }

    #[test]
    fn both_pipelines_count_every_byte() {
        assert!(native(1 << 16).unwrap() > Duration::ZERO);
        let (elapsed, stream_bytes) = wrt(1 << 16).unwrap();
        assert!(elapsed > Duration::ZERO);
        assert_eq!(stream_bytes, "65536\n".len() as u64);
    }
}

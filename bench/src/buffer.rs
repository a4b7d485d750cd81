//! `wrt bench buffer`: the readable-push-buffer-burst workload (nodejs/node#63863: n
//! iterations of nine chunks made into buffers, concatenated and dropped) in a Rust, an
//! AssemblyScript or an `externref` guest, against the same work as plain `memcpy` in this
//! process.

use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

use wrt_runtime::{GcPolicy, GuestOutput, Outcome, RunOptions, Runtime};

use crate::peers::{self, PeerResult, Script};
use crate::sample::Sample;
use crate::setting::{BufferGuest, ParamError, Setting};
use crate::workload::columns::{Column, figure};
use crate::workload::compared::Baseline;
use crate::workload::{self, Workload};
use crate::{BenchError, floor, guests, runtime};

pub(crate) fn run_once(p: &BufferParams) -> Result<Sample, BenchError> {
    let policy = if p.gc {
        // The default policy's young trigger adapts; one given with `--gc-young` is kept.
        GcPolicy::with_defaults(p.gc_young, Some(p.gc_soft_limit), Some(p.gc_growth))
            .map_err(|e| BenchError::Guest(e.to_string()))?
    } else {
        GcPolicy::disabled()
    };
    let (name, bytes, mut args) = match p.guest {
        BufferGuest::Rust => ("buffer_burst.wasm", guests::BUFFER_BURST, vec![]),
        BufferGuest::Assemblyscript => ("asc_buffers.wasm", guests::ASC_BUFFERS, vec!["burst".to_owned()]),
        BufferGuest::Externref => ("ref_burst.wat", guests::REF_BURST, vec![]),
    };
    args.extend([p.n.to_string(), p.body_size.to_string()]);
    let options = RunOptions::new()
        .args(args)
        .gc_policy(policy)
        .stdout(GuestOutput::Capture { limit: 1 << 16 })
        .stderr(GuestOutput::Capture { limit: 1 << 16 });
    let wrt = runtime("failed to create the runtime", Runtime::new())?;
    let guest = runtime("failed to load the buffer guest", wrt.load_bytes(name, bytes))?;
    let start = Instant::now();
    let report = runtime("failed to run the buffer guest", guest.run(&options))?;
    let elapsed = start.elapsed();
    if report.outcome != Outcome::Exited(0) {
        return Err(BenchError::Guest(format!(
            "`{name}` ended with {:?}: {}",
            report.outcome,
            String::from_utf8_lossy(&report.stderr).trim()
        )));
    }
    let chunks = floor::burst_chunks(p.body_size as usize);
    let start = Instant::now();
    floor::memcpy_burst(&chunks, p.n);
    let floor_elapsed = start.elapsed();
    let s = report.stats;
    let extra = BTreeMap::from([
        ("young_collections".to_owned(), s.young_collections as f64),
        ("full_collections".to_owned(), s.full_collections as f64),
        ("peak_external".to_owned(), s.peak_external as f64),
        ("peak_linear_memory".to_owned(), s.peak_linear_memory as f64),
        ("gc_seconds".to_owned(), s.gc_time.as_secs_f64()),
    ]);
    let per_second = |d: std::time::Duration| f64::from(p.n) / d.as_secs_f64();
    Ok(Sample { rate: per_second(elapsed), floor_rate: per_second(floor_elapsed), extra })
}

/// Parameters of `wrt bench buffer` (the readable-push-buffer-burst workload).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferParams {
    /// Iterations per run.
    pub n: u32,
    /// Size of the large chunk, bytes.
    pub body_size: u32,
    /// Which guest.
    pub guest: BufferGuest,
    /// Whether the accountant asks for collections.
    pub gc: bool,
    /// Young trigger Y, bytes, kept whatever the guest's collections cost; `None` (spelled
    /// `adapting`) for the default, which starts at [`GcPolicy::DEFAULT_YOUNG_TRIGGER`] and adapts
    /// to them ([`GcPolicy::young_trigger_adapts`]).
    pub gc_young: Option<u64>,
    /// Soft limit floor S, bytes.
    pub gc_soft_limit: u64,
    /// Growth factor f.
    pub gc_growth: f64,
}

impl Default for BufferParams {
    fn default() -> Self {
        Self {
            n: 20_000,
            body_size: 120 << 10,
            guest: BufferGuest::Rust,
            gc: true,
            gc_young: None,
            gc_soft_limit: GcPolicy::DEFAULT_SOFT_LIMIT,
            gc_growth: GcPolicy::DEFAULT_GROWTH_FACTOR,
        }
    }
}

impl Workload for BufferParams {
    fn name(&self) -> &'static str {
        "buffer"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "body-size", "guest", "gc", "gc-young", "gc-soft-limit", "gc-growth"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("iterations", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        Some(match key {
            "n" => Setting::N(self.n),
            "body-size" => Setting::BodySize(u64::from(self.body_size)),
            "guest" => Setting::Guest(self.guest),
            "gc" => Setting::Gc(self.gc),
            "gc-young" => Setting::GcYoung(self.gc_young),
            "gc-soft-limit" => Setting::GcSoftLimit(self.gc_soft_limit),
            "gc-growth" => Setting::GcGrowth(self.gc_growth),
            _ => return None,
        })
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::N(n) => self.n = n,
            Setting::BodySize(b) => {
                self.body_size = u32::try_from(b)
                    .ok()
                    .filter(|s| (1..=64 << 20).contains(s))
                    .ok_or_else(|| setting.out_of_range("must be between 1 byte and 64 MiB"))?;
            }
            Setting::Guest(g) => self.guest = g,
            Setting::Gc(on) => self.gc = on,
            Setting::GcYoung(b) => self.gc_young = b,
            Setting::GcSoftLimit(b) => self.gc_soft_limit = b,
            Setting::GcGrowth(f) => self.gc_growth = f,
            other => return Err(workload::unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "ops/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            figure(("young_collections", "young")),
            figure(("full_collections", "full")),
            figure(("peak_external", "peak ext")),
        ];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt guest"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: the same copies as plain memcpy")
    }

    fn plot_subject(&self) -> &'static str {
        "the readable-push-buffer-burst workload"
    }

    fn plot_axis(&self) -> &'static str {
        "ops/s (1 op = one burst: nine chunks, body-size + about 5 KiB, made into buffers, concatenated and \
         dropped)"
    }

    /// Node running the same burst (`readable_burst.js`), with its collections.
    fn peer(&self, name: String) -> Result<Option<PeerResult>, BenchError> {
        let env = [("N", self.n.to_string()), ("BODY", self.body_size.to_string())];
        let peer = peers::node(Script::ReadableBurst, &["--trace-gc"], &env)?;
        let extra = BTreeMap::from([
            ("young_collections".to_owned(), peer.young as f64),
            ("full_collections".to_owned(), peer.full as f64),
            ("rss".to_owned(), peers::number(&peer.json, "rss")?),
        ]);
        Ok(Some(PeerResult { name, rate: peers::number(&peer.json, "ops_per_s")?, extra }))
    }

    /// A collection policy the runtime would reject.
    fn check(&self) -> Result<(), BenchError> {
        if self.gc {
            GcPolicy::with_defaults(self.gc_young, Some(self.gc_soft_limit), Some(self.gc_growth)).map_err(
                |source| BenchError::BadConfig { config: workload::key_values(self), source: Box::new(source) },
            )?;
        }
        Ok(())
    }
}

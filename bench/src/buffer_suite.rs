//! The criterion `buffer` bench's suite: host buffers (external memory) in guests that free
//! them by hand (Rust, on `Drop`), with their own collector driven by wrt's accountant
//! (AssemblyScript, `wrt_gc`) and with wasmtime's collector (`externref`), beside Node running
//! the same workloads and an in-process floor, all in one run:
//!
//! - `burst`: the readable-push-buffer-burst analogue of nodejs/node#63863 (n = 2e4, 120 KiB
//!   body): ops/s, collections, peak RSS; and the accountant off (`--gc off`) against on;
//! - `chains`: the nodejs/node#1671 analogue (800,000 × 16 KiB over 20 chains): time, peak
//!   external bytes, peak RSS, young against full collections;
//! - `sweep`: the AssemblyScript burst in-process under `GcPolicy::experimental` with
//!   Y/S ∈ {0.25 … 2}, clamped and not: where full collections take over.
//!
//! Guests run as `wrt run --stats=json` children (peak RSS from `wait4`) except in the sweep.
//! A full run prints markdown tables and writes the results as JSON; a check run (tiny sizes,
//! one round) checks every workload's output. A failed check or a failed run panics: this is a
//! benchmark harness, run by `cargo bench`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wrt_runtime::{GcPolicy, GuestOutput, Outcome, RunOptions, Runtime};

use crate::child::{self, ChildRun};
use crate::peers::{self, NodeRun, Script};
use crate::sample::Sample;
use crate::{floor, report};

const MIB: u64 = 1 << 20;
const KIB: usize = 1 << 10;

/// The sections of the suite, in the order they run.
pub const SECTIONS: [&str; 3] = ["burst", "chains", "sweep"];

/// The `wrt` binary and the guests the suite runs (fresh builds, not the committed copies).
#[derive(Debug, Clone)]
pub struct Paths {
    /// The `wrt` binary of this build.
    pub wrt: PathBuf,
    /// `buffer_burst.wasm` (Rust).
    pub buffer_burst: PathBuf,
    /// `buffer_chains.wasm` (Rust).
    pub buffer_chains: PathBuf,
    /// `asc_buffers.wasm` (AssemblyScript).
    pub asc_buffers: PathBuf,
    /// `ref_burst.wat` (`externref`).
    pub ref_burst: PathBuf,
}

// Settings ---------------------------------------------------------------------------------------

/// Sizes of one run: the reports' parameters (nodejs/node#63863, #1671) with `--bench`, tiny ones otherwise.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    full: bool,
    rounds: usize,
    burst_n: u32,
    body: usize,
    chains_total: u32,
    chains: u32,
    chain_size: usize,
    sweep_n: u32,
    sweep_soft_limit: u64,
}

const FULL: Sizes = Sizes {
    full: true,
    rounds: 3,
    burst_n: 20_000,
    body: 120 * KIB,
    chains_total: 800_000,
    chains: 20,
    chain_size: 16 * KIB,
    sweep_n: 20_000,
    sweep_soft_limit: 64 * MIB,
};

/// `--test`: one run each, small enough for CI; the sweep's soft limit is cut so that its few
/// MiB of buffers still show the cliff.
const TEST: Sizes = Sizes {
    full: false,
    rounds: 1,
    burst_n: 20,
    body: 120 * KIB,
    chains_total: 2_000,
    chains: 20,
    chain_size: 16 * KIB,
    sweep_n: 200,
    sweep_soft_limit: 4 * MIB,
};

const SWEEP_RATIOS: [f64; 7] = [0.25, 0.5, 0.75, 1.0, 1.125, 1.5, 2.0];
const SWEEP_RATIOS_TEST: [f64; 2] = [0.25, 2.0];

// One measurement ------------------------------------------------------------------------------

// A run of a runner is the engine's `Sample`: `rate` is ops/s, `floor_rate` NaN (the floor is a
// runner of its own), and `extra` holds what applies to the runner of `ms`, `peak_rss`,
// `peak_external`, `young`, `full` and `gc_ms`.

/// A run of `ops_per_s` in `ms`, with the `figures` that apply to its runner.
fn sample(ms: f64, ops_per_s: f64, figures: &[(&str, Option<f64>)]) -> Sample {
    let mut extra = BTreeMap::from([("ms".to_owned(), ms)]);
    extra.extend(figures.iter().filter_map(|&(key, value)| Some((key.to_owned(), value?))));
    Sample { rate: ops_per_s, floor_rate: f64::NAN, extra }
}

/// The figure `key` of `s`, if it applies.
fn get(s: &Sample, key: &str) -> Option<f64> {
    s.extra.get(key).copied()
}

/// The count or size `key` of `s`, if it applies.
fn count(s: &Sample, key: &str) -> Option<u64> {
    get(s, key).map(|v| v as u64)
}

// Child processes ------------------------------------------------------------------------------

/// A guest still running after this is stopped (and the bench fails) rather than left to hang.
const GUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// `wrt run --stats=json [flags] wasm args…`, checked for exit code 0 and a stats line.
fn run_wrt(paths: &Paths, wasm: &Path, flags: &[&str], args: &[String]) -> (ChildRun, WrtStats) {
    let wasm = wasm.display();
    let mut cmd = Command::new(&paths.wrt);
    let timeout = format!("{}s", GUEST_TIMEOUT.as_secs());
    cmd.args(["run", "--stats=json", "--timeout", &timeout]).args(flags).arg(wasm.to_string()).args(args);
    let run = child::run_child(&mut cmd).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        run.code, 0,
        "`wrt run {flags:?} {wasm} {args:?}` failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    let stats = WrtStats::parse(&run.stderr)
        .unwrap_or_else(|| panic!("no stats line from `wrt run {wasm} {args:?}`; stderr: {}", run.stderr));
    (run, stats)
}

/// `node --trace-gc script` with `env`, checked for exit code 0.
fn run_node(script: Script, env: &[(&str, String)]) -> NodeRun {
    peers::node(script, &["--trace-gc"], env).unwrap_or_else(|e| panic!("{e}"))
}

// JSON ------------------------------------------------------------------------------------------

/// The first line of `text` that is a JSON object.
fn json_line(who: &str, text: &str) -> Value {
    text.lines()
        .filter(|l| l.starts_with('{'))
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{who}: no JSON line in {text:?}"))
}

/// The `--stats=json` line of `wrt run`.
#[derive(Debug, Clone, Copy)]
struct WrtStats {
    peak_external: u64,
    final_external: u64,
    young: u64,
    full: u64,
    gc_seconds: f64,
}

impl WrtStats {
    fn parse(stderr: &str) -> Option<Self> {
        let line = stderr.lines().rev().find(|l| l.starts_with('{') && l.contains("\"peak_external\""))?;
        let stats: Value = serde_json::from_str(line).ok()?;
        Some(Self {
            peak_external: stats["peak_external"].as_u64()?,
            final_external: stats["final_external"].as_u64()?,
            young: stats["young_collections"].as_u64()?,
            full: stats["full_collections"].as_u64()?,
            gc_seconds: stats["gc_seconds"].as_f64()?,
        })
    }

    fn sample(&self, ms: f64, ops_per_s: f64, peak_rss: u64) -> Sample {
        sample(
            ms,
            ops_per_s,
            &[
                ("peak_rss", Some(peak_rss as f64)),
                ("peak_external", Some(self.peak_external as f64)),
                ("young", Some(self.young as f64)),
                ("full", Some(self.full as f64)),
                ("gc_ms", Some(self.gc_seconds * 1e3)),
            ],
        )
    }
}

/// The guest's (or peer's) JSON line: checks `expect` keys and returns `ms`.
fn checked_ms(who: &str, json: &Value, expect: &[(&str, u64)]) -> f64 {
    for &(key, value) in expect {
        assert_eq!(json[key].as_u64(), Some(value), "{who}: `{key}` in {json}");
    }
    json["ms"].as_f64().unwrap_or_else(|| panic!("{who}: no `ms` in {json}"))
}

fn ops(n: u32, ms: f64) -> f64 {
    if ms > 0.0 { f64::from(n) / ms * 1e3 } else { 0.0 }
}

// Burst (nodejs/node#63863) --------------------------------------------------------------------

/// Runners of the burst, in the order each round runs them.
const BURST_RUNNERS: [&str; 6] = [
    "wrt: Rust guest (frees on Drop)",
    "wrt: AssemblyScript guest (own GC, `wrt_gc`)",
    "wrt: `externref` guest (wasmtime GC)",
    "wrt: AssemblyScript guest, `--gc off`",
    "Node 20 (`readable_burst.js`)",
    "floor: memcpy concat in-process",
];
const RUST: usize = 0;
const ASC: usize = 1;
const REF: usize = 2;
const ASC_OFF: usize = 3;
const NODE: usize = 4;
const FLOOR: usize = 5;

/// What a burst's JSON line must say.
fn burst_expect(n: u32, body: usize) -> [(&'static str, u64); 3] {
    [("n", n.into()), ("body_size", body as u64), ("total", 9 * u64::from(n))]
}

fn burst_rust(paths: &Paths, sz: Sizes) -> Sample {
    let (n, body) = (sz.burst_n, sz.body);
    let (run, stats) = run_wrt(paths, &paths.buffer_burst, &[], &[n.to_string(), body.to_string()]);
    let json = json_line("buffer_burst", &run.stdout);
    let ms = checked_ms("buffer_burst", &json, &burst_expect(n, body));
    assert_eq!(stats.final_external, 0, "buffer_burst ends holding host buffers: {stats:?}");
    stats.sample(ms, ops(n, ms), run.peak_rss)
}

fn burst_asc(paths: &Paths, sz: Sizes, gc_off: bool) -> Sample {
    let (n, body) = (sz.burst_n, sz.body);
    let flags: &[&str] = if gc_off { &["--gc", "off"] } else { &[] };
    let args = ["burst".to_owned(), n.to_string(), body.to_string()];
    let (run, stats) = run_wrt(paths, &paths.asc_buffers, flags, &args);
    let json = json_line("asc_buffers burst", &run.stdout);
    let ms = checked_ms("asc_buffers burst", &json, &burst_expect(n, body));
    stats.sample(ms, ops(n, ms), run.peak_rss)
}

/// The `externref` guest prints nothing: its loop time is the wall time of the run less that of
/// the same run with N = 0 (process start, compiled-module load, setup).
fn burst_ref(paths: &Paths, sz: Sizes) -> Sample {
    let (n, body) = (sz.burst_n, sz.body);
    let (empty, _) = run_wrt(paths, &paths.ref_burst, &[], &["0".to_owned(), body.to_string()]);
    let (run, stats) = run_wrt(paths, &paths.ref_burst, &[], &[n.to_string(), body.to_string()]);
    let ms = (run.wall.saturating_sub(empty.wall)).as_secs_f64() * 1e3;
    stats.sample(ms, ops(n, ms), run.peak_rss)
}

fn burst_node(sz: Sizes) -> Sample {
    let (n, body) = (sz.burst_n, sz.body);
    let NodeRun { run, json, young, full } =
        run_node(Script::ReadableBurst, &[("N", n.to_string()), ("BODY", body.to_string())]);
    let ms = checked_ms("readable_burst.js", &json, &burst_expect(n, body));
    sample(
        ms,
        ops(n, ms),
        &[
            ("peak_rss", Some(run.peak_rss as f64)),
            ("peak_external", json["external"].as_f64()),
            ("young", Some(young as f64)),
            ("full", Some(full as f64)),
        ],
    )
}

/// The floor: each iteration copies the nine chunks into one new `Vec` (one allocation, one
/// copy of every byte), in this process.
fn burst_floor(sz: Sizes) -> Sample {
    let chunks = floor::burst_chunks(sz.body);
    let start = Instant::now();
    floor::alloc_concat_burst(&chunks, sz.burst_n);
    let ms = start.elapsed().as_secs_f64() * 1e3;
    sample(ms, ops(sz.burst_n, ms), &[])
}

/// Every runner once per round, in the same order each round; `None` when a runner is skipped.
fn burst(paths: &Paths, sz: Sizes, node: bool, out: &mut Sections) {
    // A first run of each guest fills the compiled-module cache (and is the check in --test).
    if sz.full {
        let warm = Sizes { burst_n: 20, ..sz };
        burst_rust(paths, warm);
        burst_asc(paths, warm, false);
        burst_ref(paths, warm);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); BURST_RUNNERS.len()];
    for round in 0..sz.rounds {
        eprintln!("burst: round {} of {}", round + 1, sz.rounds);
        samples[RUST].push(burst_rust(paths, sz));
        samples[ASC].push(burst_asc(paths, sz, false));
        samples[REF].push(burst_ref(paths, sz));
        samples[ASC_OFF].push(burst_asc(paths, sz, true));
        if node {
            samples[NODE].push(burst_node(sz));
        }
        samples[FLOOR].push(burst_floor(sz));
    }
    let rows: Vec<Option<Sample>> = samples.iter().map(|s| (!s.is_empty()).then(|| Sample::median(s))).collect();
    if !sz.full {
        return;
    }
    let node_row = rows[NODE].as_ref();
    let floor_ops = rows[FLOOR].as_ref().map_or(0.0, |f| f.rate);
    let mut table = String::from(
        "| runner | ops/s | vs Node 20 | vs floor | young | full | peak external | peak RSS | RSS vs Node 20 |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (label, row) in BURST_RUNNERS.iter().zip(&rows) {
        let Some(row) = row else {
            let _ = writeln!(table, "| {label} | skipped (no `node` on PATH) | | | | | | | |");
            continue;
        };
        let _ = writeln!(
            table,
            "| {label} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
            row.rate,
            ratio(Some(row.rate), node_row.map(|n| n.rate)),
            ratio(Some(row.rate), Some(floor_ops)),
            opt(count(row, "young")),
            opt(count(row, "full")),
            count(row, "peak_external").map_or("—".into(), bytes),
            count(row, "peak_rss").map_or("—".into(), bytes),
            ratio(get(row, "peak_rss"), node_row.and_then(|n| get(n, "peak_rss"))),
        );
    }
    println!("\n## burst: n = {}, body = {} KiB, median of {} rounds\n\n{table}", sz.burst_n, sz.body / KIB, sz.rounds);
    let mut off = String::from(
        "| accountant | ops/s | peak external | peak RSS | young | full | time in collections |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (label, index) in [("on (default policy)", ASC), ("off (`--gc off`)", ASC_OFF)] {
        let row = rows[index].as_ref().expect("asc rows");
        let _ = writeln!(
            off,
            "| {label} | {:.0} | {} | {} | {} | {} | {:.0} ms |",
            row.rate,
            count(row, "peak_external").map_or("—".into(), bytes),
            count(row, "peak_rss").map_or("—".into(), bytes),
            opt(count(row, "young")),
            opt(count(row, "full")),
            get(row, "gc_ms").unwrap_or(0.0),
        );
    }
    println!("\n## burst, AssemblyScript guest: accountant on vs off\n\n{off}");
    out.section("burst", json!({"n": sz.burst_n, "body": sz.body}), &BURST_RUNNERS, &samples);
}

// Chains (nodejs/node#1671) ----------------------------------------------------------------------

const CHAIN_RUNNERS: [&str; 3] =
    ["wrt: Rust guest (frees on Drop)", "wrt: AssemblyScript guest (own GC, `wrt_gc`)", "Node 20 (`buffer_chains.js`)"];

fn chains_wrt(paths: &Paths, sz: Sizes, asc: bool) -> Sample {
    let counts = [sz.chains_total.to_string(), sz.chains.to_string(), sz.chain_size.to_string()];
    let (wasm, args): (&Path, Vec<String>) = if asc {
        (&paths.asc_buffers, std::iter::once("chains".to_owned()).chain(counts).collect())
    } else {
        (&paths.buffer_chains, counts.to_vec())
    };
    let (run, stats) = run_wrt(paths, wasm, &[], &args);
    let wasm = &wasm.display().to_string();
    let json = json_line(wasm, &run.stdout);
    let expect = [("total", sz.chains_total.into()), ("chains", sz.chains.into()), ("size", sz.chain_size as u64)];
    let ms = checked_ms(wasm, &json, &expect);
    stats.sample(ms, ops(sz.chains_total, ms), run.peak_rss)
}

fn chains_node(sz: Sizes) -> Sample {
    let env = [
        ("TOTAL", sz.chains_total.to_string()),
        ("CHAINS", sz.chains.to_string()),
        ("SIZE", sz.chain_size.to_string()),
    ];
    let NodeRun { run, json, young, full } = run_node(Script::BufferChains, &env);
    let expect = [("total", sz.chains_total.into()), ("chains", sz.chains.into()), ("size", sz.chain_size as u64)];
    let ms = checked_ms("buffer_chains.js", &json, &expect);
    sample(
        ms,
        ops(sz.chains_total, ms),
        &[
            ("peak_rss", Some(run.peak_rss as f64)),
            ("peak_external", json["peak_external"].as_f64()),
            ("young", Some(young as f64)),
            ("full", Some(full as f64)),
        ],
    )
}

fn chains(paths: &Paths, sz: Sizes, node: bool, out: &mut Sections) {
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); CHAIN_RUNNERS.len()];
    for round in 0..sz.rounds {
        eprintln!("chains: round {} of {}", round + 1, sz.rounds);
        samples[0].push(chains_wrt(paths, sz, false));
        samples[1].push(chains_wrt(paths, sz, true));
        if node {
            samples[2].push(chains_node(sz));
        }
    }
    let rows: Vec<Option<Sample>> = samples.iter().map(|s| (!s.is_empty()).then(|| Sample::median(s))).collect();
    let asc = rows[1].as_ref().expect("asc row");
    let total_bytes = u64::from(sz.chains_total) * sz.chain_size as u64;
    // Garbage piles up by the young trigger between young collections.
    check(
        sz,
        count(asc, "young").unwrap_or(0) >= total_bytes / (GcPolicy::DEFAULT_YOUNG_TRIGGER * 2),
        &format!("AS chains: too few young collections: {asc:?}"),
    );
    if !sz.full {
        return;
    }
    let mut table = String::from(
        "| runner | time | vs Node 20 | young | full | peak external | peak RSS | RSS vs Node 20 |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let node_row = rows[2].as_ref();
    for (label, row) in CHAIN_RUNNERS.iter().zip(&rows) {
        let Some(row) = row else {
            let _ = writeln!(table, "| {label} | skipped (no `node` on PATH) | | | | | | |");
            continue;
        };
        let _ = writeln!(
            table,
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            millis(get(row, "ms").unwrap_or(0.0)),
            ratio(get(row, "ms"), node_row.and_then(|n| get(n, "ms"))),
            opt(count(row, "young")),
            opt(count(row, "full")),
            count(row, "peak_external").map_or("—".into(), bytes),
            count(row, "peak_rss").map_or("—".into(), bytes),
            ratio(get(row, "peak_rss"), node_row.and_then(|n| get(n, "peak_rss"))),
        );
    }
    println!(
        "\n## chains: {} × {} KiB over {} chains, median of {} rounds\n\n{table}",
        sz.chains_total,
        sz.chain_size / KIB,
        sz.chains,
        sz.rounds
    );
    let params = json!({"total": sz.chains_total, "chains": sz.chains, "size": sz.chain_size});
    out.section("chains", params, &CHAIN_RUNNERS, &samples);
}

// Y/S sweep ------------------------------------------------------------------------------------

/// The AssemblyScript burst in this process under `policy`.
fn sweep_run(paths: &Paths, sz: Sizes, policy: GcPolicy) -> Sample {
    let options = RunOptions::new()
        .args(["burst".to_owned(), sz.sweep_n.to_string(), sz.body.to_string()])
        .stdout(GuestOutput::Capture { limit: 1 << 16 })
        .stderr(GuestOutput::Capture { limit: 1 << 16 })
        .gc_policy(policy.clone())
        .timeout(GUEST_TIMEOUT);
    let runtime = Runtime::new().expect("runtime");
    let guest = runtime.load_file(&paths.asc_buffers).expect("asc_buffers");
    let report = guest.run(&options).expect("run asc_buffers");
    let stdout = String::from_utf8_lossy(&report.stdout);
    assert!(
        matches!(report.outcome, Outcome::Exited(0)),
        "asc_buffers burst under {policy:?}: {:?}\nstdout: {stdout}\nstderr: {}",
        report.outcome,
        String::from_utf8_lossy(&report.stderr)
    );
    let json = json_line("asc_buffers burst", &stdout);
    let n = sz.sweep_n;
    let ms = checked_ms("asc_buffers burst", &json, &[("n", n.into()), ("total", 9 * u64::from(n))]);
    let stats = report.stats;
    sample(
        ms,
        ops(n, ms),
        &[
            ("peak_external", Some(stats.peak_external as f64)),
            ("young", Some(stats.young_collections as f64)),
            ("full", Some(stats.full_collections as f64)),
            ("gc_ms", Some(stats.gc_time.as_secs_f64() * 1e3)),
        ],
    )
}

fn sweep(paths: &Paths, sz: Sizes, out: &mut Sections) {
    let s = sz.sweep_soft_limit;
    let f = GcPolicy::DEFAULT_GROWTH_FACTOR;
    let ratios: &[f64] = if sz.full { &SWEEP_RATIOS } else { &SWEEP_RATIOS_TEST };
    let mut rows = Vec::new();
    for &r in ratios {
        let y = (s as f64 * r) as u64;
        let accepted = GcPolicy::new(y, s, f).is_ok();
        assert_eq!(accepted, r <= 0.5, "GcPolicy::new({y}, {s}, {f}) accepted: {accepted}");
        eprintln!("sweep: Y/S = {r}");
        let unclamped = sweep_run(paths, sz, GcPolicy::experimental(y, s, f, false));
        let clamped = sweep_run(paths, sz, GcPolicy::experimental(y, s, f, true));
        rows.push((r, y, accepted, unclamped, clamped));
    }
    // The cliff: at least 5× the full collections of the smallest Y (and at least 5).
    let base =
        |pick: fn(&(f64, u64, bool, Sample, Sample)) -> &Sample| count(pick(&rows[0]), "full").unwrap_or(0).max(1);
    let (base_unclamped, base_clamped) = (base(|r| &r.3), base(|r| &r.4));
    let cliff = |s: &Sample, base: u64| count(s, "full").unwrap_or(0) >= 5 * base;
    for (r, _, _, unclamped, clamped) in &rows {
        check(sz, !cliff(clamped, base_clamped), &format!("clamped Y/S = {r} has the cliff: {clamped:?}"));
        let expected = *r >= 1.0;
        let msg = format!("unclamped Y/S = {r}: cliff expected {expected}: {unclamped:?}");
        check(sz, cliff(unclamped, base_unclamped) == expected, &msg);
    }
    if !sz.full {
        return;
    }
    let mut table = format!(
        "| Y/S | Y | `GcPolicy::new` | unclamped: young | full | ops/s | cliff | clamped (Y in effect {}): young | full | ops/s | cliff |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        "≤ S/2"
    );
    for (r, y, accepted, u, c) in &rows {
        let _ = writeln!(
            table,
            "| {r} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {:.0} | {} |",
            bytes(*y),
            if *accepted { "accepted" } else { "rejected" },
            opt(count(u, "young")),
            opt(count(u, "full")),
            u.rate,
            if cliff(u, base_unclamped) { "**yes**" } else { "no" },
            opt(count(c, "young")),
            opt(count(c, "full")),
            c.rate,
            if cliff(c, base_clamped) { "**yes**" } else { "no" },
        );
    }
    println!("\n## sweep: AssemblyScript burst in-process, n = {}, S = {}, f = {f}\n\n{table}", sz.sweep_n, bytes(s));
    let labels: Vec<String> =
        rows.iter().flat_map(|(r, ..)| [format!("Y/S={r} unclamped"), format!("Y/S={r} clamped")]).collect();
    let samples: Vec<Vec<Sample>> = rows.iter().flat_map(|(.., u, c)| [vec![u.clone()], vec![c.clone()]]).collect();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let params = json!({"n": sz.sweep_n, "body": sz.body, "soft_limit": s, "growth_factor": f});
    out.section("sweep", params, &labels, &samples);
}

/// A check on results: fails a `--test` run; in a full run, reported without losing the tables.
fn check(sz: Sizes, ok: bool, message: &str) {
    if ok {
        return;
    }
    assert!(sz.full, "{message}");
    println!("CHECK FAILED: {message}");
}

// Output ----------------------------------------------------------------------------------------

fn bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * MIB as f64 {
        format!("{:.2} GiB", b / (1024.0 * MIB as f64))
    } else if b >= MIB as f64 {
        format!("{:.1} MiB", b / MIB as f64)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

fn millis(ms: f64) -> String {
    if ms >= 1000.0 { format!("{:.2} s", ms / 1e3) } else { format!("{ms:.1} ms") }
}

fn opt(v: Option<u64>) -> String {
    v.map_or("—".into(), |v| v.to_string())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "—".into(),
    }
}

/// The machine-readable results, written to `target/buffer-bench.json`: every round of every
/// runner, and their medians, by section ([`report::suite_section`]).
#[derive(Debug, Default)]
struct Sections {
    sections: serde_json::Map<String, Value>,
}

impl Sections {
    fn section(&mut self, name: &str, params: Value, labels: &[&str], samples: &[Vec<Sample>]) {
        let runners: Vec<(&str, &[Sample])> =
            labels.iter().zip(samples).map(|(label, runs)| (*label, runs.as_slice())).collect();
        self.sections.insert(name.to_owned(), report::suite_section(params, &runners));
    }
}

/// Runs the sections whose names contain one of `filters` (all with no filter): a full run
/// with `full` (the reports' sizes, three rounds, tables on stdout, the results written to
/// `json_out`), else a check at tiny sizes.
///
/// # Panics
///
/// When a run fails or, in a check, a result is not as expected.
pub fn run(paths: &Paths, full: bool, filters: &[&str], json_out: &Path) {
    let sz = if full { FULL } else { TEST };
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f));
    let node = peers::node_version();
    if node.is_none() {
        println!("SKIPPED: Node peers (node is not on PATH)");
    }
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let parent_rss = child::own_rss().unwrap_or(0);
    let mut out = Sections::default();
    let started = Instant::now();
    // The sections with children first, while this process is small (see `run_child`).
    if wanted("burst") {
        burst(paths, sz, node.is_some(), &mut out);
        println!("burst: ok");
    }
    if wanted("chains") {
        chains(paths, sz, node.is_some(), &mut out);
        println!("chains: ok");
    }
    if wanted("sweep") {
        sweep(paths, sz, &mut out);
        println!("sweep: ok");
    }
    if sz.full && !out.sections.is_empty() {
        out.sections.insert(
            "machine".into(),
            json!({
                "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
                "loadavg_at_start": loadavg.trim(),
                "node": node,
                "bench_process_rss": parent_rss,
                "seconds": started.elapsed().as_secs_f64().round(),
            }),
        );
        let text = serde_json::to_string_pretty(&out.sections).expect("results as JSON");
        std::fs::write(json_out, text + "\n").unwrap_or_else(|e| panic!("write {}: {e}", json_out.display()));
        println!("\nwrote {}", json_out.display());
    }
}

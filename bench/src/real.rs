//! `wrt bench real`: a real-world-shaped program, the guest `bench_tree_search`, run by `wrt run`
//! and by `wasmtime run` as new processes, as a core module and as the component built from the
//! same source, against the same program compiled for the host and run in the bench process
//! (the floor). Nothing is built or fetched at run time: both guests are built into the binary
//! ([`crate::guests`]), and the native program is their crate (`tree-search`), compiled into
//! `wrt-bench`.
//!
//! Each configuration is one case ([`RealCase`]): `tree-search /t NEEDLE` over a tree of
//! `files` files of about 2 KiB in nested directories, `hexdump /t/input.bin` of a 1 MiB file,
//! or `emit BYTES` to a pipe. One run (a round) makes the case's input in a temporary
//! directory (`real/fixture.rs`) and mounts it at `/t` (`--dir INPUT::/t`, both runtimes alike);
//! runs the native program once for the reference output and each runtime once, untimed (it
//! compiles the guest into the round's cache), whose whole output must be the reference, byte
//! for byte; then `n` turns of the three sides, in an order that rotates from turn to turn,
//! each process's stdout a pipe that this process drains and checks. A round's figures are the
//! medians of its `n` runs of each side: wall time (spawn to reap) and the process's CPU time
//! (user + system, all its threads, from `wait4`).

mod fixture;

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::child::{self, Drained};
use crate::figures::Centre;
use crate::run_commands::{Clis, NO_WASMTIME};
use crate::sample::Sample;
use crate::setting::{ParamError, RealCase, Setting};
use crate::workload::columns::{Column, Goal, MS_PER_RUN, Measure, WASMTIME_MS, figure, ratio};
use crate::workload::compared::{self, Baseline};
use crate::workload::{self, Workload};
use crate::{BenchError, guests};

/// The goal for every case: `wrt run` takes at most this many times `wasmtime run`'s time
/// (medians).
pub const GOAL_OF_WASMTIME: f64 = 1.0;

/// What tree-search looks for; no word of the tree has its hyphen.
pub const NEEDLE: &str = "wrt-needle";

/// The size of the file that hexdump dumps.
pub const HEXDUMP_INPUT: usize = 1 << 20;

/// Where the case's input is mounted in the guest.
const MOUNT: &str = "/t";

/// What a case's program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    TreeSearch,
    Hexdump,
    Emit,
}

impl RealCase {
    fn mode(self) -> Mode {
        match self {
            RealCase::TreeSearchCore | RealCase::TreeSearchComponent => Mode::TreeSearch,
            RealCase::HexdumpCore | RealCase::HexdumpComponent => Mode::Hexdump,
            RealCase::EmitCore => Mode::Emit,
        }
    }

    /// The guest's file name and bytes: the core module or the component.
    fn guest(self) -> (&'static str, &'static [u8]) {
        match self {
            RealCase::TreeSearchComponent | RealCase::HexdumpComponent => {
                ("component_bench_tree_search.wasm", guests::COMPONENT_BENCH_TREE_SEARCH)
            }
            RealCase::TreeSearchCore | RealCase::HexdumpCore | RealCase::EmitCore => {
                ("bench_tree_search.wasm", guests::BENCH_TREE_SEARCH)
            }
        }
    }
}

/// One side of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Wrt,
    Wasmtime,
    Native,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Wrt => "wrt run",
            Side::Wasmtime => "wasmtime run",
            Side::Native => "the native program",
        }
    }

    /// The error of this side: the floor's, a peer's or the guest's.
    fn error(self, message: String) -> BenchError {
        match self {
            Side::Wrt => BenchError::Guest(message),
            Side::Wasmtime => BenchError::Peer(message),
            Side::Native => BenchError::Floor(message),
        }
    }
}

/// One run of one side: what it wrote, its wall time and its CPU time (none for the native
/// side, which runs in this process).
#[derive(Debug)]
struct Run {
    stdout: Drained,
    wall: Duration,
    cpu: Option<Duration>,
}

/// A case made ready in a round's directory: its input and its guest's command lines.
struct Case<'a> {
    clis: &'a Clis,
    mode: Mode,
    /// The host directory mounted at `/t`.
    input: PathBuf,
    guest: PathBuf,
    args: Vec<String>,
    bytes: u64,
}

impl Case<'_> {
    /// Flags, guest and arguments after `wrt run` or `wasmtime run`.
    fn command(&self, mut cmd: Command) -> Command {
        if self.mode != Mode::Emit {
            cmd.arg("--dir").arg(format!("{}::{MOUNT}", self.input.display()));
        }
        cmd.arg(&self.guest).args(&self.args);
        cmd
    }

    /// One run of `side` (`None`: wasmtime is not there); with `digest`, a digest of all its
    /// output too.
    fn run(&self, side: Side, digest: bool) -> Result<Option<Run>, BenchError> {
        let cmd = match side {
            Side::Native => return self.native(digest).map(Some),
            Side::Wrt => self.clis.wrt_run(),
            Side::Wasmtime => match self.clis.wasmtime_run() {
                Some(cmd) => cmd,
                None => return Ok(None),
            },
        };
        let mut cmd = self.command(cmd);
        let run = child::run_drained(&mut cmd, digest).map_err(|e| side.error(e.to_string()))?;
        if run.code != 0 {
            return Err(side.error(format!("{cmd:?} ended with {}: {}", run.code, run.stderr.trim())));
        }
        Ok(Some(Run { stdout: run.stdout, wall: run.wall, cpu: Some(run.cpu) }))
    }

    /// The native program: the guest's source compiled for the host, run in this process on
    /// the same input, writing to a pipe that a thread drains as the children's are.
    fn native(&self, digest: bool) -> Result<Run, BenchError> {
        let failed = |e: std::io::Error| BenchError::Floor(format!("the native program: {e}"));
        let (reader, writer) = std::io::pipe().map_err(failed)?;
        let start = Instant::now();
        let (wrote, drained) = std::thread::scope(|s| {
            let drainer = s.spawn(move || child::drain(reader, digest));
            let wrote = match self.mode {
                Mode::TreeSearch => tree_search::tree_search(&self.input, NEEDLE.as_bytes(), writer),
                Mode::Hexdump => tree_search::hexdump(&self.input.join("input.bin"), writer),
                Mode::Emit => tree_search::emit(self.bytes, writer),
            };
            let drained = drainer.join().unwrap_or_else(|_| Err(std::io::Error::other("the drain panicked")));
            (wrote, drained)
        });
        let wall = start.elapsed();
        wrote.map_err(failed)?;
        Ok(Run { stdout: drained.map_err(failed)?, wall, cpu: None })
    }
}

/// Checks that `got` (from `side`) is `reference`, the native program's output: the same bytes
/// (by digest, when both have one), or at least as many and the same first ones.
fn check(side: Side, reference: &Drained, got: &Drained) -> Result<(), BenchError> {
    let same_digest = match (reference.digest, got.digest) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    if got.bytes == reference.bytes && got.head == reference.head && same_digest {
        return Ok(());
    }
    let shown = |d: &Drained| {
        let head = String::from_utf8_lossy(&d.head[..d.head.len().min(80)]).into_owned();
        format!("{} bytes starting `{}`", d.bytes, head.trim_end())
    };
    Err(side.error(format!(
        "{} wrote {}, the native program {}{}",
        side.name(),
        shown(got),
        shown(reference),
        if same_digest { "" } else { " (the same length, other bytes)" }
    )))
}

/// The median of `values`, in milliseconds.
fn median_ms(values: &[Duration]) -> Option<f64> {
    Centre::Median.of_values(&values.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>())
}

/// One round of `p`'s case (see the module's documentation): the medians of `p.n` runs of each
/// side; without wasmtime, of wrt's and the native program's.
pub(crate) fn round(p: &RealParams) -> Result<Sample, BenchError> {
    let clis = Clis::new()?;
    let (name, bytes) = p.case.guest();
    let guest = clis.write(name, bytes)?;
    let input = clis.dir().join("input");
    let write_failed = |source| BenchError::Write { path: input.clone(), source };
    let mode = p.case.mode();
    let (args, summary) = match mode {
        Mode::TreeSearch => {
            let tree = fixture::tree(&input, p.files, NEEDLE).map_err(write_failed)?;
            (vec!["tree-search".to_owned(), MOUNT.to_owned(), NEEDLE.to_owned()], Some(tree.summary()))
        }
        Mode::Hexdump => {
            std::fs::create_dir(&input).map_err(write_failed)?;
            fixture::bytes(&input.join("input.bin"), HEXDUMP_INPUT).map_err(write_failed)?;
            (vec!["hexdump".to_owned(), format!("{MOUNT}/input.bin")], None)
        }
        Mode::Emit => (vec!["emit".to_owned(), p.bytes.to_string()], None),
    };
    let case = Case { clis: &clis, mode, input: input.clone(), guest, args, bytes: p.bytes };
    let reference = case.native(true)?.stdout;
    if let Some(summary) = summary
        && reference.head != summary.as_bytes()
    {
        return Err(BenchError::Floor(format!(
            "the native tree-search printed `{}`, the tree holds `{}`",
            String::from_utf8_lossy(&reference.head).trim_end(),
            summary.trim_end()
        )));
    }
    // Each runtime's first run compiles the guest into the round's cache; it is not timed.
    for side in [Side::Wrt, Side::Wasmtime] {
        if let Some(run) = case.run(side, true)? {
            check(side, &reference, &run.stdout)?;
        }
    }
    let sides =
        if clis.has_wasmtime() { &[Side::Wrt, Side::Wasmtime, Side::Native][..] } else { &[Side::Wrt, Side::Native] };
    let mut runs: BTreeMap<&str, (Vec<Duration>, Vec<Duration>)> = BTreeMap::new();
    for turn in 0..p.n as usize {
        for &side in sides.iter().cycle().skip(turn % sides.len()).take(sides.len()) {
            let Some(run) = case.run(side, false)? else { continue };
            check(side, &reference, &run.stdout)?;
            let (walls, cpus) = runs.entry(side.name()).or_default();
            walls.push(run.wall);
            cpus.extend(run.cpu);
        }
    }
    let figure = |side: Side, cpu: bool| {
        runs.get(side.name()).and_then(|(walls, cpus)| median_ms(if cpu { cpus } else { walls }))
    };
    let missing = || BenchError::Guest("no run was timed".to_owned());
    let (ms, native_ms) =
        (figure(Side::Wrt, false).ok_or_else(missing)?, figure(Side::Native, false).ok_or_else(missing)?);
    let mut extra = BTreeMap::from([
        ("ms_per_run".to_owned(), ms),
        ("native_ms_per_run".to_owned(), native_ms),
        ("stdout_bytes".to_owned(), reference.bytes as f64),
    ]);
    extra.extend(figure(Side::Wrt, true).map(|cpu| ("cpu_ms_per_run".to_owned(), cpu)));
    if let (Some(wasmtime), Some(wasmtime_cpu)) = (figure(Side::Wasmtime, false), figure(Side::Wasmtime, true)) {
        extra.insert("wasmtime_ms_per_run".to_owned(), wasmtime);
        extra.insert("wasmtime_cpu_ms_per_run".to_owned(), wasmtime_cpu);
        extra.insert("time_of_wasmtime".to_owned(), ms / wasmtime);
        if let Some(cpu) = extra.get("cpu_ms_per_run").copied() {
            extra.insert("cpu_of_wasmtime".to_owned(), cpu / wasmtime_cpu);
        }
    }
    Ok(Sample { rate: 1e3 / ms, floor_rate: 1e3 / native_ms, extra })
}

/// The most files `wrt bench real --files` takes.
pub const MAX_FILES: u32 = 1_000_000;

/// Parameters of `wrt bench real`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RealParams {
    /// Timed runs of each side (`wrt run`, `wasmtime run`, the native program) per run.
    pub n: u32,
    /// Files in the tree that tree-search walks.
    pub files: u32,
    /// Bytes that emit writes.
    pub bytes: u64,
    /// What runs.
    pub case: RealCase,
}

impl Default for RealParams {
    fn default() -> Self {
        Self { n: 10, files: 2000, bytes: 100 << 20, case: RealCase::TreeSearchCore }
    }
}

impl Workload for RealParams {
    fn name(&self) -> &'static str {
        "real"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "files", "bytes", "case"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("processes", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        Some(match key {
            "n" => Setting::N(self.n),
            "files" => Setting::Files(self.files),
            "bytes" => Setting::Bytes(self.bytes),
            "case" => Setting::Case(self.case),
            _ => return None,
        })
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::N(n) => self.n = n,
            Setting::Files(f) => {
                self.files = Some(f)
                    .filter(|f| (1..=MAX_FILES).contains(f))
                    .ok_or_else(|| setting.out_of_range(&format!("must be between 1 and {MAX_FILES}")))?;
            }
            Setting::Bytes(0) => return Err(setting.out_of_range("must be at least 1 byte")),
            Setting::Bytes(b) => self.bytes = b,
            Setting::Case(c) => self.case = c,
            other => return Err(workload::unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        round(self)
    }

    fn unit(&self) -> &'static str {
        "runs/s"
    }

    fn columns(&self) -> &'static [Column] {
        const CPU_MS: Measure = ("cpu_ms_per_run", "CPU ms");
        const WASMTIME_CPU_MS: Measure = ("wasmtime_cpu_ms_per_run", "wasmtime CPU ms");
        const COLUMNS: &[Column] = &[
            figure(MS_PER_RUN),
            figure(WASMTIME_MS),
            ratio(MS_PER_RUN, WASMTIME_MS, "time/wasmtime"),
            figure(CPU_MS),
            figure(WASMTIME_CPU_MS),
            ratio(CPU_MS, WASMTIME_CPU_MS, "CPU/wasmtime"),
        ];
        COLUMNS
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt run"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline {
            name: "native",
            legend: "native: the same program compiled for the host, in the bench process",
            against: "the native program",
        }
    }

    fn plot_sides(&self) -> &'static [compared::Side] {
        &[crate::component::WASMTIME_RUN]
    }

    fn plot_rates(&self) -> &'static str {
        "runs/s of wrt run and wasmtime run"
    }

    fn plot_subject(&self) -> &'static str {
        "tree-search, hexdump and emit as new processes"
    }

    fn legend(&self) -> Option<&'static str> {
        Some(
            "ms: wall time of one process, spawn to reap; CPU ms: its user + system time, all its threads; \
             floor: the same program compiled for the host, run in the bench process.",
        )
    }

    fn goals(&self) -> &'static [Goal] {
        &[Goal { column: "time/wasmtime", name: "wrt/wasmtime", at_most: GOAL_OF_WASMTIME, unmeasured: NO_WASMTIME }]
    }

    /// Its ratios are read against goals.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("`wasmtime run` and the native program")
    }

    /// `--case` gives every case by default.
    fn compare_replaces(&self) -> &'static [&'static str] {
        &["case"]
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn drained(bytes: u64, head: &[u8], digest: Option<u64>) -> Drained {
        Drained { bytes, head: head.to_vec(), digest }
    }

    /// An output that differs from the native program's in length, in its first bytes or in
    /// its digest fails the round, naming the side.
    #[test]
    fn other_output_than_the_native_program_s_is_an_error() {
        let reference = drained(100, b"files=1 bytes=2 matches=3\n", Some(7));
        check(Side::Wrt, &reference, &reference).unwrap();
        check(Side::Wasmtime, &reference, &drained(100, b"files=1 bytes=2 matches=3\n", None)).unwrap();
        let short = check(Side::Wrt, &reference, &drained(99, b"files=1 bytes=2 matches=3\n", Some(7))).unwrap_err();
        assert!(matches!(short, BenchError::Guest(_)), "{short}");
        let text = short.to_string();
        assert!(text.contains("wrt run wrote 99 bytes starting `files=1 bytes=2 matches=3`"), "{text}");
        let other = check(Side::Wasmtime, &reference, &drained(100, b"files=1 bytes=2 matches=4\n", None));
        assert!(matches!(other, Err(BenchError::Peer(_))), "{other:?}");
        let digest = check(Side::Wrt, &reference, &drained(100, b"files=1 bytes=2 matches=3\n", Some(8)));
        assert!(digest.unwrap_err().to_string().contains("the same length, other bytes"));
    }

    fn case<'a>(clis: &'a Clis, mode: Mode, input: &Path, bytes: u64) -> Case<'a> {
        Case { clis, mode, input: input.to_owned(), guest: input.join("guest.wasm"), args: Vec::new(), bytes }
    }

    /// The native program (the guest's source, compiled for the host) finds what the tree
    /// holds, dumps in the layout of `hexdump -C` and emits every byte.
    #[test]
    fn the_native_program_does_the_guest_s_work() {
        let clis = Clis::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let tree = fixture::tree(&dir.path().join("tree"), 120, NEEDLE).unwrap();
        let search = case(&clis, Mode::TreeSearch, &dir.path().join("tree"), 0).native(true).unwrap();
        assert_eq!(String::from_utf8_lossy(&search.stdout.head), tree.summary());
        assert!(search.cpu.is_none() && search.wall > Duration::ZERO);

        fixture::bytes(&dir.path().join("input.bin"), 40).unwrap();
        let dump = case(&clis, Mode::Hexdump, dir.path(), 0).native(true).unwrap().stdout;
        let text = String::from_utf8(dump.head.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0].len(), tree_search::HEXDUMP_LINE - 1, "{text}");
        assert!(lines[0].starts_with("00000000  ") && lines[1].starts_with("00000010  "), "{text}");
        assert_eq!(&lines[0][33..35], "  ", "{text}");
        assert_eq!(lines[3], "00000028", "{text}");
        // The last line, 8 bytes, lines its ASCII column up with the full lines'.
        assert_eq!(lines[2].find('|'), lines[0].find('|'), "{text}");
        if let Ok(out) = Command::new("hexdump").arg("-C").arg(dir.path().join("input.bin")).output()
            && out.status.success()
        {
            assert_eq!(String::from_utf8_lossy(&out.stdout), text);
        }

        let emitted = case(&clis, Mode::Emit, dir.path(), 200_000).native(true).unwrap().stdout;
        assert_eq!(emitted.bytes, 200_000);
        assert!(emitted.head.chunks(64).all(|line| line.len() < 64 || line.ends_with(b"\n")));
    }

    #[test]
    fn every_case_has_its_guest() {
        for case in RealCase::ALL {
            let (name, bytes) = case.guest();
            assert!(name.ends_with(".wasm") && bytes.starts_with(b"\0asm"), "{}", case.name());
            assert_eq!(name.starts_with("component_"), case.name().ends_with("-component"));
        }
    }
}

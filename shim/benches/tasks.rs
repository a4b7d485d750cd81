//! Task start-to-exit time through containerd: the hello guest as a container of the runtime
//! `io.containerd.wrt.v1`, against the same module run by `wrt run` inside an ordinary runc
//! container (an image holding the `wrt` binary and its libraries), against a runc container
//! that runs busybox's `echo` (the floor: containerd, runc and `ctr` without wrt), and against
//! `wrt run` alone on the host, all in one run against one private containerd. Each task is one
//! `ctr run --rm`: the client, the container's creation, the run, its deletion.
//!
//! `cargo bench -p containerd-shim-wrt-v1 --bench tasks` (root, containerd and runc
//! installed, the `wrt` binary built: `cargo build --release`) prints a markdown table:
//! the first task of each kind (cold: a new containerd, a new shim binary), the median and the
//! quartiles of `WRT_BENCH_TASKS` more (default 20, interleaved, one at a time), and tasks per
//! second with 2 at a time. The shim caches compiled guests in a directory of the run's own, or
//! as `CONTAINERD_SHIM_WRT_CACHE` says (`off`: every container compiles). With `--test` (as `cargo bench -- --test` runs it) each kind runs
//! once and its output is checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use wrt_shim::image::{GUEST_PATH, Image, ImageFile};
use wrt_shim::node::CACHE_VAR;

use wrt_containerd_harness::containerd::Containerd;

/// The shim's binary, which the harness puts on containerd's `PATH`.
const SHIM: &str = env!("CARGO_BIN_EXE_containerd-shim-wrt-v1");

/// What every hello task prints.
const HELLO: &str = r#"hello from a wrt guest, args = ["from", "containerd"]"#;

/// One kind of task.
#[derive(Clone, Copy)]
enum Kind {
    /// `ctr run --runtime io.containerd.wrt.v1` of the hello image.
    Shim,
    /// `ctr run` (runc) of an image whose entrypoint is `wrt run /app.wasm`.
    RuncWrt,
    /// `ctr run` (runc) of busybox's `echo`: a container without wrt, the floor.
    RuncEcho,
    /// `wrt run` of the module, on the host.
    WrtAlone,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Shim, Kind::RuncWrt, Kind::RuncEcho, Kind::WrtAlone];

    fn name(self) -> &'static str {
        match self {
            Kind::Shim => "shim (`io.containerd.wrt.v1`)",
            Kind::RuncWrt => "runc + `wrt run`",
            Kind::RuncEcho => "runc + busybox `echo` (no wrt)",
            Kind::WrtAlone => "`wrt run` alone, no container",
        }
    }
}

struct Bench<'a> {
    containerd: &'a Containerd,
    wrt: PathBuf,
    shim_image: String,
    runc_image: String,
    echo_image: String,
}

impl Bench<'_> {
    /// Runs one task of `kind` as `id`, checks its output, and returns its time.
    fn task(&self, kind: Kind, id: &str) -> Duration {
        let started = Instant::now();
        let out = match kind {
            Kind::Shim => self.containerd.run(&self.shim_image, id),
            Kind::RuncWrt => self.containerd.ctr(&["run", "--rm", &self.runc_image, id]),
            Kind::RuncEcho => self.containerd.ctr(&["run", "--rm", &self.echo_image, id]),
            Kind::WrtAlone => wrt_run(&self.wrt),
        };
        let took = started.elapsed();
        check(kind, &out, self.containerd);
        took
    }
}

fn wrt_run(wrt: &Path) -> Output {
    Command::new(wrt).args(["run", wrt_test_guests::CLI_HELLO, "from", "containerd"]).output().unwrap()
}

fn check(kind: Kind, out: &Output, containerd: &Containerd) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(HELLO),
        "{}: {:?}\nstdout: {stdout}\nstderr: {}\ncontainerd: {}",
        kind.name(),
        out.status,
        String::from_utf8_lossy(&out.stderr),
        containerd.log()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--list") {
        println!("tasks: benchmark");
        return;
    }
    let full = has("--bench") && !has("--test");
    let runs: usize =
        if full { std::env::var("WRT_BENCH_TASKS").ok().and_then(|n| n.parse().ok()).unwrap_or(20) } else { 1 };
    // `target/<profile>/wrt` (this executable is `target/<profile>/deps/tasks-<hash>`).
    let exe = std::env::current_exe().unwrap();
    let wrt = exe.ancestors().nth(2).unwrap().join("wrt");
    assert!(wrt.is_file(), "{} is missing: build it first (cargo build --release)", wrt.display());
    // The shim's cache: a directory of this run's own unless the bench's environment sets one
    // (`CONTAINERD_SHIM_WRT_CACHE=off` measures compiling in every container).
    let cache = std::env::var(CACHE_VAR).ok();
    let env: Vec<(&str, &str)> = cache.iter().map(|value| (CACHE_VAR, value.as_str())).collect();
    let Some(containerd) = Containerd::start_with(SHIM, "bench_tasks", &env) else { return };
    let bench = Bench {
        containerd: &containerd,
        shim_image: containerd.import(&hello_image("docker.io/wrt-bench/hello:latest")),
        runc_image: containerd.import(&runc_wrt_image(&wrt)),
        echo_image: containerd.import(&echo_image()),
        wrt,
    };

    let mut cold = Vec::new();
    for (i, kind) in Kind::ALL.into_iter().enumerate() {
        cold.push(bench.task(kind, &format!("cold-{i}")));
    }
    // Interleaved, so that drift on a shared machine falls on every kind alike.
    let mut warm: [Vec<Duration>; 4] = Default::default();
    for run in 0..runs {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            warm[i].push(bench.task(kind, &format!("warm-{i}-{run}")));
        }
    }
    let mut parallel = Vec::new();
    for (i, kind) in Kind::ALL.into_iter().enumerate() {
        parallel.push(tasks_per_second(&bench, kind, 2, runs, i));
    }

    println!("\n{runs} warm task(s) of each kind, one at a time, interleaved; then {runs} per worker, 2 workers\n");
    println!("| task | cold ms | warm median ms | warm quartiles ms | tasks/s, 1 at a time | tasks/s, 2 at a time |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut medians = Vec::new();
    for (i, kind) in Kind::ALL.into_iter().enumerate() {
        let times = &mut warm[i];
        times.sort();
        let median = times[times.len() / 2];
        medians.push(median);
        println!(
            "| {} | {:.0} | {:.0} | {:.0} to {:.0} | {:.1} | {:.1} |",
            kind.name(),
            ms(cold[i]),
            ms(median),
            ms(times[times.len() / 4]),
            ms(times[times.len() * 3 / 4]),
            1.0 / median.as_secs_f64(),
            parallel[i],
        );
    }
    let ratio = |a: usize, b: usize| medians[a].as_secs_f64() / medians[b].as_secs_f64();
    println!(
        "\nwarm medians: shim / (runc + wrt run) = {:.2}x; shim / (runc + echo) = {:.2}x; shim / wrt run alone = {:.1}x",
        ratio(0, 1),
        ratio(0, 2),
        ratio(0, 3),
    );
}

/// Tasks per second of `kind` with `workers` running `each` tasks at once.
fn tasks_per_second(bench: &Bench<'_>, kind: Kind, workers: usize, each: usize, tag: usize) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for worker in 0..workers {
            scope.spawn(move || {
                for run in 0..each {
                    bench.task(kind, &format!("par-{tag}-{worker}-{run}"));
                }
            });
        }
    });
    (workers * each) as f64 / started.elapsed().as_secs_f64()
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

fn hello_image(name: &str) -> Image {
    Image {
        name: name.into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        args: vec!["from".into(), "containerd".into()],
        ..Image::default()
    }
}

/// The floor's image: busybox as `/bin/echo` (its applets dispatch on `argv[0]`), printing
/// what the guest prints.
fn echo_image() -> Image {
    Image {
        name: "docker.io/wrt-bench/echo:latest".into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        files: vec![ImageFile { source: "/bin/busybox".into(), path: "/bin/echo".into(), mode: 0o755 }],
        entrypoint: Some("/bin/echo".into()),
        args: vec![HELLO.into()],
        ..Image::default()
    }
}

/// The baseline's image: the same module at [`GUEST_PATH`], and `wrt` with the shared
/// libraries it loads (as `ldd` lists them, at the same paths), run by runc.
fn runc_wrt_image(wrt: &Path) -> Image {
    let ldd = Command::new("ldd").arg(wrt).output().expect("ldd");
    let mut files = vec![ImageFile { source: wrt.to_owned(), path: "/wrt".into(), mode: 0o755 }];
    for line in String::from_utf8_lossy(&ldd.stdout).lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or `/lib64/ld-linux-x86-64.so.2 (0x…)`
        let path = line.split("=>").last().unwrap_or_default().split_whitespace().next().unwrap_or_default();
        if path.starts_with('/') {
            files.push(ImageFile { source: path.into(), path: path.into(), mode: 0o755 });
        }
    }
    Image {
        entrypoint: Some("/wrt".into()),
        args: vec!["run".into(), GUEST_PATH.into(), "from".into(), "containerd".into()],
        files,
        ..hello_image("docker.io/wrt-bench/runc-wrt:latest")
    }
}

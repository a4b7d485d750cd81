//! A pod from start to exit through the CRI, as a kubelet drives it: the hello guest in a pod of
//! the runtime `wrt` against busybox's `echo` in a pod of runc (the floor: containerd's CRI, the
//! pause container and runc, without wrt), in one run against one private containerd. One pod
//! is RunPodSandbox (its pause container started), CreateContainer, StartContainer and
//! ContainerStatus polled every 2 ms until the container has exited (*start to exit*), then
//! StopPodSandbox and RemovePodSandbox (*with removal*).
//!
//! `cargo bench -p containerd-shim-wrt-v1 --bench pods` (root, containerd and runc installed)
//! prints a markdown table: the first pod of each kind (cold: a new containerd, a new shim
//! binary, the guest compiled into the shim's cache), the median and quartiles of
//! `WRT_BENCH_PODS` more (default 20, interleaved, one at a time), and the wall time of 10 pods
//! started at once (the median of 3 rounds), with wrt's figures over runc's. With `--test` (as
//! `cargo bench -- --test` runs it) each kind runs once, and its log is checked.

use std::time::{Duration, Instant};

use wrt_shim::image::{Image, ImageFile};

use wrt_containerd_harness::cri::{Cri, Security};

/// The shim's binary, which the harness puts on containerd's `PATH`.
const SHIM: &str = env!("CARGO_BIN_EXE_containerd-shim-wrt-v1");

/// Pods started at once in the concurrent rounds.
const AT_ONCE: usize = 10;

/// The kinds of pod, with what each one's container prints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The hello guest, handler `wrt`.
    Wrt,
    /// busybox's `echo`, handler `runc`.
    RuncEcho,
}

impl Kind {
    const ALL: [Kind; 2] = [Kind::Wrt, Kind::RuncEcho];

    fn name(self) -> &'static str {
        match self {
            Kind::Wrt => "wrt (hello guest)",
            Kind::RuncEcho => "runc (busybox `echo`)",
        }
    }

    fn handler(self) -> &'static str {
        match self {
            Kind::Wrt => "wrt",
            Kind::RuncEcho => "runc",
        }
    }

    fn says(self) -> &'static str {
        match self {
            Kind::Wrt => r#"hello from a wrt guest, args = ["from", "the", "cri"]"#,
            Kind::RuncEcho => "hello from the cri",
        }
    }
}

/// What one pod took.
#[derive(Clone, Copy)]
struct Timing {
    start_to_exit: Duration,
    with_removal: Duration,
}

struct Bench {
    cri: Cri,
    hello: String,
    busybox: String,
}

impl Bench {
    /// Runs one pod of `kind` to its container's exit and removes it; `check` reads its log.
    fn pod(&self, kind: Kind, check: bool) -> Timing {
        let cri = &self.cri;
        let pod = cri.pod(&format!("bench-{}", kind.handler()), Security::Default);
        let container = match kind {
            Kind::Wrt => cri.container("hello", &self.hello, &[], &["from", "the", "cri"], Security::Default),
            Kind::RuncEcho => cri.container(
                "echo",
                &self.busybox,
                &["/bin/echo"],
                &["hello", "from", "the", "cri"],
                Security::Default,
            ),
        };
        let started = Instant::now();
        let pod_id = cri.run_pod_sandbox(kind.handler(), &pod).unwrap_or_else(|err| panic!("RunPodSandbox: {err}"));
        let id = cri.create_container(&pod_id, &container, &pod).unwrap_or_else(|err| panic!("CreateContainer: {err}"));
        cri.start_container(&id).unwrap_or_else(|err| panic!("StartContainer: {err}"));
        let exit_code = loop {
            let status = cri.container_status(&id).unwrap_or_else(|err| panic!("ContainerStatus: {err}"));
            let status = status.status.expect("a container status");
            if status.state() == k8s_cri::v1::ContainerState::ContainerExited {
                break status.exit_code;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "the container did not exit: {status:?}");
            std::thread::sleep(Duration::from_millis(2));
        };
        let start_to_exit = started.elapsed();
        assert_eq!(exit_code, 0, "{}: exit code {exit_code}: {:?}", kind.name(), cri.log_lines(&id));
        if check {
            let lines = cri.wait_for_log(&id, Duration::from_secs(10), |line| line == kind.says());
            assert_eq!(lines, [kind.says()], "{}", kind.name());
        }
        cri.stop_pod_sandbox(&pod_id).unwrap_or_else(|err| panic!("StopPodSandbox: {err}"));
        cri.remove_pod_sandbox(&pod_id).unwrap_or_else(|err| panic!("RemovePodSandbox: {err}"));
        Timing { start_to_exit, with_removal: started.elapsed() }
    }

    /// The wall time of [`AT_ONCE`] pods of `kind` started at once, each on a thread of its own.
    fn at_once(&self, kind: Kind) -> Duration {
        let started = Instant::now();
        std::thread::scope(|threads| {
            for _ in 0..AT_ONCE {
                threads.spawn(|| self.pod(kind, false));
            }
        });
        started.elapsed()
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `q`-quantile of sorted `values` (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank]
}

fn main() {
    let test_mode = std::env::args().any(|a| a == "--test");
    let Some(cri) = Cri::start(SHIM, "bench_pods") else { return };
    let busybox_files = ["sh", "echo", "sleep"]
        .into_iter()
        .map(|name| ImageFile { source: "/bin/busybox".into(), path: format!("/bin/{name}"), mode: 0o755 })
        .collect();
    let busybox = cri.import(&Image {
        name: "docker.io/wrt-bench/busybox:latest".into(),
        // The image builder puts a guest at /app.wasm; nothing runs it here.
        guest: wrt_test_guests::CLI_HELLO.into(),
        files: busybox_files,
        env: vec!["PATH=/bin".into()],
        entrypoint: Some("/bin/echo".into()),
        ..Image::default()
    });
    let hello = cri.import(&Image {
        name: "docker.io/wrt-bench/hello:latest".into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        ..Image::default()
    });
    let bench = Bench { cri, hello, busybox };

    let cold: Vec<Timing> = Kind::ALL.iter().map(|&kind| bench.pod(kind, true)).collect();
    if test_mode {
        println!("pods: each kind ran once and printed what it should");
        return;
    }
    let n: usize = std::env::var("WRT_BENCH_PODS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let mut warm: Vec<Vec<Timing>> = vec![Vec::new(); Kind::ALL.len()];
    for round in 0..n {
        // Interleaved, in an order that alternates, so that drift hits both kinds alike.
        for i in 0..Kind::ALL.len() {
            let k = (i + round) % Kind::ALL.len();
            warm[k].push(bench.pod(Kind::ALL[k], false));
        }
    }
    let mut at_once: Vec<Vec<Duration>> = vec![Vec::new(); Kind::ALL.len()];
    for round in 0..3 {
        for i in 0..Kind::ALL.len() {
            let k = (i + round) % Kind::ALL.len();
            at_once[k].push(bench.at_once(Kind::ALL[k]));
        }
    }

    println!(
        "| pod | cold ms | start to exit, median ms | quartiles ms | with removal, median ms | {AT_ONCE} at once, wall ms | pods/s, {AT_ONCE} at once |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut medians = Vec::new();
    for (k, kind) in Kind::ALL.iter().enumerate() {
        let mut exit: Vec<Duration> = warm[k].iter().map(|t| t.start_to_exit).collect();
        let mut removal: Vec<Duration> = warm[k].iter().map(|t| t.with_removal).collect();
        exit.sort();
        removal.sort();
        at_once[k].sort();
        let batch = quantile(&at_once[k], 0.5);
        medians.push((quantile(&exit, 0.5), quantile(&removal, 0.5), batch));
        println!(
            "| {} | {:.0} | {:.1} | {:.1} to {:.1} | {:.1} | {:.0} | {:.1} |",
            kind.name(),
            millis(cold[k].start_to_exit),
            millis(quantile(&exit, 0.5)),
            millis(quantile(&exit, 0.25)),
            millis(quantile(&exit, 0.75)),
            millis(quantile(&removal, 0.5)),
            millis(batch),
            AT_ONCE as f64 / batch.as_secs_f64(),
        );
    }
    let (wrt, runc) = (medians[0], medians[1]);
    println!();
    println!(
        "wrt / runc: start to exit {:.2}x, with removal {:.2}x, {AT_ONCE} at once {:.2}x (N = {n})",
        wrt.0.as_secs_f64() / runc.0.as_secs_f64(),
        wrt.1.as_secs_f64() / runc.1.as_secs_f64(),
        wrt.2.as_secs_f64() / runc.2.as_secs_f64(),
    );
}

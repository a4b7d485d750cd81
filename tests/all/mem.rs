//! Guest linear memory is marked MADV_DONTFORK: a fork of the host does not carry it.

use std::ops::Range;

use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Pid};
use proptest::prelude::*;
use wrt_runtime::{GcPolicy, Outcome, RunOptions, Runtime, WasmValue};
use wrt_test_guests::*;

use crate::util::SPAWN_LOCK;

foreach_mem!(assert_test_exists);
use crate::assert_test_exists;

const TOUCHED_MIB: i32 = 256;

#[test]
fn mem_touch() {
    for dontfork in [true, false] {
        let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let runtime = Runtime::builder().dontfork(dontfork).build().unwrap();
        let guest = runtime.load_file(MEM_TOUCH).unwrap();
        let mut instance = guest.instantiate(&RunOptions::new()).unwrap();
        let outcome = instance.invoke("touch", &[WasmValue::I32(TOUCHED_MIB)]).unwrap();
        assert_eq!(outcome, Outcome::Returned(vec![WasmValue::I32(TOUCHED_MIB * 16)]));
        let range = instance.memory_range().unwrap();
        assert_eq!(range.len(), (TOUCHED_MIB as usize) << 20);

        let flags = vm_flags(range.start).expect("the guest memory is mapped in this process");
        assert_eq!(flags.contains(&"dc".to_owned()), dontfork, "VmFlags: {flags:?}");
        let rss = rss_kib(&range);
        assert!(rss >= (TOUCHED_MIB as u64) << 10, "only {rss} KiB of the guest memory is resident");

        let in_child = mapped_in_forked_child(&range);
        assert_eq!(in_child, !dontfork, "dontfork {dontfork}: guest memory present in the child = {in_child}");
    }
}

/// The `VmFlags` of the mapping that contains `addr`, from `/proc/self/smaps`.
fn vm_flags(addr: usize) -> Option<Vec<String>> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some(range) = parse_range(line) {
            inside = range.contains(&addr);
        } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return Some(flags.split_whitespace().map(str::to_owned).collect());
        }
    }
    None
}

/// Resident KiB of the mappings overlapping `range`.
fn rss_kib(range: &Range<usize>) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    let mut total = 0;
    for line in smaps.lines() {
        if let Some(r) = parse_range(line) {
            inside = r.start < range.end && range.start < r.end;
        } else if inside && let Some(kib) = line.strip_prefix("Rss:") {
            total += kib.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap();
        }
    }
    total
}

/// Parses the `lo-hi` address range that starts a maps/smaps mapping line.
fn parse_range(line: &str) -> Option<Range<usize>> {
    let (range, _) = line.split_once(' ')?;
    let (lo, hi) = range.split_once('-')?;
    Some(usize::from_str_radix(lo, 16).ok()?..usize::from_str_radix(hi, 16).ok()?)
}

/// Forks; the child blocks on a pipe while the parent reads `/proc/<child>/maps` and reports
/// whether any mapping overlaps `range`; then the child exits and is reaped.
fn mapped_in_forked_child(range: &Range<usize>) -> bool {
    let (read_end, write_end) = nix::unistd::pipe().unwrap();
    let child = fork_blocked_on(&read_end, &write_end);
    drop(read_end);
    let maps = std::fs::read_to_string(format!("/proc/{child}/maps"));
    drop(write_end); // the child's read returns 0 and it exits
    let status = waitpid(child, None).unwrap();
    assert!(matches!(status, nix::sys::wait::WaitStatus::Exited(_, 0)), "{status:?}");
    let maps = maps.unwrap();
    maps.lines().filter_map(parse_range).any(|r| r.start < range.end && range.start < r.end)
}

#[allow(unsafe_code, reason = "fork() of a multi-threaded test process; the child only reads and _exits")]
fn fork_blocked_on(read_end: &std::os::fd::OwnedFd, write_end: &std::os::fd::OwnedFd) -> Pid {
    use std::os::fd::AsRawFd;
    let (fd, write_fd) = (read_end.as_raw_fd(), write_end.as_raw_fd());
    // SAFETY: the child calls only async-signal-safe functions (close, read, _exit) on values
    // prepared before the fork, and never returns into Rust code that could allocate or lock.
    match unsafe { nix::unistd::fork() }.unwrap() {
        ForkResult::Child => {
            // SAFETY: closes the child's copy of the write end, so the read below ends when the
            // parent closes its own copy.
            unsafe { libc::close(write_fd) };
            let mut byte = 0u8;
            // SAFETY: `fd` is the read end of a pipe owned by this (child) process; `byte` is a
            // valid one-byte buffer.
            unsafe { libc::read(fd, (&raw mut byte).cast(), 1) };
            // SAFETY: `_exit` is async-signal-safe and ends the child without running any
            // destructor or atexit handler of the parent's state.
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => child,
    }
}

/// The `--stats=json` figures of a `wrt run`.
fn stats_json(out: &std::process::Output) -> std::collections::HashMap<String, f64> {
    let value: serde_json::Value = serde_json::from_str(&crate::util::stats_line(out)).unwrap();
    value.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_f64().unwrap())).collect()
}

#[test]
fn mem_gc_hook() {
    // 2,000 buffers of 128 KiB (250 MiB) that die young: the host calls the guest's collector
    // every 2 MiB (the default Y), never fully, and the guest never holds much more than Y (the
    // collection runs inside an allocation, so the newest buffers survive it). The default Y
    // adapts: a collection the machine slowed down may put the next one off (by 2 MiB, once).
    let young = GcPolicy::DEFAULT_YOUNG_TRIGGER;
    assert_eq!(young, 2 << 20, "the counts below are for Y = 2 MiB");
    let out = crate::util::run(["run", "--stats=json", "--invoke", "run", MEM_GC_HOOK, "2000"]);
    crate::util::assert_code(&out, 0);
    let calls: f64 = crate::util::stdout(&out).trim().parse().unwrap();
    let stats = stats_json(&out);
    assert_eq!(stats["young_collections"], calls, "{stats:?}");
    assert!((100.0..=118.0).contains(&calls), "{calls} collections for 250 MiB at Y = 2 MiB");
    assert_eq!(stats["full_collections"], 0.0);
    let bound = f64::from(u32::try_from(2 * young + 4 * (128 << 10)).unwrap());
    assert!(stats["peak_external"] <= bound, "{stats:?}");
    // At the end: the newest buffer and what was allocated since the last collection.
    assert!(stats["final_external"] <= bound, "{stats:?}");

    // A larger young trigger means fewer, larger collections.
    let out = crate::util::run(["run", "--stats=json", "--gc-young", "8MiB", "--invoke", "run", MEM_GC_HOOK, "2000"]);
    assert!((29.0..=32.0).contains(&stats_json(&out)["young_collections"]));
    let out = crate::util::run(["run", "--stats=json", "--gc-young", "16MiB", "--invoke", "run", MEM_GC_HOOK, "2000"]);
    assert!((14.0..=16.0).contains(&stats_json(&out)["young_collections"]));
}

/// A collector that takes long each time (as one with a large heap of its own to mark does) is
/// called less often under the default policy, whose young trigger grows while collections take
/// more than a quarter of the guest's time (up to half the soft limit, 32 MiB); an explicit
/// `--gc-young` is kept however slow the collector.
#[test]
fn mem_gc_hook_slow_collector_is_called_less_often() {
    // About a millisecond or more per collection, against well under one for the guest's 2 MiB
    // of allocations in between.
    const SPIN: &str = "2000000";
    let run = |flags: &[&str]| {
        let mut args = vec!["run", "--stats=json"];
        args.extend_from_slice(flags);
        args.extend(["--invoke", "run_slow", MEM_GC_HOOK, "2000", SPIN]);
        let out = crate::util::run(args);
        crate::util::assert_code(&out, 0);
        let calls: f64 = crate::util::stdout(&out).trim().parse().unwrap();
        let stats = stats_json(&out);
        assert_eq!(stats["young_collections"], calls, "{stats:?}");
        assert_eq!(stats["full_collections"], 0.0, "{stats:?}");
        (calls, stats)
    };
    let (adapted, stats) = run(&[]);
    assert!(adapted <= 40.0, "{adapted} collections of a slow collector: {stats:?}");
    assert!(stats["peak_external"] <= f64::from((32 << 20) + 4 * (128 << 10)), "{stats:?}");
    let (fixed, stats) = run(&["--gc-young", "2MiB"]);
    assert!((112.0..=118.0).contains(&fixed), "{fixed} collections at a fixed Y = 2 MiB: {stats:?}");
}

#[test]
fn without_the_accountant_garbage_piles_up_until_the_limit() {
    // `--gc off`: no collection until the memory limit; there, full collections free the
    // garbage (all but the newest buffer) and the run goes on.
    let out = crate::util::run(["run", "--stats=json", "--gc", "off", "--invoke", "run", MEM_GC_HOOK, "1000"]);
    crate::util::assert_code(&out, 0);
    let stats = stats_json(&out);
    assert_eq!(stats["peak_external"], 1000.0 * f64::from(128 << 10), "{stats:?}");
    assert_eq!(stats["young_collections"] + stats["full_collections"], 0.0);

    let args = ["run", "--stats=json", "--gc", "off", "--max-memory", "64MiB", "--invoke", "run", MEM_GC_HOOK, "2000"];
    let out = crate::util::run(args);
    crate::util::assert_code(&out, 0);
    let stats = stats_json(&out);
    assert!(stats["peak_external"] + stats["peak_linear_memory"] <= f64::from(64 << 20), "{stats:?}");
    // 250 MiB through a 64 MiB limit: a full collection each time the limit is reached.
    assert!((3.0..=4.0).contains(&stats["full_collections"]), "{stats:?}");
    assert_eq!(stats["young_collections"], 0.0);
}

#[test]
fn live_buffers_past_the_limit_get_no_memory_and_the_host_stays_up() {
    let options = RunOptions::new().max_memory(64 << 20);
    let guest = Runtime::new().unwrap().load_file(MEM_GC_HOOK).unwrap();
    let report = guest.invoke(&options, "hold", &[WasmValue::I32(1000)]).unwrap();
    let no_memory = wrt_runtime::ErrorCode::NoMemory.to_return();
    assert_eq!(report.outcome, Outcome::Returned(vec![WasmValue::I32(no_memory)]));
    // Two full collections before giving up; everything the guest holds is still there.
    assert_eq!(report.stats.full_collections, 2, "{:?}", report.stats);
    assert_eq!(report.stats.final_external, 63 << 20, "{:?}", report.stats);
    // The same guest runs again.
    let report = guest.invoke(&options, "run", &[WasmValue::I32(100)]).unwrap();
    assert!(matches!(report.outcome, Outcome::Returned(_)), "{:?}", report.outcome);
}

#[test]
fn mem_buffer_limits() {
    // Bytes are copied out of linear memory before the guest's collector runs, whether the
    // policy asked for the collection (small Y) or the memory limit forced it.
    for flags in [&["--gc-young", "1MiB"][..], &["--gc", "off", "--max-memory", "4MiB"]] {
        let mut args = vec!["run", "--stats=json"];
        args.extend(flags);
        args.extend(["--invoke", "copy_before_gc", MEM_BUFFER_LIMITS, "200", "131072"]);
        let out = crate::util::run(&args);
        crate::util::assert_code(&out, 0);
        assert_eq!(crate::util::stdout(&out), "0\n", "{flags:?}: buffers with the collector's bytes");
        let stats = stats_json(&out);
        assert!(stats["young_collections"] + stats["full_collections"] >= 5.0, "{flags:?}: {stats:?}");
    }
}

#[test]
fn freed_buffer_memory_does_not_pile_up_past_the_limit() {
    // Fill 32 MiB with buffers of one size class, free them, next class: 11 classes.
    let args = ["run", "--stats=json", "--max-memory", "32MiB", "--invoke", "classes", MEM_BUFFER_LIMITS, "10", "20"];
    let out = crate::util::run(args);
    crate::util::assert_code(&out, 0);
    let stats = stats_json(&out);
    assert!(stats["peak_buffer_memory"] + stats["peak_linear_memory"] <= f64::from(32 << 20), "{stats:?}");
    assert!(stats["peak_buffer_memory"] >= f64::from(28 << 20), "the limit was reached: {stats:?}");
}

#[test]
fn tables_count_against_the_memory_limit() {
    let grow = |n: &str| {
        let out = crate::util::run(["run", "--max-memory", "32MiB", "--invoke", "table_grow", MEM_BUFFER_LIMITS, n]);
        crate::util::assert_code(&out, 0);
        crate::util::stdout(&out)
    };
    assert_eq!(grow("100000"), "0\n", "within the tables' allowance");
    assert_eq!(grow("200000000"), "-1\n", "1.6 GB of table elements");
}

/// What the host may use besides `--max-memory` (docs/abi.md, "Memory limit"), on top of the
/// RSS of the same run before the guest allocates anything: transient copies (at most 1 MiB
/// of `read_buffer` scratch) and the allocator's and handle tables' own overhead.
const HOST_SLACK: u64 = 8 << 20;

/// Runs `wrt args` under GNU time and returns its output and peak RSS in bytes, or `None`
/// (skipped, loudly) without `/usr/bin/time`. GNU time forks `wrt` from a small process, so
/// the `ru_maxrss` it reports is wrt's own: a child spawned with `vfork` (as `std` does) would
/// start from the test process's high-water mark.
fn peak_rss<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Option<(std::process::Output, u64)> {
    const TIME: &str = "/usr/bin/time";
    if !std::path::Path::new(TIME).exists() {
        eprintln!("SKIPPED: {TIME} (GNU time) is not installed, so peak RSS cannot be measured");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("maxrss");
    let out = crate::util::command(TIME)
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_wrt"))
        .args(args)
        .output()
        .unwrap();
    let report = std::fs::read_to_string(&report).unwrap();
    let kib: u64 = report.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("{report}"));
    Some((out, kib << 10))
}

#[test]
fn mem_concat_save() {
    // 100 parts naming the same 1 MiB, at the limit with 100 MiB of buffers only the guest's
    // collector frees: the host saves the 1 MiB once (not 100 times) before the collection,
    // and the new buffer holds the bytes from before it.
    let args = |n| ["run", "--max-memory", "128MiB", "--invoke", "concat", MEM_CONCAT_SAVE, n, "100"];
    let Some((idle, idle_rss)) = peak_rss(&args("1")) else { return };
    crate::util::assert_code(&idle, 0);
    assert_eq!(crate::util::stdout(&idle), "0\n");
    let (out, rss) = peak_rss(&args("100")).unwrap();
    crate::util::assert_code(&out, 0);
    assert_eq!(crate::util::stdout(&out), "0\n", "a buffer of the bytes saved before the collection");
    assert!(rss <= idle_rss + (28 << 20) + HOST_SLACK, "peak RSS {rss} vs {idle_rss} with one part");
}

/// A `buffer_concat` of 1024 parts that all name the same 1 MiB, at `--max-memory 128MiB` in a
/// guest that exports `wrt_gc`, drove the host's peak RSS to about 1.2 GB while it saved the
/// sources before a full collection.
#[test]
fn concat_of_one_range_stays_within_the_memory_limit() {
    let args = |n| ["run", "--max-memory", "128MiB", "--invoke", "concat", MEM_CONCAT_SAVE, n, "0"];
    let Some((idle, idle_rss)) = peak_rss(&args("1")) else { return };
    crate::util::assert_code(&idle, 0);
    let (out, rss) = peak_rss(&args("1024")).unwrap();
    crate::util::assert_code(&out, 0);
    assert_eq!(crate::util::stdout(&out), "-10\n", "1 GiB does not fit: NO_MEMORY");
    assert!(rss <= idle_rss + HOST_SLACK, "peak RSS {rss} vs {idle_rss} with one part");
    assert!(rss <= (128 << 20) + (64 << 20), "peak RSS {rss}");
}

/// At the limit, a `buffer_concat` whose 1 MiB of sources must be saved before a collection got
/// `NO_MEMORY` without one, though the saved bytes fit the host's overhead allowance: now it
/// saves them, collects, and makes the buffer, and the host stays within the limit plus the
/// overhead.
#[test]
fn concat_at_the_limit_saves_within_the_overhead_and_collects() {
    let args = |garbage| ["run", "--max-memory", "64MiB", "--invoke", "concat", MEM_CONCAT_SAVE, "1", garbage];
    let Some((idle, idle_rss)) = peak_rss(&args("0")) else { return };
    assert_eq!(crate::util::stdout(&idle), "0\n");
    let (out, rss) = peak_rss(&args("-1")).unwrap();
    crate::util::assert_code(&out, 0);
    assert_eq!(crate::util::stdout(&out), "0\n", "a buffer of the bytes saved before the collection");
    assert!(rss <= idle_rss + (64 << 20) + HOST_SLACK, "peak RSS {rss} vs {idle_rss} before any buffer");
}

/// The bytes the WASI-call tests ask for, near their 64 MiB memory limit (`mem_wasi_calls` has
/// 50 MiB of linear memory).
const WASI_LEN: u32 = 48 << 20;

/// Runs `call` (an export of `mem_wasi_calls` and its arguments) under `--max-memory 64MiB`
/// with `dir` preopened, checks that the host's peak RSS stays within the limit plus the fixed
/// overhead of an idle run, and returns what the call returned; `None` without GNU time.
fn wasi_call_within_limit(dir: &std::path::Path, call: &[&str]) -> Option<String> {
    let spec = format!("{}::/", dir.display());
    let args = |call: &[&str]| {
        let mut args = vec!["run", "--max-memory", "64MiB", "--dir", &spec, "--invoke", call[0], MEM_WASI_CALLS];
        args.extend_from_slice(&call[1..]);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let (idle, idle_rss) = peak_rss(&args(&["random", "0"]))?;
    assert_eq!(crate::util::stdout(&idle), "0\n");
    let (out, rss) = peak_rss(&args(call)).unwrap();
    crate::util::assert_code(&out, 0);
    assert!(rss <= idle_rss + (64 << 20) + HOST_SLACK, "{call:?}: peak RSS {rss} vs {idle_rss} idle");
    Some(crate::util::stdout(&out).trim().to_owned())
}

#[test]
fn mem_wasi_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big"), b"0123456789").unwrap();
    let spec = format!("{}::/", dir.path().display());
    let call = |export: &str, args: &[&str]| {
        let out = crate::util::run(
            ["run", "--max-memory", "64MiB", "--dir", &spec, "--invoke", export, MEM_WASI_CALLS].iter().chain(args),
        );
        crate::util::assert_code(&out, 0);
        crate::util::stdout(&out).trim().to_owned()
    };
    assert_eq!(call("random", &["16"]), "0");
    assert_eq!(call("poll", &["2"]), "0");
    assert_eq!(call("path", &["1", "8"]), "44", "ENOENT: no file `aaaaaaaa`");
    assert_eq!(call("path", &["0", "4096"]), "37", "ENAMETOOLONG from the kernel: a 4096-byte name");
    assert_eq!(call("read", &["64"]), "10");
    assert_eq!(call("write", &["10"]), "10");
    assert_eq!(std::fs::read(dir.path().join("out")).unwrap(), b"wwwwwwwwww");
}

/// `random_get` of 48 MiB made the host hold the 48 MiB beside the guest's own: WASI made the
/// bytes in host memory before copying them.
#[test]
fn random_get_stays_within_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let Some(errno) = wasi_call_within_limit(dir.path(), &["random", &WASI_LEN.to_string()]) else { return };
    assert_eq!(errno, "0");
}

/// `poll_oneoff` with 500,000 subscriptions made the host hold about 280 MB while it polled.
#[test]
fn poll_oneoff_past_the_subscription_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some(errno) = wasi_call_within_limit(dir.path(), &["poll", "500000"]) else { return };
    assert_eq!(errno, "28", "EINVAL");
    assert_eq!(wasi_call_within_limit(dir.path(), &["poll", "1025"]).unwrap(), "28");
    assert_eq!(wasi_call_within_limit(dir.path(), &["poll", "1024"]).unwrap(), "0", "the most subscriptions");
}

/// A 48 MiB path to any WASI path function made the host copy it two or three times before the
/// kernel refused it.
#[test]
fn long_paths_are_refused_before_they_are_copied() {
    let dir = tempfile::tempdir().unwrap();
    let len = WASI_LEN.to_string();
    for which in 0..13 {
        let Some(errno) = wasi_call_within_limit(dir.path(), &["path", &which.to_string(), &len]) else { return };
        assert_eq!(errno, "37", "path function {which}: ENAMETOOLONG");
    }
}

/// `fd_read` and `fd_write` of 48 MiB made the host hold a copy of the guest's buffer.
#[test]
fn file_reads_and_writes_stay_within_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big"), vec![7u8; WASI_LEN as usize]).unwrap();
    let Some(read) = wasi_call_within_limit(dir.path(), &["read", &WASI_LEN.to_string()]) else { return };
    assert_eq!(read, WASI_LEN.to_string());
    let written = wasi_call_within_limit(dir.path(), &["write", &WASI_LEN.to_string()]).unwrap();
    assert_eq!(written, WASI_LEN.to_string());
    assert_eq!(std::fs::metadata(dir.path().join("out")).unwrap().len(), u64::from(WASI_LEN));
}

/// The memory limit of the property test.
const OPS_LIMIT: u64 = 48 << 20;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random sequences of buffer calls under a small limit: the host's peak RSS stays within
    /// the limit plus the fixed overhead, and every call either works or gets NO_MEMORY.
    #[test]
    fn mem_buffer_ops(seed in 1u32..(1 << 31), steps in 1u32..400, max_len in prop_oneof![1u32..4096, 4096u32..(8 << 20)]) {
        let (seed, steps, max_len) = (seed.to_string(), steps.to_string(), max_len.to_string());
        let args = |steps: &str| {
            ["run", "--max-memory", "48MiB", "--invoke", "run", MEM_BUFFER_OPS, seed.as_str(), steps, max_len.as_str()].map(str::to_owned)
        };
        let Some((idle, idle_rss)) = peak_rss(&args("0")) else { return Ok(()) };
        crate::util::assert_code(&idle, 0);
        let (out, rss) = peak_rss(&args(&steps)).unwrap();
        crate::util::assert_code(&out, 0);
        let no_memory: i32 = crate::util::stdout(&out).trim().parse().unwrap();
        prop_assert!(no_memory >= 0, "a call failed with {no_memory}");
        prop_assert!(rss <= idle_rss + OPS_LIMIT + HOST_SLACK, "peak RSS {rss}, {idle_rss} before any call");
    }
}

#[test]
fn mem_run_output() {
    // `run` holds a child's output until the child ends: at most half the room left under the
    // memory limit per stream, so a guest that touched 100 MiB of its 128 MiB cannot have the
    // host hold 100 MiB more (the policy allows 512 MiB of output). Needs `head`.
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "output_limit = \"512 MiB\"\n[[allow]]\nprogram = \"head\"\n").unwrap();
    let args = |export| {
        ["run", "--policy", policy.to_str().unwrap(), "--max-memory", "128MiB", "--invoke", export, MEM_RUN_OUTPUT]
    };
    let Some((idle, idle_rss)) = peak_rss(&args("touch")) else { return };
    crate::util::assert_code(&idle, 0);
    let (out, rss) = peak_rss(&args("run_head")).unwrap();
    crate::util::assert_code(&out, 0);
    let captured: u64 = crate::util::stdout(&out).trim().parse().unwrap();
    assert!((1..=14 << 20).contains(&captured), "{captured} bytes of 100 MiB kept");
    assert!(rss <= idle_rss + (28 << 20) + HOST_SLACK, "peak RSS {rss}, {idle_rss} with the memory touched");
}

/// A pooled memory slot serves one guest after another. It stays `MADV_DONTFORK` (smaps `dc`, and
/// absent from a forked child), and the next guest in the slot reads zeros where the previous one
/// wrote its secret.
#[test]
fn pooled_slots_stay_dontfork_and_never_leak_bytes() {
    const SECRET: i32 = 1592653589;
    let wat = br#"(module (memory (export "memory") 2)
        (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1)))
        (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
        (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))"#;
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = Runtime::builder().memory_pool(wrt_runtime::PoolLimits { idle: 1, total: 4 }).build().unwrap();
    let guest = runtime.load_bytes("secret.wat", wat).unwrap();
    let options = RunOptions::new();
    let mut first = guest.instantiate(&options).unwrap();
    // The secret lies in the first page, and in a page the guest grew into.
    assert_eq!(first.invoke("grow", &[WasmValue::I32(3)]).unwrap(), Outcome::Returned(vec![WasmValue::I32(2)]));
    for addr in [100, 262140] {
        first.invoke("store", &[WasmValue::I32(addr), WasmValue::I32(SECRET)]).unwrap();
    }
    let base = first.memory_range().unwrap().start;
    drop(first);
    let mut second = guest.instantiate(&options).unwrap();
    let range = second.memory_range().unwrap();
    assert_eq!(range.start, base, "the slot was not reused: the test proves nothing");
    assert_eq!(range.len(), 2 << 16, "the second guest starts at its own minimum");
    assert_eq!(second.invoke("load", &[WasmValue::I32(100)]).unwrap(), Outcome::Returned(vec![WasmValue::I32(0)]));
    // Past its minimum the second guest traps until it grows, then reads zeros.
    let Outcome::Trapped(_) = second.invoke("load", &[WasmValue::I32(262140)]).unwrap() else {
        panic!("page 3 is mapped")
    };
    second.invoke("grow", &[WasmValue::I32(3)]).unwrap();
    assert_eq!(second.invoke("load", &[WasmValue::I32(262140)]).unwrap(), Outcome::Returned(vec![WasmValue::I32(0)]));
    let flags = vm_flags(range.start).expect("the guest memory is mapped in this process");
    assert!(flags.contains(&"dc".to_owned()), "VmFlags: {flags:?}");
    assert!(!mapped_in_forked_child(&second.memory_range().unwrap()), "the pooled slot was copied into a fork");
}

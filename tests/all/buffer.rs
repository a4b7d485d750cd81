//! Host buffers through the Rust SDK (`wrt_guest::Buffer`): every operation against the host,
//! the burst and chain workloads releasing on drop (`--stats=json`), buffer memory marked
//! `MADV_DONTFORK`, and the memory limit answered with NO_MEMORY rather than a crash.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use wrt_test_guests::*;

use crate::util::{SPAWN_LOCK, assert_code, json_number, run, stats_line, stdout, wrt};

foreach_buffer!(assert_test_exists);
use crate::assert_test_exists;

const MIB: f64 = (1 << 20) as f64;

#[test]
fn buffer_basic() {
    let out = run(["run", "--allow-run", "cat", BUFFER_BASIC]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "buffers ok\n");
}

#[test]
fn buffer_burst() {
    let out = run(["run", "--stats=json", BUFFER_BURST, "200", "122880"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    assert_eq!(json_number(&line, "n"), 200.0, "{line}");
    assert_eq!(json_number(&line, "body_size"), 122880.0, "{line}");
    assert_eq!(json_number(&line, "total"), 200.0 * 9.0, "{line}");
    assert!(json_number(&line, "ms") >= 0.0 && json_number(&line, "ops_per_s") >= 0.0, "{line}");
    // Drop releases every buffer at once: about 250 KiB live at a time, nothing at the end.
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "final_external"), 0.0, "{stats}");
    assert!(json_number(&stats, "peak_external") < 2.0 * MIB, "{stats}");
    assert!(json_number(&stats, "peak_external") >= 122880.0, "the body never reached the host: {stats}");
}

#[test]
fn buffer_chains() {
    let out = run(["run", "--stats=json", BUFFER_CHAINS, "20000", "20", "16384"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    assert_eq!(json_number(&line, "total"), 20000.0, "{line}");
    assert_eq!(json_number(&line, "chains"), 20.0, "{line}");
    assert_eq!(json_number(&line, "size"), 16384.0, "{line}");
    assert!(json_number(&line, "ms") >= 0.0, "{line}");
    // At most 21 buffers of 16 KiB are live at once.
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "final_external"), 0.0, "{stats}");
    assert!(json_number(&stats, "peak_external") < 2.0 * MIB, "{stats}");
}

/// Kills (and reaps) a `wrt` process left running by a failed assertion.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Runs `wrt run [flags] buffer_hold.wasm MIB` until it holds its buffers, and returns the
/// resident KiB of its mappings with and without `dc` (MADV_DONTFORK) in `VmFlags`; then
/// closes its stdin and checks that it exits 0.
fn held_rss_kib(flags: &[&str], mib: u32) -> (u64, u64) {
    let child = wrt()
        .arg("run")
        .args(flags)
        .args([BUFFER_HOLD, &mib.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("failed to start wrt");
    let mut child = KillOnDrop(child);
    let mut stdout = BufReader::new(child.0.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, format!("holding {mib} MiB\n"));

    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", child.0.id())).unwrap();
    let (mut dc, mut other, mut rss) = (0, 0, 0);
    for line in smaps.lines() {
        if let Some(kib) = line.strip_prefix("Rss:") {
            rss = kib.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            // VmFlags is the last field of each mapping.
            if flags.split_whitespace().any(|f| f == "dc") {
                dc += rss;
            } else {
                other += rss;
            }
            rss = 0;
        }
    }

    drop(child.0.stdin.take()); // end of file: the guest drops its buffers and exits
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    (dc, other)
}

#[test]
fn buffer_hold() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // 64 MiB of 1 MiB buffers, every page written: resident, in DONTFORK memory.
    let (dc, other) = held_rss_kib(&[], 64);
    assert!(dc >= 64 << 10, "only {dc} KiB resident in `dc` mappings ({other} KiB elsewhere)");
    assert!(other < 64 << 10, "{other} KiB resident outside `dc` mappings: the buffers are there too?");
    // The control: with --dontfork off the same bytes are resident outside `dc` mappings.
    let (dc, other) = held_rss_kib(&["--dontfork", "off"], 64);
    assert!(dc < 64 << 10, "{dc} KiB resident in `dc` mappings with --dontfork off");
    assert!(other >= 64 << 10, "only {other} KiB resident outside `dc` mappings with --dontfork off");

    // Spawning while the buffers are held; with stdin at end of file the guest then exits.
    let out = run(["run", "--allow-run", "true", BUFFER_HOLD, "64", "20"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("holding 64 MiB"), "{text}");
    let line = lines.next().unwrap_or_else(|| panic!("no spawn line: {text}"));
    assert_eq!(json_number(line, "mib"), 64.0, "{line}");
    assert_eq!(json_number(line, "spawns"), 20.0, "{line}");
    assert!(json_number(line, "us_per_spawn") > 0.0, "{line}");
}

#[test]
fn buffer_no_memory() {
    // Every buffer kept: the host refuses one with NO_MEMORY before 64 MiB (linear memory
    // counts too), the guest sees OutOfMemory, and wrt exits normally.
    let out = run(["run", "--max-memory", "64MiB", "--stats=json", BUFFER_NO_MEMORY]);
    assert_code(&out, 0);
    // The refusal is in the stats.
    assert!(json_number(&stats_line(&out), "memory_refusals") >= 1.0, "{}", stats_line(&out));
    let text = stdout(&out);
    let mib: u32 = text
        .trim()
        .strip_prefix("no memory after ")
        .and_then(|rest| rest.strip_suffix(" MiB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output: {text}"));
    assert!((32..64).contains(&mib), "{text}");

    // The host's limit of 65,536 buffer handles gives NO_MEMORY too.
    let out = run(["run", "--stats=json", BUFFER_NO_MEMORY, "handles"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "no handles after 65536 buffers\n");
    // Handles ran out, not memory.
    assert_eq!(json_number(&stats_line(&out), "memory_refusals"), 0.0, "{}", stats_line(&out));

    // 90 % garbage, 5 times the limit in all: dropped buffers are released at once, so it
    // never comes near the limit.
    let out = run(["run", "--max-memory", "64MiB", "--stats=json", BUFFER_NO_MEMORY, "garbage", "320"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "done: 320 MiB allocated, 32 MiB live\n");
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "final_external"), 0.0, "{stats}");
    assert!(json_number(&stats, "peak_external") < 40.0 * MIB, "{stats}");
}

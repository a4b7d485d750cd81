//! Host buffers held as `externref` (WAT guests): every `ref_*` function against the host, and
//! the readable-push-buffer-burst workload left to wasmtime's collector, with and without the
//! host's collections (`--stats=json`), and under a memory limit.

use wrt_test_guests::*;

use crate::util::{assert_code, json_number, run, stats_line, stdout};

foreach_ref!(assert_test_exists);
use crate::assert_test_exists;

const MIB: f64 = (1 << 20) as f64;

/// `wrt run --stats=json` with `flags`, the burst guest and its arguments; asserts it exited 0
/// and returns the stats line it printed on stderr.
#[track_caller]
fn burst_stats(flags: &[&str], n: u32, body: u32) -> String {
    let mut argv = vec!["run".to_owned(), "--stats=json".to_owned()];
    argv.extend(flags.iter().map(|f| (*f).to_owned()));
    argv.extend([REF_BURST.to_owned(), n.to_string(), body.to_string()]);
    let out = run(argv);
    assert_code(&out, 0);
    stats_line(&out)
}

#[test]
fn ref_basic() {
    // The guest exits with the number of the first check that failed (listed in its header).
    let out = run(["run", REF_BASIC]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "externref buffers ok\n");
}

#[test]
fn ref_burst() {
    // 2000 pages of 125 KiB (about 490 MiB of buffers): young collections keep the live bytes
    // near the young trigger (2 MiB, more while collections are slow), below the first full
    // collection's trigger (64 MiB).
    let stats = burst_stats(&[], 2000, 122880);
    assert!(json_number(&stats, "young_collections") > 0.0, "{stats}");
    assert!(json_number(&stats, "full_collections") <= 5.0, "{stats}");
    assert!(json_number(&stats, "peak_external") < 64.0 * MIB + 16.0 * MIB, "{stats}");
    assert!(json_number(&stats, "peak_external") >= 122880.0, "the body never reached the host: {stats}");
    assert_eq!(json_number(&stats, "spawns"), 0.0, "{stats}");
}

#[test]
fn ref_burst_holds_more_without_collections() {
    // With `--gc off` only wasmtime's own collections (and the memory limit) free the garbage.
    let on = burst_stats(&["--gc", "on"], 2000, 122880);
    let off = burst_stats(&["--gc", "off"], 2000, 122880);
    assert_eq!(json_number(&off, "young_collections"), 0.0, "{off}");
    assert!(json_number(&off, "peak_external") > json_number(&on, "peak_external"), "gc on: {on}\ngc off: {off}");
}

#[test]
fn ref_burst_invoke() {
    // The same work as an export: `burst(n, body)` returns 0.
    let out = run(["run", "--invoke", "burst", REF_BURST, "200", "4096"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "0\n");
}

#[test]
fn ref_burst_within_max_memory() {
    // An 8 MiB limit (512 KiB of it linear memory, and 1 MiB slabs for the host's blocks)
    // holds a few pages of buffers: allocations that would pass it run full collections first,
    // and the guest never sees a null. Young collections every 8 MiB (or none) come too late to
    // keep within the limit, so the limit's full collections must.
    for gc in [&["--gc", "on", "--gc-young", "8MiB"][..], &["--gc", "off"]] {
        let stats = burst_stats(&[&["--max-memory", "8MiB"][..], gc].concat(), 500, 122880);
        assert!(json_number(&stats, "full_collections") > 0.0, "{gc:?}: {stats}");
        let peak = json_number(&stats, "peak_linear_memory") + json_number(&stats, "peak_external");
        assert!(peak <= 8.0 * MIB, "{gc:?}: {stats}");
    }
}

#[test]
fn ref_burst_past_max_memory() {
    // 1 MiB cannot hold linear memory (512 KiB) and a 1 MiB slab for the first chunk: ref_from
    // returns null (the guest exits 1); nothing traps or aborts. No buffer exists yet, so there
    // is nothing a collection could free, and none runs.
    let out = run(["run", "--stats=json", "--max-memory", "1MiB", REF_BURST, "5", "122880"]);
    assert_code(&out, 1);
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "full_collections"), 0.0, "{stats}");
}

#[test]
fn ref_burst_bad_arguments() {
    let out = run(["run", REF_BURST, "2000", "120k"]);
    assert_code(&out, 100);
}

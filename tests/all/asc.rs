//! The AssemblyScript guest `asc_buffers` (`guests/test-guests/assemblyscript`): a garbage-collected guest
//! language holding host buffers by handle, released by its finaliser when the host asks for a
//! collection (`wrt_gc`). Functional checks, then the collection policy seen through
//! `wrt run --stats=json`: young collections bound the burst and chain workloads, `--gc off`
//! lets external bytes pile up, and the hard limit's full collections rescue a 90 % garbage
//! workload but not a 100 % live one.

use std::process::Output;

use wrt_test_guests::*;

use crate::util::{assert_code, json_number, run, stats_line, stdout, wrt_lines};

foreach_asc!(assert_test_exists);
use crate::assert_test_exists;

const MIB: u64 = 1 << 20;

/// `wrt run --stats=json <flags> asc_buffers <args>`.
fn run_asc(flags: &[&str], args: &[&str]) -> Output {
    let mut argv = vec!["run", "--stats=json"];
    argv.extend(flags);
    argv.push(ASC_BUFFERS);
    argv.extend(args);
    run(argv)
}

/// The `--stats=json` line of a run (the last stderr line that is a JSON object).
#[derive(Debug)]
struct Stats(String);

impl Stats {
    #[track_caller]
    fn of(out: &Output) -> Self {
        Self(stats_line(out))
    }

    /// The number under `key`, truncated to an integer.
    #[track_caller]
    fn get(&self, key: &str) -> u64 {
        json_number(&self.0, key) as u64
    }
}

#[test]
fn asc_buffers() {
    let out = run_asc(&[], &["basic"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "asc ok\n");
    assert_eq!(wrt_lines(&out), Vec::<String>::new());
}

/// The readable-push-buffer-burst analogue: about 375 KiB of host buffers per iteration, all
/// garbage at its end. Young collections keep the peak within `S + Y` (64 + 8 MiB) and no
/// full collection is needed.
#[test]
fn asc_burst_young_collections_bound_external() {
    let out = run_asc(&[], &["burst", "3000"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    assert!(line.starts_with("{\"n\":3000,\"body_size\":122880,"), "{line}");
    assert!(line.trim_end().ends_with(",\"total\":27000}"), "{line}");
    let stats = Stats::of(&out);
    assert!(stats.get("peak_external") < 80 * MIB, "{stats:?}");
    assert!(stats.get("young_collections") > 0, "{stats:?}");
    assert_eq!(stats.get("full_collections"), 0, "{stats:?}");
}

/// The same with `--gc off`: the guest's own collector only sees its small heap, so nothing
/// releases the 6000 × ~250 KiB of host buffers.
#[test]
fn asc_burst_gc_off_grows_external() {
    let out = run_asc(&["--gc", "off"], &["burst", "6000"]);
    assert_code(&out, 0);
    let stats = Stats::of(&out);
    assert!(stats.get("peak_external") > 1024 * MIB, "{stats:?}");
    assert_eq!(stats.get("young_collections"), 0, "{stats:?}");
    assert_eq!(stats.get("full_collections"), 0, "{stats:?}");
}

/// 100 % live: the hard limit's two full collections free nothing, the guest sees `NO_MEMORY`
/// and exits on its own; the host stays up.
#[test]
fn asc_live_runs_out_of_memory() {
    let out = run_asc(&["--max-memory", "64MiB"], &["live"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("no memory after "), "{}", stdout(&out));
    let stats = Stats::of(&out);
    assert!(stats.get("full_collections") >= 2, "{stats:?}");
    assert!(stats.get("peak_external") + stats.get("peak_linear_memory") <= 64 * MIB, "{stats:?}");
}

/// 90 % garbage: 512 MiB allocated in 1 MiB buffers under a 128 MiB limit.
#[test]
fn asc_garbage_collected_under_limit() {
    let out = run_asc(&["--max-memory", "128MiB"], &["garbage", "512"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "done\n");
    let stats = Stats::of(&out);
    assert!(stats.get("peak_external") + stats.get("peak_linear_memory") <= 128 * MIB, "{stats:?}");
}

/// The same with `--gc off`: only the full collections at the hard limit run, and they suffice.
#[test]
fn asc_garbage_collected_at_hard_limit() {
    let out = run_asc(&["--gc", "off", "--max-memory", "128MiB"], &["garbage", "512"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "done\n");
    let stats = Stats::of(&out);
    assert_eq!(stats.get("young_collections"), 0, "{stats:?}");
    assert!(stats.get("full_collections") >= 1, "{stats:?}");
}

/// The nodejs/node#1671 analogue: 20 chains of 16 KiB buffers, each replacing the last.
/// Young collections do the work; external bytes stay bounded.
#[test]
fn asc_chains_young_collections() {
    let out = run_asc(&[], &["chains", "20000"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    assert!(line.starts_with("{\"total\":20000,\"chains\":20,\"size\":16384,"), "{line}");
    let stats = Stats::of(&out);
    assert!(stats.get("young_collections") > stats.get("full_collections"), "{stats:?}");
    assert!(stats.get("peak_external") < 64 * MIB, "{stats:?}");
}

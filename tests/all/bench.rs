//! The benchmark guests do what the benches time.

use wrt_test_guests::*;

use crate::util::{assert_code, json_number, run, stats_line, stderr, stdout};

foreach_bench!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn bench_spawn() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for method in ["spawn_wait", "run_capture", "sh_exec"] {
        let out =
            run(["run", "--allow-run", "/bin/true", "--allow-run", "/bin/sh", "--invoke", method, BENCH_SPAWN, "5"]);
        assert_code(&out, 0);
        assert_eq!(stdout(&out), "0\n", "{method}");
    }
    // Without the allow rules every spawn is denied (-1).
    let out = run(["run", "--invoke", "spawn_wait", BENCH_SPAWN, "1"]);
    assert_eq!(stdout(&out), "-1\n");
}

/// The core-ABI guest of `wrt bench component-spawn`: N spawns of `/bin/true`, each checked;
/// denied or failing programs and bad arguments say why and exit with 1.
#[test]
fn bench_spawn_loop() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let guest = |allow: &str, args: &[&str]| {
        let argv: Vec<&str> =
            ["run", "--stats=json", "--allow-run", allow, BENCH_SPAWN_LOOP].iter().chain(args).copied().collect();
        run(argv)
    };
    let out = guest("/bin/true", &["5"]);
    assert_code(&out, 0);
    assert_eq!(json_number(&stats_line(&out), "spawns"), 5.0);
    for (allow, args, expected) in [
        ("/bin/true", &["many"][..], "`many` is not a number of spawns"),
        ("/bin/true", &[], "usage: bench_spawn_loop N [PROGRAM]"),
        ("/bin/true", &["2", "/bin/false"], "spawn 0 of `/bin/false` failed"),
        ("/bin/false", &["2", "/bin/false"], "spawn 0 of `/bin/false` ended with exit status: 1"),
    ] {
        let out = guest(allow, args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// The guest of `wrt bench pipeline`: a mebibyte through `head | tr | wc`, child to child; the
/// guest reads only `wc`'s count (`--stats` shows it), and every way it can fail says why and
/// exits with 1.
#[test]
fn bench_pipeline() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let allow = ["--allow-run", "head", "--allow-run", "tr", "--allow-run", "wc"];
    let guest = |args: &[&str]| {
        let argv: Vec<&str> =
            ["run", "--stats=json"].iter().chain(&allow).chain(&[BENCH_PIPELINE]).chain(args).copied().collect();
        run(argv)
    };
    let out = guest(&["1048576"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "1048576\n");
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "spawns"), 3.0, "{stats}");
    let read = json_number(&stats, "stream_bytes");
    assert!((1.0..=16.0).contains(&read), "the guest read only the count: {stats}");
    for (args, expected) in [
        (&["lots"][..], "`lots` is not a number of bytes"),
        (&[], "usage: bench_pipeline BYTES"),
        // `tr -c 1000 /dev/zero` translates its empty stdin: a count that is not BYTES.
        (&["1000", "tr", "tr", "wc"], "`wc` counted `0`, expected `1000`"),
        // `head -c` without a count fails: a stage that does not exit with 0 (the stages before
        // it may die of SIGPIPE first, so the message may name either).
        (&["1000", "head", "tr", "head"], "` ended with "),
        // Not allowed by the policy.
        (&["1000", "head", "sort", "wc"], "cannot spawn `sort`"),
    ] {
        let out = guest(args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

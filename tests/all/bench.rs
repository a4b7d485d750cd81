//! The benchmark guests do what the benches time.

use wrt_test_guests::*;

use crate::util::{assert_code, run, stdout};

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

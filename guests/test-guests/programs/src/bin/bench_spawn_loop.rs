//! The core-ABI side of `wrt bench component-spawn`: `bench_spawn_loop N [PROGRAM]` runs
//! `/bin/true` (or PROGRAM) N times through `wrt_v1` (the SDK `wrt-guest`), spawn + wait with
//! stdin, stdout and stderr null, and exits with 0. It exits with 1, saying why on stderr, when
//! the argument is bad, a spawn fails or a run does not exit with 0. Its component twin,
//! `guests/test-guests/components/src/bin/component_bench_spawn.rs`, has the same source shape.
use std::process::exit;

use wrt_guest::{Command, Stdio};

fn fail(message: &str) -> ! {
    eprintln!("bench_spawn_loop: {message}");
    exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (n, program) = match args.as_slice() {
        [n] => (n, "/bin/true"),
        [n, program] => (n, program.as_str()),
        _ => fail("usage: bench_spawn_loop N [PROGRAM]"),
    };
    let Ok(n) = n.parse::<u32>() else {
        fail(&format!("`{n}` is not a number of spawns"));
    };
    for i in 0..n {
        let status = Command::new(program)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| fail(&format!("spawn {i} of `{program}` failed: {e}")));
        if !status.success() {
            fail(&format!("spawn {i} of `{program}` ended with {status}"));
        }
    }
}

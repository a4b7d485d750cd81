//! The component side of `wrt bench component-spawn`: `component_bench_spawn N [PROGRAM]` runs
//! `/bin/true` (or PROGRAM) N times through `wrt:process` (the SDK `wrt-process`), spawn + wait with
//! stdin, stdout and stderr null, and exits with 0. It exits with 1, saying why on stderr, when
//! the argument is bad, a spawn fails or a run does not exit with 0. Its core-module twin,
//! `guests/test-guests/programs/src/bin/bench_spawn_loop.rs` (on `wrt_v1`), has the same source shape.
use std::process::exit;

use wrt_process::{Command, Stdio};

fn fail(message: &str) -> ! {
    eprintln!("component_bench_spawn: {message}");
    exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (n, program) = match args.as_slice() {
        [n] => (n, "/bin/true"),
        [n, program] => (n, program.as_str()),
        _ => fail("usage: component_bench_spawn N [PROGRAM]"),
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

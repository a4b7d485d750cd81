//! `run` (through `Command::output`) of `sh -c <argv[1]>`, a script that leaves a process in a
//! new session holding the child's stdout and exits (`setsid sleep … & echo hi`). With
//! `own` (argv[2]) the command has a timeout of 500 ms: prints `run returned: <status>, <stdout>`
//! and exits 0. With `sandbox` it has none of its own, so the sandbox's `--timeout` is the
//! deadline, and the guest stops there (124). Needs `sh` and `setsid`.
use std::time::Duration;

use twins::sdk::Command;

fn main() {
    let script = std::env::args().nth(1).expect("a shell script");
    let mode = std::env::args().nth(2).expect("`own` or `sandbox`");
    let mut command = Command::new("sh");
    command.arg("-c").arg(&script);
    match mode.as_str() {
        "own" => {
            command.timeout(Duration::from_millis(500));
        }
        "sandbox" => {}
        other => panic!("unknown mode `{other}`"),
    }
    let output = command.output().expect("run sh");
    println!("run returned: {}, {}", output.status, String::from_utf8_lossy(&output.stdout).trim());
}

//! Runs a host program from inside the sandbox: `ls -l /` (or `ls -l DIR` with an argument),
//! through the guest SDK `wrt-guest`, and prints what came back.
//!
//! The sandbox denies every program it was not told to allow. Run it from the repository root:
//!
//! ```text
//! cargo run --release -- run --allow-run ls --ro-dir examples examples/target/wasm32-wasip1/release/spawn_ls.wasm "$PWD/examples"
//! ```
//!
//! Without `--allow-run ls` the spawn is denied, and the host's message says which flag would
//! allow it. Without `--ro-dir examples`, `ls` runs but cannot read the directory: the child
//! sandbox gives it only what the guest was given.

use std::io::ErrorKind;
use std::process::ExitCode;
use std::time::Duration;

use wrt_guest::Command;

fn main() -> ExitCode {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/".to_owned());
    let result = Command::new("ls").arg("-l").arg(&dir).timeout(Duration::from_secs(10)).output();
    let output = match result {
        Ok(output) => output,
        Err(err) if err.kind() == ErrorKind::PermissionDenied => {
            eprintln!("the sandbox did not allow it: {err}");
            return ExitCode::FAILURE;
        }
        Err(err) => {
            eprintln!("could not run ls: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("`ls -l {dir}` on the host printed:");
    print!("{}", String::from_utf8_lossy(&output.stdout));
    if !output.stderr.is_empty() {
        println!("and on stderr:");
        print!("{}", String::from_utf8_lossy(&output.stderr));
    }
    let status = output.status;
    // 0: the host cannot tell `ls`'s own peak from wrt's (docs/abi.md, "Status record").
    let peak = match status.peak_rss() {
        0 => "peak memory not known (below wrt's own)".to_owned(),
        bytes => format!("peak memory {} KiB", bytes / 1024),
    };
    println!(
        "{status}, in {:?} (user {:?}, system {:?}), {peak}",
        status.duration(),
        status.user_time(),
        status.system_time()
    );
    if status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

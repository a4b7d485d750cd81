//! Runs a host program from inside the sandbox, as a WebAssembly component: `ls -l /` (or
//! `ls -l DIR` with an argument), through the WIT package `wrt:process` and its SDK
//! `wrt-process`, and prints what came back.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run --release -- run --allow-run ls --ro-dir examples examples/components/target/wasm32-wasip2/release/spawn_ls.wasm "$PWD/examples"
//! ```
//!
//! Without `--allow-run ls` the spawn is denied, and the host's message says which flag would
//! allow it. Without `--ro-dir examples`, `ls` runs but cannot read the directory: the child
//! sandbox gives it only what the guest was given.

use std::io::ErrorKind;
use std::time::Duration;

use wrt_process::Command;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/".to_owned());
    let result = Command::new("ls").arg("-l").arg(&dir).timeout(Duration::from_secs(10)).output();
    let output = match result {
        Ok(output) => output,
        Err(err) if err.kind() == ErrorKind::PermissionDenied => {
            eprintln!("the sandbox did not allow it: {err}");
            wrt_process::exit(1);
        }
        Err(err) => {
            eprintln!("could not run ls: {err}");
            wrt_process::exit(1);
        }
    };
    println!("`ls -l {dir}` on the host printed:");
    print!("{}", String::from_utf8_lossy(&output.stdout));
    if !output.stderr.is_empty() {
        println!("and on stderr:");
        print!("{}", String::from_utf8_lossy(&output.stderr));
    }
    let status = output.status;
    println!("{status}, in {:?} (user {:?}, system {:?})", status.duration(), status.user_time(), status.system_time());
    wrt_process::exit(if status.success() { 0 } else { 1 });
}

//! Starts `sleep 1000.<argv[1]>` and waits for it forever: only the sandbox's `--timeout` can
//! stop this guest, and the child must not survive it. Needs `sleep`.
use std::io::Write;

use wrt_guest::Command;

fn main() {
    let token = std::env::args().nth(1).expect("a numeric token");
    let mut child = Command::new("sleep").arg(format!("1000.{token}")).spawn().expect("spawn sleep");
    println!("waiting for child {}", child.id());
    std::io::stdout().flush().expect("flush");
    let status = child.wait().expect("wait");
    panic!("the sleeper ended: {status}");
}

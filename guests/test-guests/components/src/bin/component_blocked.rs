//! Blocks on a child forever, in the way its argument says: `read` (a child's stdout that never
//! writes), `write` (a child's stdin that is never read, once the pipe is full), `exit` (the
//! child's exit pollable), `sleep` (a clock). Run under `--timeout`, the sandbox's deadline
//! must stop each. Needs `sleep`.
use std::io::{Read, Write};
use std::time::Duration;

use wrt_process::{Command, Stdio};

fn main() {
    let how = std::env::args().nth(1).expect("usage: component_blocked read|write|exit|sleep");
    let mut child =
        Command::new("sleep").arg("100").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn");
    println!("blocking on {how}");
    std::io::stdout().flush().expect("flush");
    match how.as_str() {
        "read" => {
            let mut out = Vec::new();
            let _ = child.stdout.take().expect("stdout").read_to_end(&mut out);
        }
        "write" => {
            let mut stdin = child.stdin.take().expect("stdin");
            let chunk = vec![b'x'; 1 << 16];
            loop {
                if stdin.write_all(&chunk).is_err() {
                    break;
                }
            }
        }
        "exit" => child.subscribe().block(),
        "sleep" => std::thread::sleep(Duration::from_secs(100)),
        other => panic!("unknown mode `{other}`"),
    }
    println!("unblocked: the deadline did not stop the guest");
}

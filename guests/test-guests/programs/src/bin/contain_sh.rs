//! Runs `sh -c <argv[1]>`. With `exit` (argv[2]), waits for the shell and exits 0 once it has
//! ended, leaving behind whatever the script started in the background; with `hang`, prints
//! `started` and waits for the shell forever, so that only a signal to wrt (or its
//! `--timeout`) ends the guest. Needs `sh`.
use std::io::Write;

use wrt_guest::Command;

fn main() {
    let script = std::env::args().nth(1).expect("a shell script");
    let mode = std::env::args().nth(2).expect("`exit` or `hang`");
    let mut child = Command::new("sh").arg("-c").arg(&script).spawn().expect("spawn sh");
    match mode.as_str() {
        "exit" => {
            let status = child.wait().expect("wait");
            println!("sh ended: {status}");
        }
        "hang" => {
            println!("started");
            std::io::stdout().flush().expect("flush");
            let status = child.wait().expect("wait");
            panic!("the shell ended: {status}");
        }
        other => panic!("unknown mode `{other}`"),
    }
}

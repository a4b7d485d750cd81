//! Prints `guest before`, runs `sh -c 'echo child out; echo child err >&2'` with its stdout and
//! stderr inherited, then prints `guest after` and exits with the child's code: under a
//! captured sandbox, the child's lines land in the same capture, between the guest's.

use wrt_guest::Command;

fn main() {
    println!("guest before");
    let status = Command::new("sh").args(["-c", "echo child out; echo child err >&2; exit 3"]).status();
    let code = match status {
        Ok(status) => status.code().unwrap_or(-1),
        Err(err) => {
            eprintln!("spawn failed: {err}");
            std::process::exit(100);
        }
    };
    println!("guest after");
    std::process::exit(code);
}

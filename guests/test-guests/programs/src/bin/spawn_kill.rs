//! Killing: `kill` ends `sleep` by SIGKILL, `signal(15)` by SIGTERM, killing an ended child
//! succeeds (also before it was waited for), signal numbers out of 1–31 are invalid, and
//! dropping a running child kills it at once (checked by looking for its unique command line,
//! `sleep 1000.<argv[1]>`, in /proc with `sh` and `grep`). Needs `sleep`, `true`, `sh`, `grep`.
use std::io::ErrorKind;
use std::time::Duration;

use wrt_guest::{Command, ErrorCode, Events};

/// The `/proc/PID/cmdline` files that contain `1000.<token>` (processes come and go while
/// grep runs, so errors are ignored and only its output counts).
fn processes_with(token: &str) -> String {
    let script = format!("grep -ls '1000\\.{token}' /proc/[0-9]*/cmdline; true");
    let out = Command::new("sh").args(["-c", &script]).output().expect("sh");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn main() {
    let token = std::env::args().nth(1).expect("a numeric token");

    let mut child = Command::new("sleep").arg("100").spawn().expect("spawn sleep");
    child.kill().expect("kill");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9), "{status}");
    assert!(!status.timed_out() && !status.success(), "{status}");
    child.kill().expect("killing an ended child succeeds");

    let mut child = Command::new("sleep").arg("100").spawn().expect("spawn sleep");
    child.signal(15).expect("SIGTERM");
    assert_eq!(child.wait().expect("wait").signal(), Some(15));

    // Ended but not yet waited for: kill still succeeds, and the status is its own exit.
    let mut child = Command::new("true").spawn().expect("spawn true");
    let ready = child.poll(Events::EXITED, Some(Duration::from_secs(10))).expect("poll");
    assert_eq!(ready, Events::EXITED);
    child.kill().expect("killing an ended, unreaped child succeeds");
    assert!(child.wait().expect("wait").success());

    for bad in [0, -1, 32, 64] {
        let err = child.signal(bad).expect_err("bad signal");
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}: {err}");
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::InvalidArgument), "{bad}: {err}");
    }

    // Releasing the handle of a running child kills it before `release` returns.
    let sleeper = format!("1000.{token}");
    let child = Command::new("sleep").arg(&sleeper).spawn().expect("spawn sleep");
    assert!(!processes_with(&token).is_empty(), "the sleeper is not running");
    drop(child);
    let survivors = processes_with(&token);
    assert!(survivors.is_empty(), "the sleeper survived its release: {survivors}");
    println!("kill ok");
}

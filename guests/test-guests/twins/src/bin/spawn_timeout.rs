//! Timeouts: `sleep 100` with a 300 ms command timeout ends timed out (through `status`,
//! `output` and a piped `spawn`), long before 100 s; `wait_timeout` on a running child returns
//! `None` and leaves it running. Needs `sleep`.
use std::time::{Duration, Instant};

use twins::sdk::{Command, ExitStatus, Stdio};

fn sleeper() -> Command {
    let mut cmd = Command::new("sleep");
    cmd.arg("100").timeout(Duration::from_millis(300));
    cmd
}

fn check(how: &str, status: ExitStatus, started: Instant) {
    assert!(status.timed_out(), "{how}: {status}");
    assert!(!status.success(), "{how}: {status}");
    assert!(matches!(status.signal(), Some(15 | 9)), "{how}: {status}");
    assert!(status.duration() >= Duration::from_millis(300), "{how}: {:?}", status.duration());
    assert!(started.elapsed() < Duration::from_secs(30), "{how}: took {:?}", started.elapsed());
    println!("{how}: {status} after {:?}", status.duration());
}

fn main() {
    let started = Instant::now();
    check("status", sleeper().status().expect("status"), started);
    let started = Instant::now();
    let out = sleeper().output().expect("output");
    check("output", out.status, started);
    let started = Instant::now();
    let child = sleeper().stdout(Stdio::piped()).spawn().expect("spawn");
    check("wait_with_output", child.wait_with_output().expect("wait_with_output").status, started);

    let mut child = Command::new("sleep").arg("100").spawn().expect("spawn");
    assert_eq!(child.wait_timeout(Duration::from_millis(200)).expect("wait_timeout"), None);
    assert_eq!(child.try_wait().expect("try_wait"), None);
    child.kill().expect("kill");
    let status = child.wait().expect("wait");
    assert!(!status.timed_out() && status.signal() == Some(9), "{status}");
    println!("timeout ok");
}

//! Exit codes and signals: `true`, `false`, `sh -c 'exit 3'`, `sh -c 'kill -TERM $$'` and
//! `kill -KILL`; waiting twice gives the same status. Needs `true`, `false` and `sh`.
use std::time::Duration;

use twins::sdk::{Command, ExitStatus};

fn sh(script: &str) -> ExitStatus {
    Command::new("sh").arg("-c").arg(script).status().expect(script)
}

fn main() {
    let status = Command::new("true").status().expect("true");
    assert!(status.success() && status.code() == Some(0) && status.signal().is_none(), "{status}");
    let status = Command::new("false").status().expect("false");
    assert_eq!((status.code(), status.success()), (Some(1), false), "{status}");

    let status = sh("exit 3");
    assert_eq!((status.code(), status.signal()), (Some(3), None), "{status}");
    assert_eq!(status.to_string(), "exit status: 3");

    let status = sh("kill -TERM $$");
    assert_eq!((status.code(), status.signal()), (None, Some(15)), "{status}");
    assert!(!status.success() && !status.timed_out());
    assert_eq!(status.to_string(), "signal: 15 (SIGTERM)");
    assert_eq!(sh("kill -KILL $$").signal(), Some(9));

    // The handle keeps the status until it is released: wait and try_wait repeat it.
    let mut child = Command::new("sh").args(["-c", "exit 42"]).spawn().expect("spawn");
    let first = child.wait().expect("wait");
    assert_eq!(first.code(), Some(42));
    assert_eq!(child.wait().expect("wait again"), first);
    assert_eq!(child.try_wait().expect("try_wait"), Some(first));
    assert_eq!(child.wait_timeout(Duration::from_millis(1)).expect("wait_timeout"), Some(first));
    assert!(first.user_time() + first.system_time() < Duration::from_secs(10));

    println!("status ok");
}

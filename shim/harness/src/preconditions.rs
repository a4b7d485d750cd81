//! What containerd needs before a test can start it: the tools installed, and root.

use std::process::Command;

/// Whether `test` can start containerd here: each of `tools` (containerd, and runc for the
/// CRI) runs, and this process is root. When not, says why on stderr and returns `false`,
/// except under CI (`CI` set), where a skip is a failure: it panics.
pub(crate) fn met(test: &str, tools: &[&str]) -> bool {
    let missing = tools.iter().find(|tool| Command::new(tool).arg("--version").output().is_err());
    let reason = if let Some(tool) = missing {
        format!("{tool} is not installed (apt-get install {tool})")
    } else if !is_root() {
        "containerd needs root".to_owned()
    } else {
        return true;
    };
    assert!(std::env::var_os("CI").is_none(), "{test}: {reason}, and CI must run this test");
    eprintln!("SKIPPED {test}: {reason}");
    false
}

fn is_root() -> bool {
    // `id -u` rather than libc, to keep this crate's tests free of `unsafe`.
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n")
}

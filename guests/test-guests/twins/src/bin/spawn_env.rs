//! Environment scrubbing: `env` sees exactly the variables `argv[1..]` lists (as `NAME=value`:
//! the host variables the policy passes through, and the `PATH` the policy gives a child that
//! nothing else gives one) plus the variables the guest set that the policy allows
//! (`WRT_ALLOWED`), never the guest's own (`GUEST_ONLY`) or any other host variable; a variable
//! the policy does not allow, or a loader variable, is denied. Needs `env`.
use std::io::ErrorKind;

use twins::sdk::{Command, ErrorCode};

/// The child's environment, sorted, without the `TMPDIR` of a confined child (a directory of
/// its own, whose name changes from run to run).
fn env_of(cmd: &mut Command) -> Vec<String> {
    let out = cmd.output().expect("env");
    assert!(out.status.success(), "{}", out.status);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut lines: Vec<String> = text.lines().filter(|l| !l.starts_with("TMPDIR=")).map(str::to_owned).collect();
    lines.sort();
    lines
}

fn expected(passed: &[String], set: &[&str]) -> Vec<String> {
    let mut lines: Vec<String> = passed.iter().cloned().chain(set.iter().map(|s| (*s).to_owned())).collect();
    lines.sort();
    lines
}

fn main() {
    let passed: Vec<String> = std::env::args().skip(1).collect();
    assert_eq!(std::env::var("GUEST_ONLY").as_deref(), Ok("1"), "the test gives the guest GUEST_ONLY=1");

    assert_eq!(env_of(&mut Command::new("env")), expected(&passed, &[]));
    assert_eq!(env_of(Command::new("env").env("WRT_ALLOWED", "yes")), expected(&passed, &["WRT_ALLOWED=yes"]));
    assert_eq!(env_of(Command::new("env").env("WRT_ALLOWED", "a b=c")), expected(&passed, &["WRT_ALLOWED=a b=c"]));
    assert_eq!(env_of(Command::new("env").env("WRT_ALLOWED", "yes").env_clear()), expected(&passed, &[]));
    let removed = env_of(Command::new("env").env("WRT_ALLOWED", "yes").env_remove("WRT_ALLOWED"));
    assert_eq!(removed, expected(&passed, &[]));

    for name in ["NOT_ALLOWED", "GUEST_ONLY", "LD_PRELOAD", "PATH"] {
        let err = Command::new("env").env(name, "x").output().expect_err(name);
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{name}: {err}");
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied), "{name}: {err}");
        assert!(err.to_string().contains(name), "{name}: the message does not name the variable: {err}");
        println!("{name}: {err}");
    }
    println!("env ok");
}

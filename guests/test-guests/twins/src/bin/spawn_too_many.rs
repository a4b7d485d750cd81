//! The policy's limit of concurrent children (`argv[1]`, default 16): one more spawn fails
//! with ResourceBusy and TOO_MANY_CHILDREN, and once a child has been waited for, or released,
//! its slot is free again. Needs `sleep`.
use std::io::ErrorKind;

use twins::sdk::{Child, Command, ErrorCode};

fn sleeper() -> std::io::Result<Child> {
    Command::new("sleep").arg("100").spawn()
}

fn main() {
    let max: usize = std::env::args().nth(1).map_or(16, |arg| arg.parse().expect("a count"));
    let mut children: Vec<Child> = (0..max).map(|i| sleeper().unwrap_or_else(|e| panic!("child {i}: {e}"))).collect();
    let err = sleeper().expect_err("one child too many");
    assert_eq!(err.kind(), ErrorKind::ResourceBusy, "{err}");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::TooManyChildren), "{err}");
    println!("child {}: {err}", max + 1);

    // An ended, waited-for child no longer counts.
    children[0].kill().expect("kill");
    children[0].wait().expect("wait");
    children.push(sleeper().expect("a slot after wait"));
    // Nor does a released one.
    drop(children.swap_remove(1));
    children.push(sleeper().expect("a slot after release"));
    assert_eq!(ErrorCode::of(&sleeper().expect_err("full again")), Some(ErrorCode::TooManyChildren));
    println!("too many ok");
}

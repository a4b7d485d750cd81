//! A spawn refused for want of a handle never runs. Holds `argv[1]` (default 1024, the handle
//! limit) finished children of `true` (stdio null), then asks for `true refused-spawn`, which must
//! fail with NO_MEMORY; releases one handle, and runs `true after-release`. Prints
//! `refused: MESSAGE` and `released ok`. Needs `true`.
use wrt_guest::{Child, Command, ErrorCode, Stdio};

fn quiet(arg: &str) -> std::io::Result<Child> {
    Command::new("true").arg(arg).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(1024, |arg| arg.parse().expect("a count"));
    let mut children = Vec::with_capacity(n);
    for i in 0..n {
        let mut child = quiet("held").unwrap_or_else(|e| panic!("child {i}: {e}"));
        assert!(child.wait().expect("wait").success());
        children.push(child);
    }
    let err = quiet("refused-spawn").expect_err("no handle is left");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::NoMemory), "{err}");
    println!("refused: {err}");
    drop(children.pop());
    let mut child = quiet("after-release").expect("a handle after a release");
    assert!(child.wait().expect("wait").success());
    println!("released ok");
}

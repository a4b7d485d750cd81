//! `Child::pipe_into` through the core-module SDK: `printf | sort` joined by the host, a source
//! whose stdout is not piped (refused before the host is asked), and a stage the policy denies
//! (the source keeps its stdout, still readable). Needs `printf` and `sort`; `ls` must be denied.
use std::io::{ErrorKind, Read};

use wrt_guest::{Command, ErrorCode, Stdio};

fn main() {
    // printf 'pear\napple\n' | sort
    let mut first = Command::new("printf").arg("pear\\napple\\n").stdout(Stdio::piped()).spawn().expect("printf");
    let sorted = first.pipe_into(Command::new("sort").stdout(Stdio::piped())).expect("printf | sort");
    assert!(first.stdout.is_none(), "the stdout went to sort");
    let sorted = sorted.wait_with_output().expect("wait sort");
    assert!(sorted.status.success(), "{}", sorted.status);
    assert_eq!(String::from_utf8_lossy(&sorted.stdout), "apple\npear\n");
    assert!(first.wait().expect("wait printf").success());

    // Nothing to pipe: stdout inherited.
    let mut quiet = Command::new("printf").arg("").spawn().expect("printf");
    let err = quiet.pipe_into(&mut Command::new("sort")).expect_err("stdout is not piped");
    assert_eq!((err.kind(), ErrorCode::of(&err)), (ErrorKind::BrokenPipe, Some(ErrorCode::NotPiped)), "{err}");
    println!("not piped: {err}");
    assert!(quiet.wait().expect("wait printf").success());

    // A denied stage: the source keeps its stdout.
    let mut kept = Command::new("printf").arg("kept").stdout(Stdio::piped()).spawn().expect("printf");
    let err = kept.pipe_into(&mut Command::new("ls")).expect_err("ls is denied");
    assert_eq!((err.kind(), ErrorCode::of(&err)), (ErrorKind::PermissionDenied, Some(ErrorCode::Denied)), "{err}");
    println!("denied: {err}");
    let mut text = String::new();
    kept.stdout.take().expect("stdout is back").read_to_string(&mut text).expect("read printf");
    assert_eq!(text, "kept");
    assert!(kept.wait().expect("wait printf").success());

    println!("pipe_into ok");
}

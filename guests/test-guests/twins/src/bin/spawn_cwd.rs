//! Working directory: `pwd` runs in `/` by default, in `argv[1]` and below when the policy
//! allows that directory, and is denied in `argv[2]`, in a relative directory, and in a
//! directory that does not exist. Needs `pwd`.
use std::io::ErrorKind;
use std::path::Path;

use twins::sdk::{Command, ErrorCode};

fn pwd(dir: Option<&str>) -> std::io::Result<String> {
    let mut cmd = Command::new("pwd");
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd.output()?;
    assert!(out.status.success(), "{}", out.status);
    Ok(String::from_utf8(out.stdout).expect("utf-8"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (allowed, outside) = (&args[1], &args[2]);
    assert_eq!(pwd(None).expect("default cwd"), "/\n");
    assert_eq!(pwd(Some(allowed)).expect("allowed cwd"), format!("{allowed}\n"));
    let sub = Path::new(allowed).join("sub");
    let sub = sub.to_str().expect("utf-8");
    assert_eq!(pwd(Some(sub)).expect("below the allowed cwd"), format!("{sub}\n"));

    let missing = format!("{allowed}/does-not-exist");
    for dir in [outside.as_str(), "sub", &missing] {
        let err = pwd(Some(dir)).expect_err(dir);
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{dir}: {err}");
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied), "{dir}: {err}");
        println!("{dir}: {err}");
    }
    println!("cwd ok");
}

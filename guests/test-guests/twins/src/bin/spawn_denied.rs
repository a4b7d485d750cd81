//! Denial: running `argv[1]` fails with PermissionDenied and the DENIED code through `spawn`,
//! `output` and `status`, and the host's message contains `argv[2]` (if given). The tests pass
//! a program without any allow rule, one with both an allow and a deny rule, and a symlink to
//! a denied program.
use std::io::ErrorKind;

use twins::sdk::{Command, ErrorCode, WrtError};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let program = &args[1];
    let expected = args.get(2);

    let errors = [
        Command::new(program).spawn().map(drop).expect_err("spawn"),
        Command::new(program).output().map(drop).expect_err("output"),
        Command::new(program).status().map(drop).expect_err("status"),
    ];
    for err in &errors {
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
        assert_eq!(ErrorCode::of(err), Some(ErrorCode::Denied), "{err}");
        let wrt = WrtError::from_io(err).expect("a WrtError");
        assert!(!wrt.message().is_empty(), "no message from the host");
        if let Some(expected) = expected {
            assert!(wrt.message().contains(expected.as_str()), "`{expected}` not in: {}", wrt.message());
        }
    }
    println!("denied: {}", errors[0]);
}

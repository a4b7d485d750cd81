//! A hostile guest: asks to run `argv[1]` `argv[2]` times, each time expecting a denial, to
//! check that the host's reports of denials are escaped and rate-limited.
use std::io::ErrorKind;

use wrt_guest::Command;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let program = &args[1];
    let count: u32 = args[2].parse().expect("a count");
    for _ in 0..count {
        let err = Command::new(program).status().map(drop).expect_err("denied");
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    }
    println!("denied {count} times");
}

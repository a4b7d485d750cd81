//! Runs `sh -c true` on the host, whatever its arguments, and prints `spawned` or `denied`:
//! for tests that arguments after the module never change the spawn policy.
use std::io::ErrorKind;

use wrt_guest::{Command, ErrorCode};

fn main() {
    match Command::new("sh").args(["-c", "true"]).status() {
        Ok(status) => println!("spawned: {status}"),
        Err(err) if err.kind() == ErrorKind::PermissionDenied && ErrorCode::of(&err) == Some(ErrorCode::Denied) => {
            println!("denied");
        }
        Err(err) => panic!("unexpected error: {err}"),
    }
}

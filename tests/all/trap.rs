//! Traps end the run with 134, one clear message and the wasm backtrace, no Rust backtrace.

use wrt_test_guests::*;

use crate::util::{assert_code, run, stderr, wrt_lines};

foreach_trap!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn trap_panic() {
    let out = wrt_with_backtrace_env(TRAP_PANIC);
    assert_code(&out, 134);
    let err = stderr(&out);
    let lines = wrt_lines(&out);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("trapped: wasm trap: wasm `unreachable` instruction executed"), "{err}");
    // The backtrace follows the message and names the guest's own functions, innermost first.
    let after = err.split_once(&lines[0]).unwrap().1;
    assert!(after.trim_start().starts_with("wasm backtrace:"), "{err}");
    let innermost = after.find("trap_panic::innermost").expect("innermost frame");
    let middle = after.find("trap_panic::middle").expect("middle frame");
    assert!(innermost < middle, "{err}");
    // Nothing of the host's own Rust backtrace or panic machinery.
    assert!(!err.contains("stack backtrace:") && !err.contains("wrt-runtime") && !err.contains("note: using"), "{err}");
}

#[test]
fn trap_out_of_bounds() {
    let out = run(["run", TRAP_OUT_OF_BOUNDS]);
    assert_code(&out, 134);
    assert_eq!(wrt_lines(&out).len(), 1);
    // Issue 16: the message shows the address the guest reached for.
    assert!(
        stderr(&out)
            .contains("trapped: wasm trap: out of bounds memory access: memory fault at wasm address 0xffffff00"),
        "{}",
        stderr(&out)
    );
}

/// Runs a trapping guest with `RUST_BACKTRACE=1` set: wrt must still print no Rust backtrace.
fn wrt_with_backtrace_env(guest: &str) -> std::process::Output {
    crate::util::wrt().env("RUST_BACKTRACE", "1").args(["run", guest]).output().unwrap()
}

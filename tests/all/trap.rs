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
    // (Demangled as `trap_panic::innermost`, or, as Rust 1.97 mangles it (v0), as
    // `trap_panic[HASH]::innermost`.)
    let frame =
        |name: &str| after.lines().position(|line| line.contains("trap_panic") && line.ends_with(&format!("::{name}")));
    let innermost = frame("innermost").expect("innermost frame");
    let middle = frame("middle").expect("middle frame");
    assert!(innermost < middle, "{err}");
    // Nothing of the host's own Rust backtrace or panic machinery.
    assert!(!err.contains("stack backtrace:") && !err.contains("wrt-runtime") && !err.contains("note: using"), "{err}");
}

#[test]
fn trap_out_of_bounds() {
    let out = run(["run", TRAP_OUT_OF_BOUNDS]);
    assert_code(&out, 134);
    assert_eq!(wrt_lines(&out).len(), 1);
    // The message shows the address the guest reached for.
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

/// The backtrace points at the trapping instruction: an `unreachable` that is a function's
/// first instruction was reported one byte early (at the function's local declarations),
/// where the entry check that timeouts compile in takes the instruction's place. Without
/// `--timeout` no such check is compiled, and the offset is the instruction's, as in `wasmtime
/// run`; with one, it is the documented one byte early.
#[test]
fn a_trap_at_a_function_s_first_instruction_is_reported_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("first.wasm");
    // `(module (func (export "_start") unreachable))`, encoded by hand.
    let mut bytes = b"\0asm\x01\0\0\0".to_vec();
    bytes.extend([0x01, 0x04, 0x01, 0x60, 0x00, 0x00]); // types: () -> ()
    bytes.extend([0x03, 0x02, 0x01, 0x00]); // functions: one of type 0
    bytes.extend([0x07, 0x0a, 0x01, 0x06]); // exports: one, named …
    bytes.extend(b"_start");
    bytes.extend([0x00, 0x00]); // … function 0
    bytes.extend([0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b]); // code
    // The body: its size (3), no locals, `unreachable` (0x00), `end` (0x0b).
    let body = bytes.windows(4).position(|w| w == [0x03, 0x00, 0x00, 0x0b]).expect("the function body");
    let unreachable = body + 2;
    std::fs::write(&path, &bytes).unwrap();
    let frame = |out: &std::process::Output| {
        let err = stderr(out);
        err.lines().find(|l| l.trim_start().starts_with("0:")).map(str::to_owned).unwrap_or_else(|| panic!("{err}"))
    };
    let plain = run(["run", path.to_str().unwrap()]);
    assert_code(&plain, 134);
    assert!(frame(&plain).contains(&format!("{unreachable:#x} ")), "{}", frame(&plain));
    let timed = run(["run", "--timeout", "10s", path.to_str().unwrap()]);
    assert_code(&timed, 134);
    assert!(frame(&timed).contains(&format!("{:#x} ", unreachable - 1)), "{}", frame(&timed));
}

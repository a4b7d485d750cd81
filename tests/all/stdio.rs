//! A core module's writes to its stdout and stderr: straight from linear memory to wrt's own
//! streams while they are wrt's, and through WASI's own `fd_write` once the guest closes or
//! renumbers them.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::util::{assert_code, run, stderr, stdout, wrt};

/// A module whose `_start` runs `body`, with `fd_write`, `fd_renumber`, `fd_close` and
/// `proc_exit` imported as `$write`, `$renumber`, `$close` and `$exit`, two pages of memory,
/// the text "to fd\n" at 16 and a `ciovec` for it at 0.
fn guest(dir: &Path, name: &str, body: &str) -> PathBuf {
    let text = format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 2)
  (data (i32.const 0) "\10\00\00\00\06\00\00\00")
  (data (i32.const 16) "to fd\n")
  (func (export "_start") {body}))"#
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Three 40,000-byte buffers of `a`, `b` and `c` with an empty one among them, written to
/// stdout in one call; exits 0 if the call reports all 120,000 bytes written, else its errno or
/// 1.
const THREE_BUFFERS: &str = r#"
    (memory.fill (i32.const 0x1000) (i32.const 97) (i32.const 40000))
    (memory.fill (i32.const 0xb000) (i32.const 98) (i32.const 40000))
    (memory.fill (i32.const 0x15000) (i32.const 99) (i32.const 40000))
    (i32.store (i32.const 0x100) (i32.const 0x1000)) (i32.store (i32.const 0x104) (i32.const 40000))
    (i32.store (i32.const 0x108) (i32.const 0)) (i32.store (i32.const 0x10c) (i32.const 0))
    (i32.store (i32.const 0x110) (i32.const 0xb000)) (i32.store (i32.const 0x114) (i32.const 40000))
    (i32.store (i32.const 0x118) (i32.const 0x15000)) (i32.store (i32.const 0x11c) (i32.const 40000))
    (local.set 0 (call $write (i32.const 1) (i32.const 0x100) (i32.const 4) (i32.const 0x200)))
    (if (local.get 0) (then (call $exit (local.get 0))))
    (call $exit (i32.ne (i32.load (i32.const 0x200)) (i32.const 120000)))"#;

fn three_buffers(dir: &Path) -> PathBuf {
    guest(dir, "three.wat", &format!("(local i32) {THREE_BUFFERS}"))
}

fn expected_three() -> Vec<u8> {
    b"abc".iter().flat_map(|&byte| std::iter::repeat_n(byte, 40000)).collect()
}

/// Every buffer of one `fd_write` reaches stdout, in order and whole, whatever stdout is: a pipe
/// (written in pieces), a regular file, and under a deadline.
#[test]
fn every_buffer_of_a_write_to_stdout_arrives_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let guest = three_buffers(dir.path());
    let out = run(["run".as_ref(), guest.as_os_str()]);
    assert_code(&out, 0);
    assert!(out.stdout == expected_three(), "{} bytes, not the three buffers", out.stdout.len());

    let out = run(["run".as_ref(), "--timeout".as_ref(), "30s".as_ref(), guest.as_os_str()]);
    assert_code(&out, 0);
    assert!(out.stdout == expected_three(), "under a deadline: {} bytes", out.stdout.len());

    let file = dir.path().join("out");
    let status =
        wrt().args(["run".as_ref(), guest.as_os_str()]).stdout(std::fs::File::create(&file).unwrap()).status().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(std::fs::read(&file).unwrap() == expected_three(), "to a file");
}

/// After `fd_renumber(2, 1)` the guest's descriptor 1 is its stderr, and descriptor 2 is gone:
/// writes to 1 reach wrt's stderr, never its stdout, and writes to 2 fail with `EBADF` (8).
#[test]
fn stdout_renumbered_by_the_guest_is_no_longer_wrt_s_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let body = "(drop (call $renumber (i32.const 2) (i32.const 1)))
        (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
        (call $exit (call $write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))";
    let out = run(["run".as_ref(), guest(dir.path(), "renumber.wat", body).as_os_str()]);
    assert_code(&out, 8);
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "to fd\n");
}

/// After `fd_close(1)`, a write to 1 fails with `EBADF` (8) and nothing reaches wrt's stdout.
#[test]
fn stdout_closed_by_the_guest_takes_no_more_writes() {
    let dir = tempfile::tempdir().unwrap();
    let body = "(drop (call $close (i32.const 1)))
        (call $exit (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))";
    let out = run(["run".as_ref(), guest(dir.path(), "close.wat", body).as_os_str()]);
    assert_code(&out, 8);
    assert_eq!(stdout(&out), "");
}

/// A buffer out of linear memory traps, as WASI's own `fd_write` does, and writes nothing; so
/// does a list of buffers that ends out of memory or is misaligned. A place for the count out of
/// memory traps after the write, as in WASI's own.
#[test]
fn a_write_to_stdout_out_of_bounds_traps_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "buffer",
            "",
            "(i32.store (i32.const 4) (i32.const 0x20000))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))",
        ),
        (
            "buffer end",
            "",
            "(i32.store (i32.const 0) (i32.const 0x1fffc))
            (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))",
        ),
        ("list", "", "(drop (call $write (i32.const 1) (i32.const 0x1fffc) (i32.const 1) (i32.const 8)))"),
        ("misaligned list", "", "(drop (call $write (i32.const 1) (i32.const 2) (i32.const 1) (i32.const 8)))"),
        ("count", "to fd\n", "(drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 0x1fffe)))"),
    ];
    for (what, written, body) in cases {
        let out = run(["run".as_ref(), guest(dir.path(), "oob.wat", body).as_os_str()]);
        assert_code(&out, 134);
        assert_eq!(stdout(&out), written, "{what}");
        assert!(stderr(&out).contains("out of bounds") || stderr(&out).contains("aligned"), "{what}: {}", stderr(&out));
    }
}

/// A write to a pipe whose reader has gone fails with `EIO` (29), as WASI's own reports a closed
/// stream, rather than killing wrt with `SIGPIPE`.
#[test]
fn a_write_to_a_closed_stdout_pipe_fails_with_eio() {
    let dir = tempfile::tempdir().unwrap();
    let guest = guest(
        dir.path(),
        "pipe.wat",
        "(call $exit (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))",
    );
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = wrt().args(["run".as_ref(), guest.as_os_str()]).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    assert_code(&out, 29);
}

/// When wrt's own stdout is closed, the guest's writes succeed and go nowhere, as Rust's
/// standard output treats a closed descriptor.
#[test]
fn a_write_to_stdout_that_wrt_has_not_got_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let guest = three_buffers(dir.path());
    let script = format!("exec \"$0\" run '{}' >&-", guest.display());
    let out = crate::util::wrt_under_sh(&script).output().unwrap();
    assert_code(&out, 0);
}

/// A discarded stdout or stderr (`GuestOutput::Null`) takes every write, as WASI's own does for
/// a stream that goes nowhere: the guest sees all of its bytes written, on either descriptor.
#[test]
fn a_discarded_stdout_takes_every_byte() {
    use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new().unwrap();
    let to_stdout = runtime.load_file(three_buffers(dir.path())).unwrap();
    let report = to_stdout.run(&RunOptions::new().stdout(GuestOutput::Null)).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    let text = std::fs::read_to_string(dir.path().join("three.wat")).unwrap();
    let to_stderr = dir.path().join("three_stderr.wat");
    std::fs::write(&to_stderr, text.replace("(call $write (i32.const 1)", "(call $write (i32.const 2)")).unwrap();
    let report = runtime.load_file(&to_stderr).unwrap().run(&RunOptions::new().stderr(GuestOutput::Null)).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
}

/// A write from the module's start function, before instantiation has finished (the host has
/// not yet kept the guest's memory export), reaches stdout whole and reports every byte.
#[test]
fn a_write_to_stdout_from_the_start_function_arrives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(three_buffers(dir.path())).unwrap();
    let started =
        text.replace("(func (export \"_start\")", "(start $from_start) (func (export \"_start\")) (func $from_start");
    let path = dir.path().join("start.wat");
    std::fs::write(&path, started).unwrap();
    let out = run(["run".as_ref(), path.as_os_str()]);
    assert_code(&out, 0);
    assert!(out.stdout == expected_three(), "{} bytes, not the three buffers", out.stdout.len());
}

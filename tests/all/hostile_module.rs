//! What a hostile module's own bytes can make wrt print or read before any of its code runs:
//! its import, export and function names reach wrt's messages escaped and capped, and the file
//! itself must be a regular file or a pipe of bounded size.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::util::{SPAWN_LOCK, assert_code, run, stderr, wrt, wrt_lines};

/// Writes `text` to `name` in `dir`.
fn module(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// stderr holds no control character but newlines, and only its first line is wrt's.
#[track_caller]
fn assert_one_clean_message(out: &std::process::Output) {
    let err = stderr(out);
    let head: String = err.chars().take(600).collect();
    assert!(!err.chars().any(|c| c != '\n' && c.is_control()), "a control character reached stderr: {head:?}");
    assert_eq!(wrt_lines(out).len(), 1, "{head}");
    assert!(err.starts_with("wrt: "), "{head}");
}

/// Before, the import's names were printed raw: an ESC sequence reached the terminal, a newline
/// forged a `wrt:` line, and a 100 KB name was printed in full.
#[test]
fn import_names_in_messages_are_escaped_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let long = "n".repeat(100_000);
    let text = format!(
        r#"(module (import "env\1b[2J\0awrt: guest `x` exited with 0" "{long}" (func)) (func (export "_start")))"#
    );
    let path = module(dir.path(), "names.wat", &text);
    let out = run(["run".as_ref(), "--no-cache".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_one_clean_message(&out);
    let err = stderr(&out);
    let head: String = err.chars().take(600).collect();
    assert!(err.contains(r"env\u{1b}[2J\nwrt: guest `x` exited with 0::"), "{head}");
    assert!(err.contains("…(100000 bytes)"), "{head}");
    assert!(err.len() < 2_000, "{} bytes of stderr", err.len());
}

/// Before, the names of the module's exports were listed raw when `--invoke` named none of them.
#[test]
fn export_names_listed_for_a_missing_export_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = module(dir.path(), "exports.wat", r#"(module (func (export "f\0awrt: forged\1b[31m")))"#);
    let out = run(["run".as_ref(), "--invoke".as_ref(), "g".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_one_clean_message(&out);
    assert!(stderr(&out).contains(r"`f\nwrt: forged\u{1b}[31m`"), "{}", stderr(&out));
}

/// Before, wasmtime's validation message quoted the duplicate export's name raw.
#[test]
fn compile_errors_quoting_module_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = module(
        dir.path(),
        "dup.wat",
        r#"(module (func (export "a\0awrt: forged")) (func (export "a\0awrt: forged")))"#,
    );
    let out = run(["run".as_ref(), "--no-cache".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_one_clean_message(&out);
    assert!(stderr(&out).contains(r"a\nwrt: forged"), "{}", stderr(&out));
}

/// Before, the function names of a trap's backtrace (from the module's name section) were
/// printed raw.
#[test]
fn function_names_in_a_trap_backtrace_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = module(
        dir.path(),
        "trap.wat",
        r#"(module
            (func (@name "evil\1b[2J\07") (export "_start") call $f)
            (func $f (@name "f\0a    wrt: guest exited with 0") unreachable))"#,
    );
    let out = run(["run".as_ref(), "--no-cache".as_ref(), path.as_os_str()]);
    assert_code(&out, 134);
    let err = stderr(&out);
    assert!(!err.chars().any(|c| c != '\n' && c.is_control()), "{err:?}");
    assert_eq!(wrt_lines(&out).len(), 1, "{err}");
    assert!(err.contains(r"evil\u{1b}[2J\u{7}"), "{err}");
    assert!(err.lines().all(|line| !line.trim_start().starts_with("wrt: guest exited")), "{err}");
}

/// Before, a module of two memories that fit the limit one by one but not together was
/// refused with the second memory's size alone ("needs 40 MiB …, more than … 64 MiB").
#[test]
fn memories_refused_together_are_named_together() {
    let dir = tempfile::tempdir().unwrap();
    let path = module(dir.path(), "two.wat", r#"(module (memory 640) (memory 640) (func (export "_start")))"#);
    let out = run(["run".as_ref(), "--max-memory".as_ref(), "64MiB".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        ["wrt: guest `two.wat` needs 80 MiB of memory to start (the declared minimums of its 2 memories together), \
          more than the memory limit of 64 MiB; raise the limit with `--max-memory`"]
    );
}

/// Before, `/dev/zero` as the module was read until the allocation failed (about 1 GB).
#[test]
fn a_device_or_a_directory_as_the_module_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (path, kind) in [(Path::new("/dev/zero"), "a character device"), (dir.path(), "a directory")] {
        let out = run(["run".as_ref(), path.as_os_str()]);
        assert_code(&out, 2);
        assert_eq!(wrt_lines(&out), [format!("wrt: `{}` is {kind}, not a WebAssembly file", path.display())]);
    }
}

/// A module read from a pipe (`wrt run /dev/stdin`) still runs; a FIFO nobody writes to does
/// not hang wrt in `open`.
#[test]
fn a_module_from_a_pipe_runs_and_an_unwritten_fifo_does_not_hang() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let text = r#"(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (func (export "_start") (call $exit (i32.const 7))))"#;
    let mut child = wrt().args(["run", "/dev/stdin"]).stdin(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 7);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.wasm");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let out = run(["run".as_ref(), fifo.as_os_str()]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("is not a WebAssembly module"), "{}", stderr(&out));
}

/// Before, wrt's own messages panicked on a closed stderr (`eprintln!` and `EPIPE`), so wrt
/// exited 101 instead of the documented code.
#[test]
fn a_closed_stderr_keeps_the_documented_exit_codes() {
    let _lock = SPAWN_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let trap = module(dir.path(), "trap.wat", r#"(module (func (export "_start") unreachable))"#);
    let missing = dir.path().join("missing.wasm");
    for (path, code) in [(trap.as_path(), 134), (missing.as_path(), 2)] {
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        drop(read_end);
        let out = wrt()
            .args(["run".as_ref(), path.as_os_str()])
            .stderr(Stdio::from(write_end))
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{}: {:?}", path.display(), out.status);
    }
}

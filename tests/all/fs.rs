//! Preopened directories: reading, writing, and the read-only form refusing writes.

use wrt_test_guests::*;

use crate::util::{assert_code, run, stdout};

foreach_fs!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn fs_read_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.txt"), "line one\nline two\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let spec = format!("{}::/data", dir.path().display());
    let out = run(["run", "--ro-dir", &spec, FS_READ_DIR]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "entries: [\"input.txt\", \"sub\"]\nline one\nline two\n");
}

#[test]
fn fs_write() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("{}::/out", dir.path().display());
    let out = run(["run", "--dir", &spec, FS_WRITE]);
    assert_code(&out, 0);
    assert_eq!(std::fs::read_to_string(dir.path().join("result.txt")).unwrap(), "written by the guest\n");
}

#[test]
fn fs_write_refused_on_read_only_dir() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("{}::/out", dir.path().display());
    let out = run(["run", "--ro-dir", &spec, FS_WRITE, "expect-denied"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "write refused\n");
    assert!(!dir.path().join("result.txt").exists());
}

#[test]
fn fs_without_preopen_sees_nothing() {
    let out = run(["run", FS_READ_DIR]);
    assert_code(&out, 134);
}

#[test]
fn missing_preopen_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent");
    let out = run(["run", "--dir", &format!("{}::/data", missing.display()), FS_READ_DIR]);
    assert_code(&out, 2);
    assert!(crate::util::stderr(&out).contains(&format!("`{}`", missing.display())));
}

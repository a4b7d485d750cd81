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

/// A guest reading a FIFO never blocks past the timeout, with or without a silent writer.
/// wasmtime-wasi opens the FIFO without waiting for a writer and reads files at an offset, so the
/// read fails at once with `ESPIPE` (exit 100 + 70).
#[test]
fn fs_read_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let spec = format!("{}::/", dir.path().display());
    for writer in [false, true] {
        // A silent writer (read-write, so opening it does not wait for a reader).
        let _writer = writer.then(|| std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap());
        let (out, elapsed) = crate::util::output_within(
            crate::util::wrt().args(["run", "--timeout", "1s", "--dir", &spec, FS_READ_FIFO]),
            std::time::Duration::from_secs(30),
        );
        assert_code(&out, 170);
        assert!(elapsed < std::time::Duration::from_secs(8), "writer {writer}: took {:?}", elapsed);
    }
}

#[test]
fn fs_open_fifo() {
    // With the other end held open (read-write, which waits for nobody), both opens return.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let _other_end = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let spec = format!("{}::/", dir.path().display());
    for (preopen, write) in [("--ro-dir", "0"), ("--dir", "1")] {
        let out = run(["run", "--timeout", "10s", preopen, &spec, "--invoke", "open", FS_OPEN_FIFO, write]);
        assert_code(&out, 0);
        assert_eq!(stdout(&out), "0\n", "{preopen}");
    }
}

/// A FIFO opened for reading only (every open in a `--ro-dir`) or for writing only waits in
/// `openat` for the other end: it kept the guest past `--timeout` for good. From the deadline on
/// the open is interrupted, and the guest stops with the timeout's exit code.
/// Before, a read of a character device that waits for data (`/dev/kmsg`, once its records
/// are read) in a preopened directory ran past `--timeout`: no wasm ran, so the epoch could not
/// stop it. (A terminal or a pipe fails at once with `ESPIPE`: WASI preview 1 reads at an
/// offset.)
#[test]
fn fs_read_device() {
    if let Err(err) = std::fs::File::open("/dev/kmsg") {
        eprintln!("SKIPPED fs_read_device: `/dev/kmsg` cannot be read here ({err}); it needs root");
        return;
    }
    let (out, elapsed) = crate::util::output_within(
        crate::util::wrt().args([
            "run",
            "--timeout",
            "1s",
            "--allow-pseudo-fs",
            "--ro-dir",
            "/dev::/dev",
            FS_READ_DEVICE,
            "/dev/kmsg",
        ]),
        std::time::Duration::from_secs(30),
    );
    assert_code(&out, 124);
    assert!(elapsed < std::time::Duration::from_secs(8), "took {:?}", elapsed);
}

#[test]
fn fifo_opens_stop_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&dir.path().join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let spec = format!("{}::/", dir.path().display());
    for (preopen, write) in [("--ro-dir", "0"), ("--dir", "1")] {
        let (out, elapsed) = crate::util::output_within(
            crate::util::wrt().args([
                "run",
                "--timeout",
                "1s",
                preopen,
                &spec,
                "--invoke",
                "open",
                FS_OPEN_FIFO,
                write,
            ]),
            std::time::Duration::from_secs(30),
        );
        assert_code(&out, 124);
        assert!(elapsed < std::time::Duration::from_secs(8), "{preopen}: took {:?}", elapsed);
    }
}

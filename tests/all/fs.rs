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

/// A directory of `count` files named `{prefix}{i}`, and its names as a guest lists them
/// (with `.` and `..`), sorted.
fn directory_of(count: usize, prefix: &str) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("many");
    std::fs::create_dir(&sub).unwrap();
    let mut names = vec![".".to_owned(), "..".to_owned()];
    for i in 0..count {
        let name = format!("{prefix}{i}");
        std::fs::write(sub.join(&name), b"").unwrap();
        names.push(name);
    }
    names.sort();
    (dir, names)
}

fn read_dir_passes(dir: &std::path::Path, args: &[&str]) -> String {
    let spec = format!("{}::/d", dir.display());
    let out = run(["run", "--dir", &spec, FS_READ_DIR_PASSES].iter().chain(args));
    assert_code(&out, 0);
    stdout(&out)
}

/// 3,000 files read with raw `fd_readdir` 4 KiB, 60 bytes and 1 MiB at a time: every name
/// once, whatever the buffer (wrt lists the directory once a pass and answers the calls that
/// follow from that listing, which outgrows its first size here).
#[test]
fn fs_read_dir_passes() {
    let (dir, names) = directory_of(3000, "file-");
    for buffer in ["4096", "60", "1048576"] {
        let listed = read_dir_passes(dir.path(), &["list", "many", buffer]);
        assert_eq!(listed.lines().collect::<Vec<_>>(), names, "read {buffer} bytes at a time");
    }
}

/// Every cookie answered with the bytes a whole read holds from that entry on, cut at the
/// buffer's end as WASI cuts them (inside a header, inside a name), and nothing past the end.
#[test]
fn read_dir_answers_each_cookie_with_the_same_bytes_cut_at_the_buffer() {
    let (dir, names) = directory_of(40, "a-longer-name-");
    let out = read_dir_passes(dir.path(), &["cookies", "many"]);
    assert_eq!(out, format!("cookies agree: {} entries\n", names.len()));
}

/// Removing each file as it is listed, reading on from the next cookie (as `rm -r` does),
/// removes them all. WASI's own `fd_readdir` lists the directory again on every call and skips
/// as many entries as the cookie says, so files went unseen: 1,000 files left 480 behind.
#[test]
fn removing_files_while_listing_them_removes_every_one() {
    let (dir, _) = directory_of(1000, "doomed-");
    let out = read_dir_passes(dir.path(), &["unlink", "many", "4096"]);
    assert_eq!(out, "removed 1000\n");
    assert_eq!(std::fs::read_dir(dir.path().join("many")).unwrap().count(), 0);
}

/// A descriptor closed, or renumbered over, answers from the directory it now names, never
/// from the listing of the one it named before.
#[test]
fn a_closed_or_renumbered_descriptor_answers_for_its_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    for (sub, names) in [("a", ["a1", "a2", "a3"]), ("b", ["b1", "b2", "b3"])] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        for name in names {
            std::fs::write(dir.path().join(sub).join(name), b"").unwrap();
        }
    }
    // Cookie 2 skips `.` and `..`, which come first.
    let closed = read_dir_passes(dir.path(), &["close", "a", "b"]);
    assert_eq!(closed, "b1 b2 b3\n", "the descriptor now names `b`");
    let renumbered = read_dir_passes(dir.path(), &["renumber", "a", "b"]);
    assert_eq!(renumbered, "a1 a2 a3\n", "the descriptor of `b` now names `a`");
}

/// A directory whose listing is longer than wrt keeps (512 KiB: 5,000 names of 200 bytes) is
/// read through WASI's own function, call by call: every name once.
#[test]
fn a_directory_past_the_listing_limit_is_read_whole() {
    let (dir, names) = directory_of(5000, &"n".repeat(196));
    let listed = read_dir_passes(dir.path(), &["list", "many", "65536"]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), names);
}

/// `fd_readdir` with bad arguments answers as WASI's own does (the same answers `wasmtime run`
/// gives): a buffer or a length's place out of bounds traps ("Pointer out of bounds"), a
/// descriptor that is not a directory or not open gets `EBADF` (8), a buffer longer than the
/// memory but a listing that fits is answered, and a cookie past the end or an empty buffer
/// gets nothing. Never a host panic.
#[test]
fn read_dir_with_bad_arguments_answers_as_wasi_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    for name in ["a", "b"] {
        std::fs::write(dir.path().join("d").join(name), b"").unwrap();
    }
    let wat = dir.path().join("readdir.wat");
    std::fs::write(
        &wat,
        r#"(module
  (import "wasi_snapshot_preview1" "fd_readdir" (func $readdir (param i32 i32 i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "readdir") (param i32 i32 i32 i64 i32) (result i32)
    (call $readdir (local.get 0) (local.get 1) (local.get 2) (local.get 3) (local.get 4))))"#,
    )
    .unwrap();
    let spec = format!("{}::/d", dir.path().join("d").display());
    let call = |args: &[&str]| {
        let out = run(["run", "--dir", &spec, "--invoke", "readdir", wat.to_str().unwrap()].iter().chain(args));
        (out.status.code(), stdout(&out).trim().to_owned(), crate::util::stderr(&out))
    };
    for (args, errno) in [
        (["3", "0", "4096", "0", "8192"], "0"),
        (["3", "0", "100000", "0", "8192"], "0"),
        (["3", "0", "100", "99", "8192"], "0"),
        (["3", "0", "0", "0", "8192"], "0"),
        (["1", "0", "100", "0", "8192"], "8"),
        (["99", "0", "100", "0", "8192"], "8"),
    ] {
        let (code, out, err) = call(&args);
        assert_eq!((code, out.as_str()), (Some(0), errno), "{args:?}: {err}");
    }
    for args in [["3", "65500", "100", "0", "8192"], ["3", "0", "100", "0", "65534"]] {
        let (code, _, err) = call(&args);
        assert_eq!(code, Some(134), "{args:?}: {err}");
        assert!(err.contains("Pointer out of bounds"), "{args:?}: {err}");
    }
}

//! Helpers shared by the test modules.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Held by tests that fork, wait on children or send signals, until their children are reaped.
pub(crate) use wrt_test_support::SPAWN_LOCK;

/// A compile cache shared by the tests, kept out of the user's own cache directory.
pub(crate) fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wrt-cache")
}

/// `program`, to be started in the state the tests assume (default signal dispositions, no
/// signal blocked, a process group of its own), whatever state the test runner was started
/// in, with the test cache and stdin closed. For wrt itself and for the shells that start it.
pub(crate) fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    wrt_test_support::known_state(&mut cmd).env("XDG_CACHE_HOME", cache_dir()).stdin(Stdio::null());
    cmd
}

/// `wrt` with the test cache, stdin closed, in the state the tests assume ([`command`]).
pub(crate) fn wrt() -> Command {
    command(env!("CARGO_BIN_EXE_wrt"))
}

/// `sh -c SCRIPT wrt` in the state the tests assume, for a script that sets up the shell's
/// state and then runs `exec "$0" "$@"` (wrt with the arguments the caller adds).
pub(crate) fn wrt_under_sh(script: &str) -> Command {
    let mut cmd = command("sh");
    cmd.args(["-c", script, env!("CARGO_BIN_EXE_wrt")]);
    cmd
}

/// Runs `wrt ARGS` under `strace -f`, tracing the system calls `calls` (strace's `trace=`
/// list) of wrt and every child, and returns its output and the trace. `None` (after saying
/// the test named `test` was skipped) where strace is not installed.
pub(crate) fn wrt_under_strace<I, S>(test: &str, calls: &str, args: I) -> Option<(Output, String)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("SKIPPED {test}: strace is not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let out = command("strace")
        .args(["-f", "-qq", "-e", &format!("trace={calls}"), "-e", "signal=none", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_wrt"))
        .args(args)
        .output()
        .unwrap();
    Some((out, std::fs::read_to_string(&trace).unwrap()))
}

/// A marker unique to this test on this machine ([`wrt_test_support::token`]).
pub(crate) use wrt_test_support::token;

/// Runs `cmd` with stdout and stderr piped, kills it if it has not exited after `limit`, and
/// returns its output and how long it ran (for tests of deadlines that must not hang).
pub(crate) fn output_within(cmd: &mut Command, limit: std::time::Duration) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("failed to start");
    while child.try_wait().unwrap().is_none() && start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    (out, start.elapsed())
}

/// Runs `wrt` with `args` and returns its output.
pub(crate) fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    wrt().args(args).output().expect("failed to start wrt")
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the exit code, printing both streams when it differs.
#[track_caller]
pub(crate) fn assert_code(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out));
}

/// Lines wrt itself wrote to stderr (its messages start with `wrt: `).
pub(crate) fn wrt_lines(out: &Output) -> Vec<String> {
    stderr(out).lines().filter(|l| l.starts_with("wrt: ")).map(str::to_owned).collect()
}

/// The number at `key` in a flat JSON object on one line (a guest's result line, or the
/// `--stats=json` line).
#[track_caller]
pub(crate) fn json_number(line: &str, key: &str) -> f64 {
    let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    value.get(key).and_then(serde_json::Value::as_f64).unwrap_or_else(|| panic!("no number `{key}` in {line}"))
}

/// The JSON line `wrt run --stats=json` printed on stderr.
#[track_caller]
pub(crate) fn stats_line(out: &Output) -> String {
    let err = stderr(out);
    let line = err.lines().rev().find(|l| l.starts_with('{') && l.contains("\"peak_external\""));
    line.unwrap_or_else(|| panic!("no stats line on stderr:\n{err}")).to_owned()
}

/// The value of an extended attribute of `path`.
#[allow(unsafe_code, reason = "getxattr is not wrapped by nix")]
pub(crate) fn xattr(path: &Path, name: &str) -> Vec<u8> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let path = CString::new(path.as_os_str().as_bytes()).unwrap();
    let name = CString::new(name).unwrap();
    let mut buf = vec![0u8; 256];
    // SAFETY: both strings are NUL-terminated; `buf` is valid for writes of its length.
    let len = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    assert!(len >= 0, "getxattr: {}", std::io::Error::last_os_error());
    buf.truncate(len.unsigned_abs());
    buf
}

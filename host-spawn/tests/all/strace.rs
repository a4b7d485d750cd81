//! Tests that run part of this test binary under strace: the default strategy uses
//! `CLONE_VFORK`, and a request with a NUL byte makes no system call with its program path.
//!
//! They skip loudly when strace is not installed; CI installs it.

use std::path::PathBuf;
use std::process;

use wrt_host_spawn::{Command, InvalidRequest, Policy, SpawnError, Spawner, Strategy};

use crate::lock;

const PROBE_ENV: &str = "WRT_HOST_SPAWN_PROBE";

fn strace() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("strace")).find(|p| p.is_file())
}

/// Runs one probe test of this binary under `strace -f`, returning the trace.
fn trace(strace: &PathBuf, probe: &str, mode: &str, syscalls: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace");
    let status = process::Command::new(strace)
        .args(["-f", "-qq", "-e", &format!("trace={syscalls}"), "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", probe, "--ignored", "--test-threads=1", "-q"])
        .env(PROBE_ENV, mode)
        .stdout(process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "probe {probe} ({mode}) failed under strace");
    std::fs::read_to_string(&log).unwrap()
}

fn vfork_lines(trace: &str) -> Vec<&str> {
    trace.lines().filter(|l| l.contains("CLONE_VFORK")).collect()
}

#[test]
fn default_strategy_uses_clone_vfork() {
    let Some(strace) = strace() else {
        eprintln!("SKIPPED: strace not installed");
        return;
    };
    let _lock = lock();
    let syscalls = "clone,clone3,fork,vfork";
    let posix = trace(&strace, "strace::probe_spawn_true", "posix_spawn", syscalls);
    let lines = vfork_lines(&posix);
    assert_eq!(lines.len(), 1, "{posix}");
    assert!(lines[0].contains("CLONE_VM"), "{posix}");

    // Control: fork-exec is a plain fork, so the check above can fail.
    let forked = trace(&strace, "strace::probe_spawn_true", "fork-exec", syscalls);
    assert_eq!(vfork_lines(&forked), Vec::<&str>::new(), "{forked}");
    assert!(forked.lines().any(|l| l.contains("SIGCHLD") && l.starts_with(|c: char| c.is_ascii_digit())));
}

#[test]
fn nul_bytes_are_rejected_before_any_syscall() {
    let Some(strace) = strace() else {
        eprintln!("SKIPPED: strace not installed");
        return;
    };
    let _lock = lock();
    let nul = trace(&strace, "strace::probe_nul_rejected", "nul", "all");
    assert!(!nul.contains(MARKER), "a syscall saw the program path:\n{nul}");
    // Control: without the NUL byte the path is resolved, so the check above can fail.
    let control = trace(&strace, "strace::probe_nul_rejected", "control", "all");
    assert!(control.contains(MARKER), "{control}");
}

const MARKER: &str = "wrt-nul-probe-program";

#[test]
#[ignore = "run under strace by `default_strategy_uses_clone_vfork`"]
fn probe_spawn_true() {
    let strategy = match std::env::var(PROBE_ENV).as_deref() {
        Ok("fork-exec") => Strategy::ForkExec,
        _ => Strategy::PosixSpawn,
    };
    let spawner =
        Spawner::new(Policy::deny_all().allow_program("/bin/true")).unwrap().with_strategy(strategy).strict(true);
    let outcome = spawner.spawn(&Command::new("/bin/true")).unwrap().wait().unwrap();
    assert!(outcome.success());
    assert_eq!(outcome.strategy, strategy);
}

#[test]
#[ignore = "run under strace by `nul_bytes_are_rejected_before_any_syscall`"]
fn probe_nul_rejected() {
    let spawner = Spawner::new(Policy::deny_all()).unwrap();
    let program = format!("/tmp/{MARKER}/tool");
    let control = std::env::var(PROBE_ENV).as_deref() == Ok("control");
    let mut command = Command::new(&program);
    command.args(["ok", if control { "fine" } else { "b\0d" }]).env("X", "y");
    match spawner.spawn(&command) {
        Err(SpawnError::InvalidRequest { reason: InvalidRequest::NulInArg { index: 1 }, .. }) => {
            assert!(!control);
        }
        Err(SpawnError::NotFound { .. } | SpawnError::Denied { .. }) => assert!(control),
        other => panic!("{other:?}"),
    }
}

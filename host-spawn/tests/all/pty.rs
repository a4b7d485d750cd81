//! Pseudo-terminals. The child sees a terminal on 0, 1 and 2, leads its own session with it as
//! controlling terminal, sees the size that was set, answers as an interactive shell, keeps the
//! hygiene of any child, and still dies with its descendants.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use wrt_host_spawn::{Child, Command, Policy, ResizeError, Spawner, Stdio, Strategy};

use crate::{is_reaped, lock, open_fds, proc_stat, status_field};

fn spawner(strategy: Strategy) -> Spawner {
    let policy = Policy::deny_all()
        .allow_program("sh")
        .allow_program("stty")
        .allow_program("sleep")
        .allow_program("cat")
        .timeout(Some(Duration::from_secs(60)));
    Spawner::new(policy).unwrap().with_strategy(strategy).strict(true)
}

fn on_pty(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::Pty).stdout(Stdio::Pty).stderr(Stdio::Pty);
    command
}

/// Reads the terminal until its output contains `needle` (or ends, or 10 s pass).
fn read_until(child: &mut Child, needle: &str) -> String {
    let end = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&out).contains(needle) && Instant::now() < end {
        match child.try_read_stdout(&mut buf).unwrap() {
            Some(0) => break,
            Some(n) => out.extend_from_slice(&buf[..n]),
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The controlling terminal (`tty_nr`) and session of `/proc/<pid>/stat`.
fn tty_and_session(pid: u32) -> (u64, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    (fields[4].parse().unwrap(), fields[3].parse().unwrap())
}

#[test]
fn the_child_sees_a_terminal_on_0_1_and_2() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let script = "test -t 0 && test -t 1 && test -t 2 && echo tty-on-all";
        let spawner = spawner(strategy);
        let mut child = spawner.spawn(&on_pty("sh", &["-c", script])).unwrap();
        assert!(child.has_pty());
        let out = read_until(&mut child, "tty-on-all");
        assert!(out.contains("tty-on-all\r\n"), "{strategy:?}: {out:?}");
        assert!(child.wait().unwrap().success());
        // The end of the output after the child exited: end of file, not an error.
        assert_eq!(child.read_stdout(&mut [0u8; 16]).unwrap(), 0);
    }
}

#[test]
fn stty_size_reports_the_size_set() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let mut child = spawner.spawn(on_pty("stty", &["size"]).pty_size(33, 101)).unwrap();
        assert!(read_until(&mut child, "\n").contains("33 101\r\n"), "{strategy:?}");
        child.wait().unwrap();

        // Resized while it runs: `read` waits for a line, then `stty size` sees the new size.
        let mut child = spawner.spawn(&on_pty("sh", &["-c", "read x; stty size"])).unwrap();
        child.pty_resize(50, 132).unwrap();
        child.write_stdin(b"go\n").unwrap();
        let out = read_until(&mut child, "50 132");
        assert!(out.contains("50 132\r\n"), "{strategy:?}: {out:?}");
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn an_interactive_shell_answers() {
    let _lock = lock();
    let spawner = spawner(Strategy::PosixSpawn);
    let mut child = spawner.spawn(&on_pty("sh", &["-i"])).unwrap();
    child.write_stdin(b"echo $((6 * 7))x\n").unwrap();
    let out = read_until(&mut child, "42x");
    assert!(out.contains("42x\r\n"), "{out:?}");
    child.write_stdin(b"exit 3\n").unwrap();
    let outcome = child.wait().unwrap();
    assert_eq!(outcome.status.code(), Some(3), "{outcome:?}");
}

#[test]
fn a_pty_child_keeps_the_hygiene_of_any_child() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let mut child = spawner.spawn(&on_pty("sh", &["-c", "echo ready; exec sleep 30"])).unwrap();
        read_until(&mut child, "ready");
        let pid = child.pid();
        // `exec sleep` has replaced the shell once /proc shows it.
        let end = Instant::now() + Duration::from_secs(5);
        while !std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap().starts_with("sleep") {
            assert!(Instant::now() < end, "sleep never ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(open_fds(&pid.to_string()), BTreeSet::from([0, 1, 2]), "{strategy:?}");
        assert_eq!(status_field(pid, "SigBlk"), "0000000000000000");
        assert_eq!(status_field(pid, "SigIgn"), "0000000000000000");
        let (_, pgrp) = proc_stat(pid).unwrap();
        let (tty, session) = tty_and_session(pid);
        assert_eq!((pgrp, session), (pid, pid), "{strategy:?}: its own session and group");
        assert_ne!(tty, 0, "{strategy:?}: a controlling terminal");
        assert_ne!(session, tty_and_session(std::process::id()).1);
        assert_eq!(child.strategy(), strategy);
        child.kill(wrt_host_spawn::Signal::SIGKILL).unwrap();
        child.wait().unwrap();
    }
}

#[test]
fn a_pty_child_and_its_descendants_die_with_kill_all() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let mut child = spawner.spawn(&on_pty("sh", &["-c", "sleep 1000 & echo bg=$!; wait"])).unwrap();
        let out = read_until(&mut child, "\r\n");
        let grandchild: u32 = out.trim().strip_prefix("bg=").unwrap_or_else(|| panic!("{out:?}")).parse().unwrap();
        let pid = child.pid();
        spawner.kill_all();
        assert!(is_reaped(pid));
        let end = Instant::now() + Duration::from_secs(2);
        while proc_stat(grandchild).is_some_and(|(state, _)| state != 'Z') && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(proc_stat(grandchild).is_none_or(|(state, _)| state == 'Z'), "{strategy:?}: {grandchild} survived");
        drop(child);
    }
}

#[test]
fn resizing_a_child_without_a_pty_fails() {
    let _lock = lock();
    let spawner = spawner(Strategy::PosixSpawn);
    let mut child = spawner.spawn(Command::new("cat").stdin(Stdio::Piped)).unwrap();
    assert!(!child.has_pty());
    let err = child.pty_resize(10, 10).unwrap_err();
    assert!(matches!(err, ResizeError::NotPty { .. }), "{err:?}");
    assert_eq!(err.to_string(), format!("process {} has no pseudo-terminal", child.pid()));
    child.close_stdin();
    child.wait().unwrap();
}

#[test]
fn stderr_alone_on_a_pty_is_read_as_stderr() {
    let _lock = lock();
    let mut command = Command::new("sh");
    command.args(["-c", "test -t 2 && echo err-tty >&2; test -t 1 || echo out-pipe"]).stderr(Stdio::Pty);
    let spawner = spawner(Strategy::PosixSpawn);
    let mut child = spawner.spawn(&command).unwrap();
    let mut err = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        match child.read_stderr(&mut buf).unwrap() {
            0 => break,
            n => err.extend_from_slice(&buf[..n]),
        }
    }
    assert_eq!(String::from_utf8_lossy(&err), "err-tty\r\n");
    let mut out = [0u8; 64];
    let n = child.read_stdout(&mut out).unwrap();
    assert_eq!(&out[..n], b"out-pipe\n");
    child.wait().unwrap();
}

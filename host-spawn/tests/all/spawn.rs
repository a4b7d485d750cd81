//! Basic spawning: output, exit codes and signals, environment, working directory, errors.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use nix::errno::Errno;
use wrt_host_spawn::{Command, ExitStatus, Policy, Signal, SpawnError, SpawnStep, Spawner, Stdio, Strategy};

use crate::{canonical, lock};

fn spawner(programs: &[&str]) -> Spawner {
    let policy = programs.iter().fold(Policy::deny_all(), |p, prog| p.allow_program(*prog));
    Spawner::new(policy).unwrap()
}

#[test]
fn output_of_a_program() {
    let _lock = lock();
    let spawner = spawner(&["echo"]);
    let output = spawner.output(Command::new("echo").args(["hello", "world"]), None).unwrap();
    assert_eq!(output.stdout, b"hello world\n");
    assert!(output.stderr.is_empty());
    assert!(output.outcome.success());
    assert_eq!(output.outcome.strategy, Strategy::PosixSpawn);
    assert_eq!(output.outcome.stdout_bytes, 12);
    assert!(!output.outcome.timed_out);
}

#[test]
fn exit_codes_and_signals_are_distinct() {
    let _lock = lock();
    let spawner = spawner(&["sh"]);
    let exited = spawner.output(Command::new("sh").args(["-c", "exit 3"]), None).unwrap();
    assert_eq!(exited.outcome.status, ExitStatus::Exited(3));
    assert!(!exited.outcome.success());

    let killed = spawner.output(Command::new("sh").args(["-c", "kill -KILL $$"]), None).unwrap();
    assert_eq!(killed.outcome.status, ExitStatus::Signaled { signal: 9, core_dumped: false });
    assert_eq!(killed.outcome.status.code(), None, "a signal death is not exit 0");
}

#[test]
fn rusage_and_duration_are_reported() {
    let _lock = lock();
    let spawner = spawner(&["sh"]);
    let busy = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
    let output = spawner.output(Command::new("sh").args(["-c", busy]), None).unwrap();
    let usage = output.outcome.rusage;
    assert!(usage.user_time + usage.system_time > Duration::ZERO, "{usage:?}");
    assert!(output.outcome.duration >= usage.user_time);
}

/// A child's peak memory is its own, or none. A child started with `vfork` or `fork` carries
/// its parent's peak into `execve`: with this process holding 256 MiB, `true` "peaked" at
/// 256 MiB under every strategy. Now a peak that may be the parent's is `None`, and one above
/// it is the child's own: within 10 % of what GNU time reports for the same program.
#[test]
fn a_childs_peak_memory_is_its_own_or_none() {
    let _lock = lock();
    if !std::path::Path::new("/usr/bin/time").exists() {
        eprintln!("SKIPPED: GNU time (`/usr/bin/time`) is not installed");
        return;
    }
    let held = vec![1u8; 256 << 20];
    let big = "b = b'x' * (768 << 20)";
    let native = std::process::Command::new("/usr/bin/time").args(["-f", "%M", "python3", "-c", big]).output().unwrap();
    let native_kib: u64 = String::from_utf8_lossy(&native.stderr).trim().lines().last().unwrap().parse().unwrap();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec, Strategy::VforkExec] {
        let spawner = spawner(&["true", "python3"]).with_strategy(strategy);
        let small = spawner.output(&Command::new("true"), None).unwrap();
        assert_eq!(
            small.outcome.rusage.max_rss, None,
            "{strategy:?}: `true` is not {:?} bytes",
            small.outcome.rusage.max_rss
        );
        let large = spawner.output(Command::new("python3").args(["-c", big]), None).unwrap();
        assert!(large.outcome.success(), "{strategy:?}: {}", String::from_utf8_lossy(&large.stderr));
        let peak = large.outcome.rusage.max_rss.expect("a peak above this process's") / 1024;
        assert!(peak.abs_diff(native_kib) * 10 <= native_kib, "{strategy:?}: {peak} KiB, natively {native_kib} KiB");
    }
    std::hint::black_box(held);
}

#[test]
fn stderr_is_separate() {
    let _lock = lock();
    let spawner = spawner(&["sh"]);
    let output = spawner.output(Command::new("sh").args(["-c", "echo out; echo err >&2"]), None).unwrap();
    assert_eq!(output.stdout, b"out\n");
    assert_eq!(output.stderr, b"err\n");
}

#[test]
fn environment_is_exactly_passthrough_and_allowed() {
    let _lock = lock();
    let policy = Policy::deny_all()
        .allow_program("env")
        .env_passthrough(["PATH", "WRT_HOST_SPAWN_SURELY_UNSET"])
        .env_allow(["GREETING"]);
    let spawner = Spawner::new(policy).unwrap();
    let output = spawner.output(Command::new("env").env("GREETING", "hi"), None).unwrap();
    let expected = format!("GREETING=hi\nPATH={}\n", std::env::var("PATH").unwrap());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);

    let err = spawner.spawn(Command::new("env").env("HOME", "/root")).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { .. }), "{err}");
}

#[test]
fn working_directory() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let spawner = Spawner::new(Policy::deny_all().allow_program("pwd").cwd_allow(dir.path())).unwrap();
    let output = spawner.output(&Command::new("pwd"), None).unwrap();
    assert_eq!(output.stdout, b"/\n", "the default is `/`, not the host's cwd");
    let output = spawner.output(Command::new("pwd").cwd(dir.path()), None).unwrap();
    let expected = format!("{}\n", canonical(dir.path().to_str().unwrap()).display());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);

    let forked = spawner.with_strategy(Strategy::ForkExec);
    let output = forked.output(Command::new("pwd").cwd(dir.path()), None).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

#[test]
fn stdout_to_a_file() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let file = fs::File::create(dir.path().join("out")).unwrap();
    let spawner = spawner(&["echo"]);
    let output = spawner.output(Command::new("echo").arg("to file").stdout(file), None).unwrap();
    assert!(output.stdout.is_empty());
    assert!(output.outcome.success());
    assert_eq!(fs::read(dir.path().join("out")).unwrap(), b"to file\n");
}

#[test]
fn kill_try_wait_and_wait_timeout() {
    let _lock = lock();
    let spawner = spawner(&["sleep"]);
    let mut child = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
    assert_eq!(child.try_wait().unwrap(), None);
    assert_eq!(child.wait_timeout(Duration::from_millis(50)).unwrap(), None);
    assert_eq!(spawner.running(), 1);
    child.kill(Signal::SIGTERM).unwrap();
    let outcome = child.wait().unwrap();
    assert_eq!(outcome.status.signal(), Some(Signal::SIGTERM as i32));
    assert!(!outcome.timed_out);
    assert_eq!(child.try_wait().unwrap(), Some(outcome), "the outcome is kept");
    child.kill(Signal::SIGKILL).unwrap();
    assert_eq!(spawner.running(), 0);
}

#[test]
fn exec_failures_are_reported_with_errno_by_both_strategies() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("bogus");
    fs::write(&bogus, b"\x01\x02 not a program").unwrap();
    fs::set_permissions(&bogus, fs::Permissions::from_mode(0o755)).unwrap();
    let spawner = Spawner::new(Policy::deny_all().allow_program(&bogus)).unwrap();
    let err = spawner.spawn(&Command::new(&bogus)).unwrap_err();
    assert!(matches!(err, SpawnError::Spawn { strategy: Strategy::PosixSpawn, source: Errno::ENOEXEC, .. }), "{err:?}");
    let forked = spawner.with_strategy(Strategy::ForkExec);
    let err = forked.spawn(&Command::new(&bogus)).unwrap_err();
    assert!(
        matches!(
            err,
            SpawnError::Spawn { strategy: Strategy::ForkExec, step: SpawnStep::Exec, source: Errno::ENOEXEC, .. }
        ),
        "{err:?}"
    );
    assert_eq!(forked.running(), 0, "the failed child was reaped");
}

#[test]
fn streams_that_are_not_piped() {
    let _lock = lock();
    let spawner = spawner(&["true"]);
    let mut child = spawner.spawn(Command::new("true").stdout(Stdio::Null).stderr(Stdio::Null)).unwrap();
    let mut buf = [0u8; 8];
    assert!(matches!(child.read_stdout(&mut buf), Err(wrt_host_spawn::ReadError::NotPiped { .. })));
    assert!(matches!(child.write_stdin(b"x"), Err(wrt_host_spawn::WriteError::NotPiped { .. })));
    assert!(child.wait().unwrap().success());
}

/// A reaped child's pid may be reused by a later child: the stale handle must not reach it.
/// Forces the reuse through `/proc/sys/kernel/ns_last_pid` (root only; skips loudly otherwise).
#[test]
fn a_stale_handle_never_reaches_a_child_that_reused_its_pid() {
    let _lock = lock();
    let spawner =
        Spawner::new(Policy::deny_all().allow_program("true").allow_program("sleep").max_children(1)).unwrap();
    let mut old = spawner.spawn(&Command::new("true")).unwrap();
    assert!(old.wait().unwrap().success());
    let mut new = None;
    for _ in 0..20 {
        if fs::write("/proc/sys/kernel/ns_last_pid", (old.pid() - 1).to_string()).is_err() {
            eprintln!("SKIPPED: cannot write /proc/sys/kernel/ns_last_pid (needs root)");
            return;
        }
        let child = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
        if child.pid() == old.pid() {
            new = Some(child);
            break;
        }
    }
    let Some(mut new) = new else {
        eprintln!("SKIPPED: could not make a child reuse pid {}", old.pid());
        return;
    };
    // Dropping the stale handle must leave the new child registered: still counted, killable.
    drop(old);
    assert!(spawner.spawn(&Command::new("true")).is_err(), "the new child no longer counts against max_children");
    new.kill(Signal::SIGKILL).unwrap();
    let outcome = new.wait_timeout(Duration::from_secs(10)).unwrap().expect("the kill reached the new child");
    assert_eq!(outcome.status, ExitStatus::Signaled { signal: 9, core_dumped: false });
}

/// A spawner keeps the `posix_spawn` file actions of its last spawn for the next one with the
/// same stdio descriptors and directory. Spawns that differ in either, one after the other and
/// from several threads at once, each get their own.
#[test]
fn kept_file_actions_follow_each_spawns_stdio_and_directory() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let here = canonical(dir.path().to_str().unwrap());
    let spawner =
        std::sync::Arc::new(Spawner::new(Policy::deny_all().allow_program("sh").cwd_allow(dir.path())).unwrap());
    let script = |s: &str| {
        let mut command = Command::new("sh");
        command.args(["-c", s]);
        command
    };
    for round in 0..3 {
        let output = spawner.output(&script("echo out; echo err >&2; pwd"), None).unwrap();
        assert_eq!(output.stdout, b"out\n/\n", "round {round}");
        assert_eq!(output.stderr, b"err\n", "round {round}");
        let output = spawner.output(script("pwd").cwd(dir.path()), None).unwrap();
        assert_eq!(String::from_utf8(output.stdout).unwrap(), format!("{}\n", here.display()), "round {round}");
        let file = fs::File::create(dir.path().join("out")).unwrap();
        let output = spawner.output(script("echo to file; echo err >&2").stdout(file), None).unwrap();
        assert!(output.stdout.is_empty(), "round {round}");
        assert_eq!(output.stderr, b"err\n", "round {round}");
        assert_eq!(fs::read(dir.path().join("out")).unwrap(), b"to file\n", "round {round}");
        let output =
            spawner.output(script("echo out; echo err >&2").stdout(Stdio::Null).stderr(Stdio::Piped), None).unwrap();
        assert!(output.stdout.is_empty(), "round {round}");
        assert_eq!(output.stderr, b"err\n", "round {round}");
        let output = spawner.output(script("echo merged >&2").stderr(Stdio::MergeWithStdout), None).unwrap();
        assert_eq!(output.stdout, b"merged\n", "round {round}");
    }
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let spawner = std::sync::Arc::clone(&spawner);
            std::thread::spawn(move || {
                for i in 0..10 {
                    let line = format!("{t}-{i}");
                    let mut command = Command::new("sh");
                    command.args(["-c", &format!("echo {line}; echo {line} >&2")]);
                    if i % 2 == 1 {
                        command.stderr(Stdio::Null);
                    }
                    let output = spawner.output(&command, None).unwrap();
                    assert_eq!(output.stdout, format!("{line}\n").as_bytes());
                    let err = if i % 2 == 1 { String::new() } else { format!("{line}\n") };
                    assert_eq!(output.stderr, err.as_bytes());
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

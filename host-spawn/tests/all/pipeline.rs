//! Pipelines. A child's stdin is another child's stdout pipe, and stderr can be merged into
//! stdout; the host only wires the descriptors and never reads the bytes.

use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

use wrt_host_spawn::{Command, InvalidRequest, Policy, ReadError, SpawnError, Spawner, Stdio, Strategy, Stream};

use crate::{is_reaped, lock, open_fds, proc_stat};

fn spawner(strategy: Strategy) -> Spawner {
    let policy = Policy::deny_all()
        .allow_program("printf")
        .allow_program("tr")
        .allow_program("sort")
        .allow_program("wc")
        .allow_program("cat")
        .allow_program("yes")
        .allow_program("sh")
        .timeout(Some(Duration::from_secs(60)));
    Spawner::new(policy).unwrap().with_strategy(strategy)
}

#[test]
fn a_three_stage_pipeline_runs_under_both_strategies() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let mut first = spawner.spawn(Command::new("printf").arg("pear\\napple\\nfig\\n")).unwrap();
        let pipe = first.take_stdout().unwrap().expect("stdout is piped by default");
        let mut second = spawner.spawn(Command::new("tr").args(["a-z", "A-Z"]).stdin(pipe)).unwrap();
        let pipe = second.take_stdout().unwrap().unwrap();
        let output = spawner.output(Command::new("sort").stdin(pipe), None).unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "APPLE\nFIG\nPEAR\n", "{strategy:?}");
        assert!(output.outcome.success());
        let (first, second) = (first.wait().unwrap(), second.wait().unwrap());
        assert!(first.success() && second.success(), "{first:?} {second:?}");
        // The host never read the first two stages' output: the bytes went from child to child.
        assert_eq!((first.stdout_bytes, second.stdout_bytes), (0, 0));
    }
}

#[test]
fn the_host_keeps_no_end_of_a_pipe_between_children() {
    let _lock = lock();
    let spawner = spawner(Strategy::PosixSpawn);
    let before = open_fds("self");
    let mut first = spawner.spawn(Command::new("yes").stdout(Stdio::Piped).stderr(Stdio::Null)).unwrap();
    let pipe = first.take_stdout().unwrap().unwrap();
    let mut middle = spawner.spawn(Command::new("cat").stdin(pipe).stdout(Stdio::Null).stderr(Stdio::Null)).unwrap();
    // The host holds the first child's pidfd and /dev/null, and the middle child's pidfd:
    // no pipe between them.
    let after = open_fds("self");
    let new: Vec<_> = after.difference(&before).collect();
    for fd in &new {
        // The descriptor `open_fds` read the directory with is gone.
        let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else { continue };
        assert!(!target.to_string_lossy().starts_with("pipe:"), "the host holds {target:?} (fd {fd})");
    }
    // The middle child sees only 0, 1 and 2.
    assert_eq!(open_fds(&middle.pid().to_string()).into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    drop(middle.kill(wrt_host_spawn::Signal::SIGKILL));
    drop(first.kill(wrt_host_spawn::Signal::SIGKILL));
    middle.wait().unwrap();
    first.wait().unwrap();
}

#[test]
fn stderr_merged_into_stdout_keeps_the_order() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let script = "echo one; echo two >&2; echo three";
        let mut command = Command::new("sh");
        command.args(["-c", script]).stderr(Stdio::MergeWithStdout);
        let mut child = spawner.spawn(&command).unwrap();
        let mut buf = [0u8; 64];
        assert!(matches!(child.read_stderr(&mut buf), Err(ReadError::NotPiped { .. })));
        let output = child.communicate(b"").unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "one\ntwo\nthree\n", "{strategy:?}");
        assert!(output.stderr.is_empty());

        // Merged into a stdout that is itself a pipeline stage: `sh -c … 2>&1 | wc -l`.
        let mut first = spawner.spawn(&command).unwrap();
        let pipe = first.take_stdout().unwrap().unwrap();
        let output = spawner.output(Command::new("wc").arg("-l").stdin(pipe), None).unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "3");
        assert!(first.wait().unwrap().success());

        // Merged into a stdout that is a file.
        let file = tempfile::tempfile().unwrap();
        let mut command = Command::new("sh");
        command.args(["-c", script]).stdout(file.try_clone().unwrap()).stderr(Stdio::MergeWithStdout);
        assert!(spawner.spawn(&command).unwrap().wait().unwrap().success());
        let mut text = String::new();
        let mut file = file;
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_string(&mut text).unwrap();
        assert_eq!(text, "one\ntwo\nthree\n");
    }
}

#[test]
fn merging_stdin_or_stdout_is_an_invalid_request() {
    let spawner = spawner(Strategy::PosixSpawn);
    for stream in [Stream::Stdin, Stream::Stdout] {
        let mut command = Command::new("cat");
        match stream {
            Stream::Stdin => command.stdin(Stdio::MergeWithStdout),
            _ => command.stdout(Stdio::MergeWithStdout),
        };
        match spawner.spawn(&command) {
            Err(SpawnError::InvalidRequest { reason, .. }) => {
                assert_eq!(reason, InvalidRequest::MergeNotStderr { stream });
                assert_eq!(reason.to_string(), format!("only stderr can be merged into stdout, not {stream}"));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_taken_stdout_is_gone_until_put_back() {
    let _lock = lock();
    let spawner = spawner(Strategy::PosixSpawn);
    let mut child = spawner.spawn(Command::new("printf").arg("kept")).unwrap();
    let stdout = child.take_stdout().unwrap().unwrap();
    assert!(child.take_stdout().unwrap().is_none(), "taken twice");
    let mut buf = [0u8; 16];
    assert!(matches!(child.read_stdout(&mut buf), Err(ReadError::NotPiped { .. })));
    child.put_back_stdout(stdout).unwrap();
    let output = child.communicate(b"").unwrap();
    assert_eq!(output.stdout, b"kept");

    // Not piped at all: nothing to take, and nothing can be put back.
    let mut null = spawner.spawn(Command::new("printf").arg("x").stdout(Stdio::Null)).unwrap();
    assert!(null.take_stdout().unwrap().is_none());
    let mut other = spawner.spawn(Command::new("printf").arg("y")).unwrap();
    let stdout = other.take_stdout().unwrap().unwrap();
    let stdout = null.put_back_stdout(stdout).expect_err("null's stdout was never taken");
    assert!(other.put_back_stdout(stdout).is_ok());
    let mut third = spawner.spawn(Command::new("printf").arg("z")).unwrap();
    let stdout = third.take_stdout().unwrap().unwrap();
    let mut fourth = spawner.spawn(Command::new("printf").arg("w")).unwrap();
    assert!(fourth.put_back_stdout(stdout).is_err(), "fourth's stdout is open");
    for mut c in [null, other, third, fourth] {
        c.wait().unwrap();
    }
}

#[test]
fn every_stage_is_checked_against_the_policy() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("printf")).unwrap();
    let mut first = spawner.spawn(Command::new("printf").arg("x")).unwrap();
    let pipe = first.take_stdout().unwrap().unwrap();
    let err = spawner.spawn(Command::new("cat").stdin(pipe)).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { .. }), "{err:?}");
    first.wait().unwrap();
}

#[test]
fn every_stage_of_a_pipeline_dies_with_kill_all() {
    let _lock = lock();
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = spawner(strategy);
        let mut first = spawner.spawn(Command::new("yes").stderr(Stdio::Null)).unwrap();
        let pipe = first.take_stdout().unwrap().unwrap();
        let mut second = spawner.spawn(Command::new("cat").stdin(pipe).stderr(Stdio::Null)).unwrap();
        let pipe = second.take_stdout().unwrap().unwrap();
        let third = spawner.spawn(Command::new("cat").stdin(pipe).stdout(Stdio::Null).stderr(Stdio::Null)).unwrap();
        let pids = [first.pid(), second.pid(), third.pid()];
        assert_eq!(spawner.running(), 3);
        spawner.kill_all();
        for pid in pids {
            assert!(proc_stat(pid).is_none_or(|(state, _)| state == 'Z') || is_reaped(pid), "{pid} survived");
            assert!(is_reaped(pid), "{pid} was not reaped");
        }
        drop((first, second, third));
    }
}

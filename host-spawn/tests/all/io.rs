//! Large data both ways without deadlock; output limits report truncation.

use std::time::Duration;

use wrt_host_spawn::{Command, ExitStatus, Policy, ProgramRule, ReadError, Signal, Spawner, Stdio, Strategy};

use crate::lock;

const BIG: usize = 64 << 20;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

fn cat_spawner(limit: u64) -> Spawner {
    let policy = Policy::deny_all()
        .allow(ProgramRule::new("cat").output_limit(limit))
        .allow_program("head")
        .allow_program("printf")
        .timeout(Some(Duration::from_secs(60)));
    Spawner::new(policy).unwrap()
}

#[test]
fn sixty_four_mib_through_cat_both_ways_at_once() {
    let _lock = lock();
    let input = pattern(BIG);
    for strategy in [Strategy::PosixSpawn, Strategy::ForkExec] {
        let spawner = cat_spawner(BIG as u64).with_strategy(strategy);
        let output = spawner.output(&Command::new("cat"), Some(&input)).unwrap();
        assert!(output.outcome.success(), "{:?}", output.outcome);
        assert_eq!(output.stdout.len(), BIG);
        assert!(output.stdout == input, "the bytes came back unchanged");
        assert!(!output.outcome.truncated.any());
        assert_eq!(output.outcome.stdout_bytes, BIG as u64);
    }
}

#[test]
fn streaming_with_non_blocking_reads_and_writes() {
    let _lock = lock();
    let input = pattern(8 << 20);
    let spawner = cat_spawner(u64::MAX);
    let mut child = spawner.spawn(Command::new("cat").stdin(Stdio::Piped)).unwrap();
    let (mut written, mut echoed) = (0, Vec::with_capacity(input.len()));
    let mut buf = vec![0u8; 1 << 16];
    let mut idle = 0;
    while echoed.len() < input.len() {
        let mut progress = false;
        if written < input.len()
            && let Some(n) = child.try_write_stdin(&input[written..]).unwrap()
        {
            written += n;
            progress = true;
            if written == input.len() {
                child.close_stdin();
            }
        }
        if let Some(n) = child.try_read_stdout(&mut buf).unwrap() {
            assert_ne!(n, 0, "EOF before all input came back");
            echoed.extend_from_slice(&buf[..n]);
            progress = true;
        }
        if progress {
            idle = 0;
        } else {
            // Both pipes are momentarily full or empty; give cat a moment.
            idle += 1;
            assert!(idle < 10_000, "no progress");
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    assert!(echoed == input);
    assert_eq!(child.read_stdout(&mut buf).unwrap(), 0, "EOF after stdin was closed");
    assert!(child.wait().unwrap().success());
}

#[test]
fn an_output_limit_reports_truncation() {
    let _lock = lock();
    let spawner = cat_spawner(4096);
    let input = pattern(1 << 20);
    let output = spawner.output(&Command::new("cat"), Some(&input)).unwrap();
    assert_eq!(output.stdout, input[..4096]);
    assert!(output.outcome.truncated.stdout);
    assert!(!output.outcome.truncated.stderr);
    assert_eq!(output.outcome.stdout_bytes, 4096);
    // The closed pipe ends `cat` with SIGPIPE: truncation, not a hang and not host memory.
    assert_eq!(output.outcome.status.signal(), Some(Signal::SIGPIPE as i32));

    // A request can lower the limit, not raise it.
    let output =
        spawner.output(Command::new("head").args(["-c", "100000", "/dev/zero"]).output_limit(10), None).unwrap();
    assert_eq!(output.stdout.len(), 10);
    assert!(output.outcome.truncated.stdout);
}

#[test]
fn output_of_exactly_the_limit_is_not_truncated() {
    let _lock = lock();
    let spawner = cat_spawner(4);
    let output = spawner.output(Command::new("printf").arg("abcd").output_limit(4), None).unwrap();
    assert_eq!(output.stdout, b"abcd");
    assert!(!output.outcome.truncated.any());
    assert_eq!(output.outcome.status, ExitStatus::Exited(0));
}

#[test]
fn reads_past_the_limit_are_an_error() {
    let _lock = lock();
    let spawner = cat_spawner(4);
    let mut child = spawner.spawn(Command::new("head").args(["-c", "100000", "/dev/zero"]).output_limit(4)).unwrap();
    let mut total = 0;
    let mut buf = [0u8; 3];
    let err = loop {
        match child.read_stdout(&mut buf) {
            Ok(n) => total += n,
            Err(err) => break err,
        }
    };
    assert_eq!(total, 4);
    assert!(matches!(err, ReadError::OutputLimit { limit: 4, .. }), "{err}");
    let outcome = child.wait().unwrap();
    assert!(outcome.truncated.stdout);
}

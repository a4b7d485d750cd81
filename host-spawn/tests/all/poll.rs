//! Polling a child for output, exit and its deadline; waiting for the first of several
//! children to exit.

use std::time::{Duration, Instant};

use wrt_host_spawn::{Command, Interest, Policy, Spawner, Stdio, wait_any};

use crate::lock;

#[test]
fn poll_reports_output_exit_and_timeouts() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap();
    let mut child = spawner
        .spawn(Command::new("sh").args(["-c", "read x; echo out; sleep 0.2"]).stdin(Stdio::Piped).stdout(Stdio::Piped))
        .unwrap();
    let out = Interest { stdout: true, ..Interest::default() };
    // Nothing to read before the child gets its line.
    assert!(child.poll(out, Some(Duration::from_millis(50))).unwrap().is_empty());
    let writable = child.poll(Interest { stdin: true, ..Interest::default() }, None).unwrap();
    assert!(writable.stdin);
    child.write_stdin(b"go\n").unwrap();
    assert_eq!(child.poll(out, Some(Duration::from_secs(10))).unwrap(), out);
    let exit = Interest { exit: true, ..Interest::default() };
    assert_eq!(child.poll(exit, Some(Duration::from_secs(10))).unwrap(), exit);
    assert!(child.wait().unwrap().success());
    // Not piped: ready at once.
    let err = Interest { stderr: true, ..Interest::default() };
    assert_eq!(child.poll(err, Some(Duration::ZERO)).unwrap(), err);
}

#[test]
fn poll_drives_the_deadline() {
    let _lock = lock();
    let policy = Policy::deny_all().allow_program("sleep").kill_grace(Duration::from_millis(100));
    let spawner = Spawner::new(policy).unwrap();
    let mut child = spawner.spawn(Command::new("sleep").arg("100").timeout(Duration::from_millis(100))).unwrap();
    let exit = Interest { exit: true, ..Interest::default() };
    assert_eq!(child.poll(exit, None).unwrap(), exit, "the deadline ends the child");
    assert!(child.wait().unwrap().timed_out);
}

#[test]
fn wait_any_reports_the_first_to_exit_and_times_out() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("sleep")).unwrap();
    let mut slow = spawner.spawn(Command::new("sleep").arg("30")).unwrap();
    let mut fast = spawner.spawn(Command::new("sleep").arg("0.2")).unwrap();
    let start = Instant::now();
    assert!(wait_any(&mut [&mut slow, &mut fast], Some(Duration::from_millis(20))).unwrap().is_none());
    let (index, outcome) = wait_any(&mut [&mut slow, &mut fast], None).unwrap().unwrap();
    assert_eq!(index, 1);
    assert!(outcome.success());
    assert!(start.elapsed() < Duration::from_secs(20));
    // Reaped earlier: reported at once.
    let (index, _) = wait_any(&mut [&mut fast, &mut slow], Some(Duration::ZERO)).unwrap().unwrap();
    assert_eq!(index, 0);
}

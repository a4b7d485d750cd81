//! Timeouts kill whole process trees; dropping a child or a spawner leaves no zombie.

use std::time::Duration;

use wrt_host_spawn::{Command, ExitStatus, Interest, Policy, ProgramRule, ReadError, Signal, Spawner, wait_any};

use crate::{is_reaped, lock, proc_stat, read_pid, survivors};

fn spawner(grace: Duration) -> Spawner {
    let policy = Policy::deny_all()
        .allow_program("sh")
        .allow_program("sleep")
        .timeout(Some(Duration::from_secs(60)))
        .kill_grace(grace);
    Spawner::new(policy).unwrap()
}

#[test]
fn a_timeout_kills_the_whole_tree() {
    let _lock = lock();
    let spawner = spawner(Duration::from_secs(2));
    let mut child = spawner
        .spawn(Command::new("sh").args(["-c", "sleep 100 & echo $!; sleep 100"]).timeout(Duration::from_secs(1)))
        .unwrap();
    let pgid = child.process_group();
    let grandchild = read_pid(&mut child);
    assert_eq!(proc_stat(grandchild).map(|(_, g)| g), Some(pgid), "same group");

    let outcome = child.wait().unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.status.signal(), Some(Signal::SIGTERM as i32));
    assert!(outcome.duration >= Duration::from_secs(1));
    // The grandchild was reparented; it is dead (gone, or a zombie awaiting its new parent).
    assert_eq!(survivors(pgid), Vec::<u32>::new(), "the grandchild {grandchild} is in the group");
    assert!(is_reaped(child.pid()));
}

#[test]
fn sigkill_follows_an_ignored_sigterm_after_the_grace_period() {
    let _lock = lock();
    let grace = Duration::from_millis(300);
    let spawner = spawner(grace);
    let script = "trap '' TERM; sleep 100 & echo $!; while :; do sleep 1; done";
    let mut child = spawner.spawn(Command::new("sh").args(["-c", script]).timeout(Duration::from_secs(1))).unwrap();
    let pgid = child.process_group();
    let grandchild = read_pid(&mut child);
    let outcome = child.wait().unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.status, ExitStatus::Signaled { signal: 9, core_dumped: false });
    assert!(outcome.duration >= Duration::from_millis(1300), "{:?}", outcome.duration);
    assert_eq!(survivors(pgid), Vec::<u32>::new(), "the grandchild {grandchild} is in the group");
}

/// A plain `wait` blocks in `waitid` without a pidfd, and the watchdog thread carries out the
/// child's timeout meanwhile: `SIGTERM` at the deadline, `SIGKILL` after the grace period, and
/// the outcome says the timeout ended the child.
#[test]
fn a_blocking_wait_gets_its_timeout_from_the_watchdog() {
    let _lock = lock();
    let spawner = spawner(Duration::from_millis(300));
    let script = "trap '' TERM; while :; do sleep 1; done";
    let mut child = spawner.spawn(Command::new("sh").args(["-c", script]).timeout(Duration::from_millis(500))).unwrap();
    let outcome = child.wait().unwrap();
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.status, ExitStatus::Signaled { signal: 9, core_dumped: false });
    assert!(outcome.duration >= Duration::from_millis(800), "{:?}", outcome.duration);
    assert!(outcome.duration < Duration::from_secs(10), "{:?}", outcome.duration);
}

/// A child's timeout holds while nobody looks at the child (a guest computing or sleeping): the
/// watchdog ends it at its deadline, and the later wait reports the timeout. Before, the timer
/// moved only when its holder waited, read, wrote or polled.
#[test]
fn a_timeout_ends_a_child_nobody_waits_for() {
    let _lock = lock();
    let spawner = spawner(Duration::from_millis(200));
    let script = "trap '' TERM; while :; do sleep 1; done";
    let mut child = spawner.spawn(Command::new("sh").args(["-c", script]).timeout(Duration::from_millis(300))).unwrap();
    let start = std::time::Instant::now();
    // Nobody touches the child: it must become a zombie (SIGKILL after the grace) on its own.
    while proc_stat(child.pid()).is_some_and(|(state, _)| state != 'Z') {
        assert!(start.elapsed() < Duration::from_secs(10), "the timeout did not end the child");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(start.elapsed() >= Duration::from_millis(450), "{:?}", start.elapsed());
    let outcome = child.try_wait().unwrap().expect("a zombie is reaped at once");
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.status, ExitStatus::Signaled { signal: 9, core_dumped: false });
}

/// The watchdog sleeps until the earliest signal it knows of; a child whose timeout comes
/// sooner, watched later, must wake it (or it would be ended only when the first child's
/// timeout comes, 30 s later).
#[test]
fn a_sooner_timeout_wakes_the_watchdog() {
    let _lock = lock();
    let spawner = std::sync::Arc::new(spawner(Duration::from_millis(200)));
    let mut long = spawner.spawn(Command::new("sleep").arg("100").timeout(Duration::from_secs(30))).unwrap();
    let long_pid = long.pid();
    let waiter = std::thread::spawn(move || long.wait().unwrap());
    // The first waiter is blocked by now, its timeout watched.
    std::thread::sleep(Duration::from_millis(300));
    let mut short = spawner.spawn(Command::new("sleep").arg("100").timeout(Duration::from_millis(300))).unwrap();
    let outcome = short.wait().unwrap();
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.status.signal(), Some(Signal::SIGTERM as i32));
    assert!(outcome.duration < Duration::from_secs(10), "{:?}", outcome.duration);
    // The other waiter is still blocked; ending its child ends its wait, not as a timeout.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(long_pid.cast_signed()), Signal::SIGKILL).unwrap();
    let outcome = waiter.join().unwrap();
    assert!(!outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.status.signal(), Some(Signal::SIGKILL as i32));
}

#[test]
fn try_wait_drives_the_timeout_without_blocking() {
    let _lock = lock();
    let spawner = spawner(Duration::from_millis(200));
    let mut child = spawner.spawn(Command::new("sleep").arg("100").timeout(Duration::from_millis(100))).unwrap();
    let outcome = loop {
        if let Some(outcome) = child.try_wait().unwrap() {
            break outcome;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(outcome.timed_out);
    assert_eq!(outcome.status.signal(), Some(Signal::SIGTERM as i32));
}

#[test]
fn a_blocking_read_returns_at_the_deadline() {
    let _lock = lock();
    let spawner = spawner(Duration::from_millis(200));
    let mut child = spawner.spawn(Command::new("sleep").arg("100").timeout(Duration::from_millis(200))).unwrap();
    let mut buf = [0u8; 16];
    let err = child.read_stdout(&mut buf).unwrap_err();
    assert!(matches!(err, ReadError::TimedOut { .. }), "{err}");
    // The termination finished before the read returned.
    let outcome = child.try_wait().unwrap().expect("already exited");
    assert!(outcome.timed_out);
}

#[test]
fn the_group_does_not_outlive_its_leader() {
    let _lock = lock();
    let spawner = spawner(Duration::from_secs(2));
    let output = spawner.output(Command::new("sh").args(["-c", "sleep 100 & echo $!"]), None).unwrap();
    assert!(output.outcome.success());
    let grandchild: u32 = String::from_utf8(output.stdout).unwrap().trim().parse().unwrap();
    assert_eq!(survivors(output.outcome.pid), Vec::<u32>::new(), "the grandchild {grandchild} is in the group");
}

#[test]
fn dropping_a_child_kills_and_reaps_it() {
    let _lock = lock();
    let spawner = spawner(Duration::from_secs(2));
    let child = spawner.spawn(Command::new("sh").args(["-c", "sleep 100 & sleep 100"])).unwrap();
    let pid = child.pid();
    assert!(!is_reaped(pid));
    drop(child);
    assert!(is_reaped(pid));
    assert_eq!(survivors(pid), Vec::<u32>::new());
    assert_eq!(spawner.running(), 0);
}

#[test]
fn dropping_the_spawner_kills_and_reaps_every_child() {
    let _lock = lock();
    let spawner = spawner(Duration::from_secs(2));
    let mut kept: Vec<_> = (0..3).map(|_| spawner.spawn(Command::new("sleep").arg("100")).unwrap()).collect();
    let ignoring = spawner.spawn(Command::new("sh").args(["-c", "trap '' TERM HUP INT; sleep 100"])).unwrap();
    kept.push(ignoring);
    let pids: Vec<u32> = kept.iter().map(|c| c.pid()).collect();
    assert_eq!(spawner.running(), 4);

    drop(spawner);
    for &pid in &pids {
        assert!(is_reaped(pid), "{pid} is a zombie or still running");
        assert_eq!(survivors(pid), Vec::<u32>::new());
    }
    // The handles that outlived the spawner see the SIGKILL.
    for child in &mut kept {
        let outcome = child.try_wait().unwrap().expect("reaped by the spawner");
        assert_eq!(outcome.status.signal(), Some(Signal::SIGKILL as i32));
    }
}

#[test]
fn timeouts_too_long_to_represent_are_no_timeout() {
    let _lock = lock();
    let policy = Policy::deny_all().allow(ProgramRule::new("true").no_timeout());
    let spawner = Spawner::new(policy).unwrap();
    let mut child = spawner.spawn(Command::new("true").timeout(Duration::MAX)).unwrap();
    assert!(child.wait_timeout(Duration::MAX).unwrap().unwrap().success());
    let mut child = spawner.spawn(&Command::new("true")).unwrap();
    let ready = child.poll(Interest { exit: true, ..Default::default() }, Some(Duration::MAX)).unwrap();
    assert!(ready.exit);
    let mut other = spawner.spawn(&Command::new("true")).unwrap();
    assert!(wait_any(&mut [&mut child, &mut other], Some(Duration::MAX)).unwrap().is_some());
}

/// `timed_out` means the timeout ended the child: an exit that happened before the deadline and
/// is collected after it is a normal exit, never logged as `"exit_code":0,"timed_out":true`.
#[test]
fn an_exit_before_the_deadline_is_not_a_timeout() {
    let _lock = lock();
    let policy =
        Policy::deny_all().allow_program("true").allow_program("sleep").timeout(Some(Duration::from_millis(200)));
    let spawner = Spawner::new(policy).unwrap();
    let mut child = spawner.spawn(&Command::new("true")).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while proc_stat(child.pid()).is_some_and(|(state, _)| state != 'Z') {
        assert!(std::time::Instant::now() < deadline, "`true` did not exit");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Its exit is collected well after its deadline.
    std::thread::sleep(Duration::from_millis(400));
    let outcome = child.wait().unwrap();
    assert_eq!(outcome.status, ExitStatus::Exited(0));
    assert!(!outcome.timed_out, "{outcome:?}");
    // A child the deadline does end is still timed out.
    let outcome = spawner.output(Command::new("sleep").arg("100"), None).unwrap().outcome;
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.status.signal(), Some(Signal::SIGTERM as i32));
}

/// A quick program racing a 1 ms timeout: whether its exit or the timeout's `SIGTERM` comes
/// first, an outcome (and its audit record) never says both "exited normally" and "timed out".
/// The clock passing the deadline while the child was still running is not enough: the
/// timeout must be what ended it. Spawns with `wait` (the watchdog signals) and with `output`
/// (the holder's poll loop) alternate.
#[test]
fn a_quick_exit_racing_a_1ms_timeout_is_never_both_exited_and_timed_out() {
    let _lock = lock();
    let buffer = crate::LogBuffer::default();
    let policy = Policy::deny_all().allow_program("true").timeout(Some(Duration::from_millis(1)));
    let spawner = Spawner::new(policy).unwrap().with_audit_log(wrt_host_spawn::AuditLog::new(buffer.clone()));
    let runs = 2000;
    let (mut both, mut timed_out) = (Vec::new(), 0);
    for run in 0..runs {
        let outcome = if run % 2 == 0 {
            spawner.spawn(&Command::new("true")).unwrap().wait().unwrap()
        } else {
            spawner.output(&Command::new("true"), None).unwrap().outcome
        };
        timed_out += usize::from(outcome.timed_out);
        if outcome.timed_out && outcome.status.code().is_some() {
            both.push(outcome);
        }
    }
    assert!(both.is_empty(), "{} of {runs} exited normally and timed out: {:?}", both.len(), both.first());
    let exits: Vec<_> = buffer.records().into_iter().filter(|r| r["event"] == "exit").collect();
    assert_eq!(exits.len(), runs);
    let bad: Vec<_> = exits.iter().filter(|r| r["timed_out"] == true && !r["exit_code"].is_null()).collect();
    assert!(bad.is_empty(), "audit records with an exit code and timed_out: {bad:?}");
    eprintln!("{timed_out} of {runs} were ended by the timeout");
}

/// A leader that handles the timeout's `SIGTERM` and exits with a code of its own (a handler
/// that cleans up) is ended by the timeout all the same: its normal exit is reported timed out.
#[test]
fn a_leader_that_exits_from_its_sigterm_handler_is_timed_out() {
    let _lock = lock();
    let spawner = spawner(Duration::from_secs(5));
    let script = "trap 'exit 3' TERM; sleep 100 & wait";
    let outcome = spawner
        .output(Command::new("sh").args(["-c", script]).timeout(Duration::from_millis(300)), None)
        .unwrap()
        .outcome;
    assert_eq!(outcome.status, ExitStatus::Exited(3));
    assert!(outcome.timed_out, "{outcome:?}");
    assert!(outcome.duration < Duration::from_secs(5), "ended by SIGTERM, not by SIGKILL: {:?}", outcome.duration);
}

//! Issue 10, section 1: killing a child also kills every process below it, in any session or
//! process group, without any process-wide setting (no subreaper in this test process).

use std::time::{Duration, Instant};

use wrt_host_spawn::{Command, Policy, Spawner};

use crate::{lock, proc_stat, read_pid};

fn spawner() -> Spawner {
    let policy = Policy::deny_all().allow_program("sh").timeout(Some(Duration::from_secs(60)));
    Spawner::new(policy).unwrap()
}

/// Whether `pid` is still alive (not a zombie) after up to 2 s (signals are asynchronous).
fn still_alive(pid: u32) -> bool {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        let alive = proc_stat(pid).is_some_and(|(state, _)| state != 'Z');
        if !alive || Instant::now() >= end {
            if alive {
                let _ =
                    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid.cast_signed()), nix::sys::signal::SIGKILL);
            }
            return alive;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `sh -c '<start> & echo $!; wait'`: the pid of a background process in another session.
fn with_escaped_grandchild(spawner: &Spawner, start: &str) -> (wrt_host_spawn::Child, u32) {
    let script = format!("{start} & echo $!; wait");
    let mut child = spawner.spawn(Command::new("sh").args(["-c", &script])).unwrap();
    let grandchild = read_pid(&mut child);
    // It has left the child's process group once `setsid` ran.
    let end = Instant::now() + Duration::from_secs(5);
    while proc_stat(grandchild).is_some_and(|(_, pgrp)| pgrp == child.pid()) {
        assert!(Instant::now() < end, "the grandchild never left the group");
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, grandchild)
}

fn have_setsid() -> bool {
    let found = ["/usr/bin/setsid", "/bin/setsid"].iter().any(|p| std::path::Path::new(p).exists());
    if !found {
        eprintln!("SKIPPED: no `setsid` on this host");
    }
    found
}

#[test]
fn issue_10_dropping_a_child_kills_its_other_sessions() {
    if !have_setsid() {
        return;
    }
    let _lock = lock();
    let spawner = spawner();
    let (child, grandchild) = with_escaped_grandchild(&spawner, "setsid sleep 1000");
    drop(child);
    assert!(!still_alive(grandchild), "the grandchild {grandchild} in its own session survived");
}

#[test]
fn issue_10_kill_all_kills_stopped_and_term_ignoring_descendants() {
    if !have_setsid() {
        return;
    }
    let _lock = lock();
    let spawner = spawner();
    let (_ignoring, ignores_term) = with_escaped_grandchild(&spawner, "trap '' TERM; setsid sleep 1000");
    let (_stopped, stopped) = with_escaped_grandchild(&spawner, "setsid sleep 1000");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(stopped.cast_signed()), nix::sys::signal::SIGSTOP).unwrap();
    spawner.kill_all();
    // Both checked (and killed if alive) before either assertion, so a failure leaks nothing.
    let (ignoring_alive, stopped_alive) = (still_alive(ignores_term), still_alive(stopped));
    assert!(!ignoring_alive, "the grandchild ignoring SIGTERM survived");
    assert!(!stopped_alive, "the stopped grandchild survived");
}

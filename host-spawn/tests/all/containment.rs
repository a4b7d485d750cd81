//! Killing a child also kills every process below it, in any session or process group, without
//! any process-wide setting (no subreaper in this test process).

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
fn dropping_a_child_kills_its_other_sessions() {
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
fn kill_all_kills_stopped_and_term_ignoring_descendants() {
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

/// `output` of a child that exits while a process it started in a new session holds its
/// stdout returns at the child's timeout, with what was read and the child's own exit status.
/// Before, it waited for end of file, as long as that process lived.
#[test]
fn output_returns_at_the_deadline_while_an_escaped_process_holds_stdout() {
    if !have_setsid() {
        return;
    }
    let _lock = lock();
    let mark = format!("1000.{}", wrt_test_support::token());
    let policy = Policy::deny_all().allow_program("sh").timeout(Some(Duration::from_millis(500)));
    let spawner = Spawner::new(policy).unwrap();
    // The shell exits only once the sleeper has its own session, out of the shell's group.
    let script = format!(
        "setsid sleep {mark} & p=$!; until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = \"$p\" ]; do sleep 0.01; done; echo $p"
    );
    let started = Instant::now();
    let (sent, received) = std::sync::mpsc::channel();
    let run = std::thread::spawn(move || {
        let output = spawner.output(Command::new("sh").args(["-c", &script]), None);
        let _ = sent.send(());
        output
    });
    // Bounded: if `output` waits for the escaped process, killing it ends the wait.
    let returned = received.recv_timeout(Duration::from_secs(15)).is_ok();
    let took = started.elapsed();
    if !returned {
        for pid in crate::live_members_with(&mark) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid.cast_signed()), nix::sys::signal::SIGKILL);
        }
    }
    let output = run.join().unwrap().unwrap();
    let grandchild: u32 = String::from_utf8_lossy(&output.stdout).trim().parse().unwrap();
    let escaped = still_alive(grandchild);
    assert!(returned, "`output` waited for the escaped process");
    assert!(took < Duration::from_secs(10), "`output` returned after {took:?}");
    assert!(output.outcome.success() && !output.outcome.timed_out, "{:?}", output.outcome);
    // Nothing in this process contains it (no subreaper): `still_alive` killed it.
    assert!(escaped, "the escaped process {grandchild} died with the child");
}

/// A kill switch thrown from another thread ends the child its owner is blocked waiting on,
/// with everything below it (the owner's wait then reaps it), and every child the spawner starts
/// afterwards ends at birth.
#[test]
fn a_kill_switch_ends_the_awaited_child_and_every_later_one() {
    if !have_setsid() {
        return;
    }
    let _lock = lock();
    let spawner = spawner();
    let (mut child, grandchild) = with_escaped_grandchild(&spawner, "setsid sleep 1000");
    let switch = spawner.kill_switch();
    let thrower = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        switch.kill_all();
    });
    let started = Instant::now();
    let outcome = child.wait().unwrap();
    thrower.join().unwrap();
    assert_eq!(outcome.status.signal(), Some(nix::sys::signal::SIGKILL as i32), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "the wait took {:?}", started.elapsed());
    assert!(!still_alive(grandchild), "the grandchild {grandchild} in its own session survived");
    let mut later = spawner.spawn(Command::new("sh").args(["-c", "sleep 1000"])).unwrap();
    let outcome = later.wait().unwrap();
    assert_eq!(outcome.status.signal(), Some(nix::sys::signal::SIGKILL as i32), "{outcome:?}");
    // A switch outliving its spawner does nothing.
    let orphan = spawner.kill_switch();
    drop(spawner);
    orphan.kill_all();
}

//! Spawns `true` `argv[1]` times (default 1000), alternating `spawn`+`wait`+release and the
//! one-shot `output`, and checks that the host (the parent of the children, `wrt`) has no more
//! open file descriptors afterwards than before (after a warm-up; pipes, pidfds and files, not
//! its async runtime's epoll and eventfd), and no zombie children. Prints
//! `spawned N, fds BEFORE -> AFTER, zombies Z`. Needs `true`, `sh`, `ls`, `ps`, `grep`.
use std::collections::HashSet;
use std::time::Duration;

use wrt_guest::Command;

/// Runs a shell line whose `$PPID` is the host, and returns its stdout as a number.
fn count(script: &str) -> u64 {
    let out = Command::new("sh").args(["-c", script]).output().expect(script);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    text.trim().parse().unwrap_or_else(|_| panic!("`{script}` printed {text:?} ({})", out.status))
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(1000, |arg| arg.parse().expect("a count"));
    // Every descriptor a spawn could leak (pipes, pidfds, /dev/null, files); not the epoll and
    // eventfd descriptors of the host's async runtime, which it creates lazily.
    let fds = "ls -l /proc/$PPID/fd | grep -v -c 'anon_inode:\\[event'";
    // Warm up first: the host may set things up on its first spawns.
    for _ in 0..10 {
        assert!(Command::new("true").status().expect("warm-up").success());
    }
    let before = count(fds);
    let mut ids = HashSet::new();
    for i in 0..n {
        if i % 2 == 0 {
            let mut child = Command::new("true").spawn().expect("spawn true");
            assert!(ids.insert(child.id()), "handle {} reused", child.id());
            let status = child.wait().expect("wait");
            assert!(status.success(), "spawn {i}: {status}");
        } else {
            let out = Command::new("true").output().expect("run true");
            assert!(out.status.success(), "run {i}: {}", out.status);
        }
    }
    // The fewest of three looks, so a descriptor the host holds for a moment does not count.
    let after = (0..3)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            count(fds)
        })
        .min()
        .expect("three counts");
    let zombies = count("ps -o stat= --ppid $PPID | grep -c Z");
    println!("spawned {n}, fds {before} -> {after}, zombies {zombies}");
    assert!(after <= before, "the host leaked file descriptors: {before} -> {after}");
    assert_eq!(zombies, 0, "the host left zombies");
}

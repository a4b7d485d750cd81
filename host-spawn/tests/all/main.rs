//! Integration tests of wrt-host-spawn with real processes.
//!
//! Every test that spawns holds [`SPAWN_LOCK`] until its children have been waited on, so
//! that fd counts, RSS and process-group checks see only the test's own children.

mod audit;
mod changed_underneath;
mod containment;
mod docs;
mod explain;
mod hostile_names;
mod io;
mod isolation;
mod leak;
mod pinning;
mod pipeline;
mod policy;
mod poll;
mod pty;
mod rlimits;
mod sandbox;
mod spawn;
mod strace;
mod timeout;
mod view;

use std::collections::BTreeSet;
use std::fs;
use std::sync::{Mutex, PoisonError};

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

/// An in-memory audit log the test can read while the spawner writes to it.
#[derive(Debug, Clone, Default)]
pub struct LogBuffer(std::sync::Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogBuffer {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()).unwrap()
    }

    /// Every line written so far, as JSON.
    pub fn records(&self) -> Vec<serde_json::Value> {
        self.text().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

/// Reads a child's stdout up to the end of its first line, trimmed.
pub fn read_line(child: &mut wrt_host_spawn::Child) -> String {
    let mut line = Vec::new();
    let mut buf = [0u8; 64];
    while !line.ends_with(b"\n") {
        let n = child.read_stdout(&mut buf).unwrap();
        assert_ne!(n, 0, "stdout ended before a line");
        line.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(line).unwrap().trim().to_owned()
}

/// Reads the first line of a child's stdout: a pid the script printed with `echo $!`.
pub fn read_pid(child: &mut wrt_host_spawn::Child) -> u32 {
    read_line(child).parse().unwrap()
}

/// Held by every test that spawns, signals or counts fds (as nix's `FORK_MTX`).
pub use wrt_test_support::{SPAWN_LOCK, spawn_lock as lock};

/// `(state, pgrp)` from `/proc/<pid>/stat`, or `None` if the process is gone.
pub fn proc_stat(pid: u32) -> Option<(char, u32)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: split after the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Processes in process group `pgrp` that are alive (not zombies).
pub fn live_members(pgrp: u32) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| proc_stat(pid).is_some_and(|(state, g)| g == pgrp && state != 'Z'))
        .collect()
}

pub use wrt_test_support::processes::live_with_arg as live_members_with;

/// Members of `pgrp` still alive after `SIGKILL` had up to 2 s to take effect (signals are
/// delivered asynchronously: `kill` returns before the target has died).
pub fn survivors(pgrp: u32) -> Vec<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let live = live_members(pgrp);
        if live.is_empty() || std::time::Instant::now() >= deadline {
            return live;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A line such as `SigBlk:` of `/proc/<pid>/status`.
pub fn status_field(pid: u32, field: &str) -> String {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
        .trim()
        .to_owned()
}

/// Open fd numbers of `/proc/<who>/fd` (`who` is a pid or `self`).
pub fn open_fds(who: &str) -> BTreeSet<i32> {
    fs::read_dir(format!("/proc/{who}/fd"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether `pid` is no longer a child of this process that could be waited for.
pub fn is_reaped(pid: u32) -> bool {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    waitid(Id::Pid(Pid::from_raw(pid.cast_signed())), flags) == Err(Errno::ECHILD)
}

/// A program's canonical path (`/bin/sh` → `/usr/bin/dash` on Debian).
pub fn canonical(program: &str) -> std::path::PathBuf {
    fs::canonicalize(program).unwrap()
}

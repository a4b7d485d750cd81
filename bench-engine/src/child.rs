//! Child processes a benchmark runs to the end: `wrt run`, `node`, `wasmtime run`. Their output
//! is captured and they are reaped with `wait4`, for their peak resident set size.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{BenchError, sys};

/// A finished child: exit code (or minus the signal), output, peak RSS, wall time.
#[derive(Debug)]
pub struct ChildRun {
    /// The exit code, or minus the signal that ended it.
    pub code: i32,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Its peak resident set size, bytes (`ru_maxrss`).
    pub peak_rss: u64,
    /// From spawn to reap.
    pub wall: Duration,
}

/// Runs `cmd` to the end with stdin closed and both outputs captured, and reaps it with `wait4`.
///
/// A child's `ru_maxrss` starts from the high-water RSS of the process that spawned it (the
/// kernel carries the parent's mm's peak over at exec after `vfork`), so this resets this
/// process's own peak first (`/proc/self/clear_refs`, 5): keep the benchmark process small
/// while children run.
///
/// # Errors
///
/// When the child cannot start, or its output cannot be read.
#[allow(clippy::zombie_processes, reason = "the child is reaped by `wait4`, for its resource usage")]
pub fn run_child(cmd: &mut Command) -> Result<ChildRun, BenchError> {
    let shown = format!("{cmd:?}");
    let failed = |e: std::io::Error| BenchError::Child(format!("{shown}: {e}"));
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(failed)?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|e| BenchError::Child(format!("pid: {e}")))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let read = |pipe: Option<&mut dyn Read>| {
        let mut text = String::new();
        pipe.map_or(Ok(0), |p| p.read_to_string(&mut text)).map(|_| text)
    };
    let (waited, wall, stdout, stderr) = std::thread::scope(|s| {
        let stdout = s.spawn(|| read(out.as_mut().map(|p| p as &mut dyn Read)));
        let stderr = s.spawn(|| read(err.as_mut().map(|p| p as &mut dyn Read)));
        let waited = sys::wait4(pid);
        let wall = start.elapsed();
        let join = |h: std::thread::ScopedJoinHandle<'_, std::io::Result<String>>| {
            h.join().unwrap_or_else(|_| Err(std::io::Error::other("the reader panicked")))
        };
        (waited, wall, join(stdout), join(stderr))
    });
    let (status, peak_rss) = waited.map_err(failed)?;
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) };
    Ok(ChildRun { code, stdout: stdout.map_err(failed)?, stderr: stderr.map_err(failed)?, peak_rss, wall })
}

/// Runs `cmd` with no input and its output discarded, and checks that it exits with 0.
///
/// # Errors
///
/// When it cannot start or does not exit with 0.
pub fn run_quiet(cmd: &mut Command) -> Result<(), BenchError> {
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| BenchError::Child(format!("cannot run {cmd:?}: {e}")))?;
    if !status.success() {
        return Err(BenchError::Child(format!("{cmd:?} ended with {status}")));
    }
    Ok(())
}

/// Resident set size of this process, from `/proc/self/status`.
pub fn own_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_run_and_reaped() {
        let run = run_child(Command::new("/bin/sh").args(["-c", "echo out; echo err >&2; exit 3"])).unwrap();
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (3, "out\n", "err\n"));
        assert!(run.peak_rss > 0);
        let killed = run_child(Command::new("/bin/sh").args(["-c", "kill -9 $$"])).unwrap();
        assert_eq!(killed.code, -9);
        assert!(run_child(&mut Command::new("/nonexistent")).is_err());
        run_quiet(&mut Command::new("/bin/true")).unwrap();
        assert!(run_quiet(&mut Command::new("/bin/false")).is_err());
        assert!(own_rss().unwrap() > 0);
    }
}

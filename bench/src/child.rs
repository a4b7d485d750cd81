//! Child processes a benchmark runs to the end: `wrt run`, `node`, `wasmtime run`. Their output
//! is captured, or drained and counted when it is the workload itself, and they are reaped with
//! `wait4`, for their peak resident set size and CPU time.

use std::hash::{DefaultHasher, Hasher};
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
    let reaped = waited.map_err(failed)?;
    Ok(ChildRun {
        code: code(reaped.status),
        stdout: stdout.map_err(failed)?,
        stderr: stderr.map_err(failed)?,
        peak_rss: reaped.peak_rss,
        wall,
    })
}

/// The exit code of a wait status, or minus the signal that ended the child.
fn code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) }
}

/// How many bytes of a drained output [`Drained::head`] keeps.
pub const KEPT: usize = 4 << 10;

/// The size of the reads that drain an output, and of the blocks its digest is taken over.
const DRAIN_BLOCK: usize = 64 << 10;

/// What a drained output held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drained {
    /// How many bytes.
    pub bytes: u64,
    /// The first [`KEPT`] of them (all of a short output).
    pub head: Vec<u8>,
    /// A digest of all of them (the same bytes give the same digest in one process, however the
    /// reads split them), when it was asked for.
    pub digest: Option<u64>,
}

/// Reads `pipe` to its end in 64 KiB reads, counting the bytes, keeping the first [`KEPT`] and,
/// with `digest`, taking a digest of them all.
///
/// # Errors
///
/// When reading fails.
pub fn drain(mut pipe: impl Read, digest: bool) -> std::io::Result<Drained> {
    let mut block = vec![0; DRAIN_BLOCK];
    let (mut filled, mut bytes, mut head) = (0, 0_u64, Vec::new());
    let mut hasher = DefaultHasher::new();
    loop {
        // With a digest the reads fill whole blocks, which are hashed as they fill up.
        let start = if digest { filled } else { 0 };
        let n = match pipe.read(&mut block[start..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if head.len() < KEPT {
            head.extend_from_slice(&block[start..start + n.min(KEPT - head.len())]);
        }
        bytes += n as u64;
        filled = start + n;
        if digest && filled == block.len() {
            hasher.write(&block);
            filled = 0;
        }
    }
    let digest = digest.then(|| {
        hasher.write(&block[..filled]);
        hasher.write_u64(bytes);
        hasher.finish()
    });
    Ok(Drained { bytes, head, digest })
}

/// A finished child whose stdout was drained ([`run_drained`]).
#[derive(Debug)]
pub struct DrainedRun {
    /// The exit code, or minus the signal that ended it.
    pub code: i32,
    /// What it wrote to its stdout.
    pub stdout: Drained,
    /// Its standard error.
    pub stderr: String,
    /// From spawn to reap.
    pub wall: Duration,
    /// Its CPU time, user and system, all its threads' and its reaped children's (`wait4`).
    pub cpu: Duration,
}

/// Runs `cmd` to the end with stdin closed, its stdout a pipe that this process drains
/// ([`drain`], a digest with `digest`) and its stderr captured, and reaps it with `wait4`.
///
/// # Errors
///
/// When the child cannot start, or its output cannot be read.
#[allow(clippy::zombie_processes, reason = "the child is reaped by `wait4`, for its resource usage")]
pub fn run_drained(cmd: &mut Command, digest: bool) -> Result<DrainedRun, BenchError> {
    let shown = format!("{cmd:?}");
    let failed = |e: std::io::Error| BenchError::Child(format!("{shown}: {e}"));
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(failed)?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|e| BenchError::Child(format!("pid: {e}")))?;
    let (out, mut err) = (child.stdout.take(), child.stderr.take());
    let (stdout, stderr, waited, wall) = std::thread::scope(|s| {
        let stderr = s.spawn(move || {
            let mut text = String::new();
            err.as_mut().map_or(Ok(0), |p| p.read_to_string(&mut text)).map(|_| text)
        });
        let stdout = out.map_or_else(|| drain(std::io::empty(), digest), |p| drain(p, digest));
        let waited = sys::wait4(pid);
        let wall = start.elapsed();
        let stderr = stderr.join().unwrap_or_else(|_| Err(std::io::Error::other("the reader panicked")));
        (stdout, stderr, waited, wall)
    });
    let reaped = waited.map_err(failed)?;
    Ok(DrainedRun {
        code: code(reaped.status),
        stdout: stdout.map_err(failed)?,
        stderr: stderr.map_err(failed)?,
        wall,
        cpu: reaped.cpu,
    })
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
        let drained =
            run_drained(Command::new("/bin/sh").args(["-c", "head -c 300000 /dev/zero; echo err >&2; exit 4"]), true)
                .unwrap();
        assert_eq!((drained.code, drained.stdout.bytes, drained.stderr.as_str()), (4, 300_000, "err\n"));
        assert_eq!(drained.stdout.head, vec![0; KEPT]);
        assert!(drained.wall > Duration::ZERO);
        assert!(run_quiet(&mut Command::new("/bin/false")).is_err());
        assert!(own_rss().unwrap() > 0);
    }

    /// A reader that returns at most `step` bytes a read, of `bytes`.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// The digest is of the bytes, however the reads split them; and one byte changes it.
    #[test]
    fn a_drained_digest_does_not_depend_on_the_reads() {
        let bytes: Vec<u8> = (0..200_000_u32).map(|i| (i * 7 % 251) as u8).collect();
        let drained = |bytes: &[u8], step| drain(Trickle { bytes, step }, true).unwrap();
        let whole = drained(&bytes, usize::MAX);
        assert_eq!((whole.bytes, whole.head.as_slice()), (200_000, &bytes[..KEPT]));
        for step in [1000, 4095, 65_536, 100_000] {
            assert_eq!(drained(&bytes, step), whole, "reads of {step} bytes");
        }
        let mut other = bytes.clone();
        other[150_000] ^= 1;
        assert_ne!(drained(&other, 1000).digest, whole.digest);
        assert_ne!(drained(&bytes[..199_999], 1000).digest, whole.digest);
        assert_eq!(drain(Trickle { bytes: &bytes, step: 333 }, false).unwrap().digest, None);
    }
}

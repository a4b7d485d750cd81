//! The descriptor budget: a spawn takes file descriptors (pipes for its stdio, a pidfd), and it
//! is refused with a clear error before the process runs out of them, rather than failing in
//! `pipe2` or `posix_spawn` with `EMFILE`.

use std::io;
use std::sync::{Mutex, PoisonError};

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::command::{Command, Stdio, Stream};

/// Descriptors a spawn always leaves free below the soft `RLIMIT_NOFILE`, for everything else
/// the host does: the runtime itself, files a guest opens through WASI, the audit log.
pub const RESERVED_FDS: u64 = 16;

/// Descriptors a spawn needs besides its stdio: the child's pidfd, which the host keeps, and
/// the fork-exec strategy's error pipe (two, closed once the child has started), and one spare.
const SPAWN_FDS: u64 = 4;

/// Raises the soft `RLIMIT_NOFILE` of this process to its hard limit (capped at what the kernel
/// allows a process, `/proc/sys/fs/nr_open` on Linux), as many servers do at startup, and
/// returns the new soft limit. Children inherit it; a policy's `open_files` limit still
/// applies to them.
///
/// # Errors
///
/// `getrlimit` or `setrlimit` failed; the limit is then unchanged.
///
/// # Examples
///
/// ```
/// let soft = wrt_host_spawn::raise_open_files_limit()?;
/// assert!(soft >= 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn raise_open_files_limit() -> io::Result<u64> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    // RLIM_INFINITY is not a valid RLIMIT_NOFILE: the kernel caps descriptors at nr_open.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|s| s.trim().parse::<u64>().ok());
    let target = nr_open.map_or(hard, |max| hard.min(max));
    if target > soft {
        setrlimit(Resource::RLIMIT_NOFILE, target, hard)?;
        *LAST_COUNT.lock().unwrap_or_else(PoisonError::into_inner) = None;
        return Ok(target);
    }
    Ok(soft)
}

/// How many descriptors starting `command` takes at most, at the moment it starts: three per
/// piped stream (the pipe's two ends, and a copy if the host's own stdio is closed), one per
/// file that must be copied, two for `/dev/null` until the spawner has opened it, and
/// [`SPAWN_FDS`].
pub(crate) fn needed(command: &Command, pipe_stdin: bool, null_open: bool) -> u64 {
    let mut needed = SPAWN_FDS;
    let mut null = false;
    let mut pty = false;
    for stream in [Stream::Stdin, Stream::Stdout, Stream::Stderr] {
        needed += match command.get_stdio(stream) {
            _ if pipe_stdin && stream == Stream::Stdin => 3,
            // The master, the slave and up to two copies of the master, once per command.
            Stdio::Pty if !pty => {
                pty = true;
                4
            }
            Stdio::Pty => 0,
            Stdio::Piped => 3,
            Stdio::File(_) => 1,
            Stdio::Null => {
                null = true;
                0
            }
            Stdio::Inherit | Stdio::MergeWithStdout => 0,
        };
    }
    if null && !null_open {
        needed += 2;
    }
    needed
}

/// Why the budget refuses a spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exhausted {
    /// Descriptors open in the process.
    pub(crate) open: u64,
    /// Descriptors the spawn needs.
    pub(crate) needed: u64,
    /// The soft `RLIMIT_NOFILE`.
    pub(crate) limit: u64,
}

/// Checks that `needed` more descriptors fit under the soft `RLIMIT_NOFILE` with
/// [`RESERVED_FDS`] left over, counting the descriptors open now (`/proc/self/fd`). When they
/// cannot be counted (no `/proc`), the check passes and the operating system has the last word.
///
/// Counting costs a walk of `/proc/self/fd` (about 8 µs with a few descriptors open), so it is
/// skipped while the process is far from its limit: when even the last count plus
/// [`MAX_PER_SPAWN`] for every spawn since leaves more than half the limit free, and at most
/// [`RECOUNT_EVERY`] spawns in a row. The limit is read with each count (`getrlimit`), not at
/// every spawn.
pub(crate) fn check(needed: u64) -> Result<(), Exhausted> {
    let mut last = LAST_COUNT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(count) = last.as_mut()
        && count.spawns_since < RECOUNT_EVERY
    {
        let estimate = count.open.saturating_add(count.spawns_since.saturating_mul(MAX_PER_SPAWN));
        if estimate.saturating_mul(2).saturating_add(needed).saturating_add(RESERVED_FDS) <= count.limit {
            count.spawns_since += 1;
            return Ok(());
        }
    }
    let Ok((limit, _)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    let open = match open_fds() {
        Ok(open) => open,
        // Not even the directory could be opened: no descriptor is left.
        Err(err) if err.raw_os_error() == Some(libc::EMFILE) => limit,
        Err(_) => return Ok(()),
    };
    *last = Some(LastCount { open, limit, spawns_since: 1 });
    if open.saturating_add(needed).saturating_add(RESERVED_FDS) > limit {
        return Err(Exhausted { open, needed, limit });
    }
    Ok(())
}

/// The last count of the process's open descriptors, and how many spawns passed the budget since
/// (process-wide, like the descriptor table itself).
static LAST_COUNT: Mutex<Option<LastCount>> = Mutex::new(None);

#[derive(Debug, Clone, Copy)]
struct LastCount {
    open: u64,
    /// The soft limit read with that count: a limit changed since (by
    /// [`raise_open_files_limit`], which forgets the count, or by another process's `prlimit`)
    /// is read again at the next count, at most [`RECOUNT_EVERY`] spawns later and at once when
    /// the estimate comes near the limit kept. Until then a lowered limit can only make a spawn
    /// fail with `EMFILE` where the budget would have refused it.
    limit: u64,
    spawns_since: u64,
}

/// Spawns that may pass the budget on an estimate before the descriptors are counted again.
const RECOUNT_EVERY: u64 = 64;

/// Descriptors a spawn is assumed to have added, at most, when the budget estimates instead of
/// counting: three piped streams and [`SPAWN_FDS`].
const MAX_PER_SPAWN: u64 = 3 * 3 + SPAWN_FDS;

/// How many descriptors the process has open.
fn open_fds() -> io::Result<u64> {
    let dir = if cfg!(target_os = "linux") { "/proc/self/fd" } else { "/dev/fd" };
    let mut count = 0u64;
    for entry in std::fs::read_dir(dir)? {
        entry?;
        count += 1;
    }
    // The directory's own descriptor is listed too.
    Ok(count.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piped_streams_need_the_most() {
        let mut command = Command::new("true");
        command.stdin(Stdio::Null).stdout(Stdio::Null).stderr(Stdio::Null);
        assert_eq!(needed(&command, false, true), SPAWN_FDS);
        assert_eq!(needed(&command, false, false), SPAWN_FDS + 2);
        command.stdout(Stdio::Piped).stderr(Stdio::Piped);
        assert_eq!(needed(&command, true, true), SPAWN_FDS + 9);
    }

    #[test]
    fn counts_what_is_open() {
        let (a, b) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        assert!(open_fds().unwrap() >= 2, "at least the pipe");
        drop((a, b));
        assert!(check(1).is_ok(), "a test process is far from its limit");
        let Err(exhausted) = check(u64::MAX / 2) else { panic!("no process has that many descriptors") };
        assert!(exhausted.open >= 1 && exhausted.needed == u64::MAX / 2, "{exhausted:?}");
    }
}

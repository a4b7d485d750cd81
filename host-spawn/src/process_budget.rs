//! The process budget: one pids control group per spawner, which every confined child joins
//! before `execve` (a write of `0` to a file of the group opened in the parent), so that the
//! whole tree under a guest's children holds at most `max_processes` tasks (processes and
//! threads) at once: a fork bomb inside a child hits the limit (`fork` fails with `EAGAIN`)
//! instead of the host's. When the spawner is dropped, whatever is still in the group is
//! killed and the group removed; so is it when wrt ends on a signal. A group that a `SIGKILL`
//! of wrt left behind, with whatever was in it, is ended by the next wrt that makes a budget.
//!
//! It needs a pids controller the host may create groups in: cgroup v1's `pids` hierarchy, or
//! a cgroup v2 group with `pids` in its `cgroup.subtree_control` (a delegated one). Where there
//! is none, the tree is unbounded, and records and `wrt policy explain` say so.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The groups of the budgets alive in this process, for [`end_all`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Kills the members of every budget group of this process and removes the groups: for a
/// process about to exit without dropping its spawners (wrt ending on a signal).
pub(crate) fn end_all() {
    let dirs = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    for dir in dirs {
        end_group(&dir);
    }
}

/// The tasks a guest's children may have at once unless the policy says otherwise.
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;

/// The directory under which this process may create pids groups, found once.
fn parent_group() -> Option<&'static Path> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT
        .get_or_init(|| {
            let parent = find_parent_group()?;
            end_stale_groups(&parent);
            Some(parent)
        })
        .as_deref()
}

/// Ends the groups that a wrt process killed with `SIGKILL` left behind (named for a pid that
/// no longer exists): kills what is still in them, the children it could not end, and removes
/// them.
fn end_stale_groups(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("wrt-")).and_then(|n| n.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            end_group(&entry.path());
        }
    }
}

fn find_parent_group() -> Option<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            let dir = Path::new("/sys/fs/cgroup/pids").join(relative);
            if writable(&dir) {
                return Some(dir);
            }
        }
        if id == "0" && controllers.is_empty() {
            let dir = Path::new("/sys/fs/cgroup").join(relative);
            let delegated = fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|list| list.split_whitespace().any(|c| c == "pids"));
            if delegated && writable(&dir) {
                return Some(dir);
            }
        }
    }
    None
}

/// The file of the group at `dir` through which a child joins it: cgroup v1's `tasks`, which
/// moves the writing thread alone, where it exists, else `cgroup.procs`. A confined child has
/// one thread, so both move the same process; but a write to `cgroup.procs` takes a lock that
/// every `fork`, `exec` and `exit` on the machine shares (to move a whole thread group
/// stably), and one to `tasks` naming the writer itself does not. cgroup v2 moves no thread
/// across domain groups, so there it is `cgroup.procs`.
fn join_file(dir: &Path) -> &'static str {
    if dir.join("tasks").exists() { "tasks" } else { "cgroup.procs" }
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok() && dir.join("cgroup.procs").exists()
}

/// Whether a budget can be made here (for records and `explain`).
pub(crate) fn available() -> bool {
    parent_group().is_some()
}

/// A pids group of this spawner's children.
#[derive(Debug)]
pub(crate) struct ProcessBudget {
    dir: PathBuf,
    join: File,
}

impl ProcessBudget {
    /// Makes a group allowing `max` tasks; `None` where no pids group can be made.
    pub(crate) fn create(max: u64) -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = parent_group()?;
        let name = format!("wrt-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(name);
        fs::create_dir(&dir).ok()?;
        let made = (|| -> io::Result<File> {
            File::options().write(true).open(dir.join("pids.max"))?.write_all(max.to_string().as_bytes())?;
            File::options().write(true).open(dir.join(join_file(&dir)))
        })();
        match made {
            Ok(join) => {
                LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(dir.clone());
                Some(Self { dir, join })
            }
            Err(_) => {
                let _ = fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The file a child writes `0` to to join the group ([`join_file`]), open for writing
    /// (close-on-exec).
    pub(crate) fn join_fd(&self) -> RawFd {
        self.join.as_raw_fd()
    }
}

impl Drop for ProcessBudget {
    fn drop(&mut self) {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|dir| *dir != self.dir);
        end_group(&self.dir);
    }
}

/// Kills what is left in the group at `dir` (a process that left its children's process
/// groups and sessions stays in the control group) and removes it; gives up after a second.
fn end_group(dir: &Path) {
    let members = || -> Vec<i32> {
        fs::read_to_string(dir.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let left = members();
        for pid in &left {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), nix::sys::signal::Signal::SIGKILL);
        }
        if (left.is_empty() && fs::remove_dir(dir).is_ok()) || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

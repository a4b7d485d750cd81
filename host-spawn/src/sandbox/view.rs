//! The child view: the world a confined child sees, made once per spawner.
//!
//! Every confined child of a spawner runs in the same new user, mount, PID and IPC namespaces:
//!
//! - the whole file system **read-only** (so no `chmod`, `chown`, `utimes`, extended attribute
//!   or link count changes anywhere outside the writable grants, whatever identity the child
//!   has: Landlock does not govern metadata), with the writable grants (`ChildSandbox::write`,
//!   the policy's `[sandbox] write`) writable again and the read grants read-only;
//! - the children's **temporary directory over `/tmp`** (and `TMPDIR=/tmp`), with the grants
//!   that lay under the host's `/tmp` mounted again inside it;
//! - a **`/proc` of the view's PID namespace**: a child sees its own processes, `/proc/self`,
//!   the cpu count and memory, and no process outside the view (pid 1 is the view's init);
//! - **System V IPC** of its own; the user namespace maps the host's user and group to
//!   themselves (every id where the host is root), so files keep their owners.
//!
//! Costs are measured in docs/benchmarks.md: the view is made on the spawner's first confined
//! spawn by a thread of its own (its processes die with that thread), and each child then costs
//! two futex hand-offs more than a child started directly. See `sys::view` for the processes.
//!
//! A host that cannot make the view (no unprivileged user namespaces, a container without the
//! privilege to mount) fails every confined spawn with [`ViewUnavailable`], which names what
//! is missing and how to turn the view off: nothing is downgraded silently.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use nix::errno::Errno;

use super::filter::Filter;
use crate::error::ViewUnavailable;
use crate::sys::view::{MountKind, ViewFailure, ViewMount, ViewPlan, ViewProcesses, ViewStep};

/// The view of one spawner: its processes, the thread they die with, and its `/proc`. Its
/// starter holds the children's seccomp filter (the one with the network allowed when any rule
/// of the policy allows it), which every child inherits.
pub(crate) struct View {
    /// Taken only when the view ends.
    processes: Option<ViewProcesses>,
    /// The view's `/proc` (opened from the host through init's root), for the Landlock rule
    /// that lets children read it.
    proc_dir: Option<File>,
    /// Whether the children's temporary directory is mounted over `/tmp`.
    tmp_covered: bool,
    /// The network setting of the filter the starter holds (and every child inherits).
    filter_network: bool,
    thread: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View").field("tmp_covered", &self.tmp_covered).finish_non_exhaustive()
    }
}

impl View {
    /// Makes the view for children that may read `read`, write `write`, run in `working`, and
    /// use `tmp` as their temporary directory. Called on the spawner's first confined spawn, before the spawning
    /// thread holds any seccomp filter of ours.
    pub(crate) fn create<'a>(
        read: impl Iterator<Item = &'a Path>,
        write: impl Iterator<Item = &'a Path>,
        working: impl Iterator<Item = &'a Path>,
        tmp: Option<&Path>,
        filter_network: bool,
    ) -> Result<Self, ViewUnavailable> {
        let (mut plan, tmp_covered) = plan(read, write, working, tmp);
        plan.filter = Filter::new(filter_network).program().to_vec();
        let (made_tx, made_rx) = mpsc::channel();
        let (end_tx, end_rx) = mpsc::channel::<()>();
        let thread = spawn_clean("wrt-view", move || {
            // Each process is recorded as it is made, with the spawn gate held, so that no
            // sweep takes it for an orphan; the gate is not held while init mounts.
            let recorded = std::cell::RefCell::new(Vec::new());
            let around = |clone: &mut dyn FnMut() -> libc::pid_t| {
                let Ok(_gate) = crate::containment::spawn_gate() else {
                    // Nothing may be started: fail as `clone` would.
                    Errno::EAGAIN.set();
                    return -1;
                };
                let pid = clone();
                if pid > 0 {
                    let pid = nix::unistd::Pid::from_raw(pid);
                    crate::containment::track_view(pid);
                    recorded.borrow_mut().push(pid);
                }
                pid
            };
            let made = ViewProcesses::create(plan, &around);
            if made.is_err() {
                // Ended (and reaped, as far as it could be) by `create`.
                for pid in recorded.take() {
                    crate::containment::untrack_view(pid);
                    crate::containment::untrack(pid);
                }
            }
            let failed = made.is_err();
            let _ = made_tx.send(made);
            if !failed {
                // Until the view ends (or the spawner is gone): init and the starter die
                // with this thread.
                let _ = end_rx.recv();
            }
        })
        .map_err(|errno| ViewUnavailable(ViewFailure { step: ViewStep::Namespaces, errno, path: None }))?;
        let processes = match made_rx.recv() {
            Ok(Ok(processes)) => processes,
            Ok(Err(failure)) => {
                let _ = thread.join();
                return Err(ViewUnavailable(failure));
            }
            Err(_) => {
                let _ = thread.join();
                return Err(ViewUnavailable(ViewFailure { step: ViewStep::Namespaces, errno: Errno::EIO, path: None }));
            }
        };
        let proc_dir = File::options()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY)
            .open(format!("/proc/{}/root/proc", processes.init()))
            .ok();
        Ok(Self { processes: Some(processes), proc_dir, tmp_covered, filter_network, thread: Some((end_tx, thread)) })
    }

    /// The view's `/proc`, as the host reaches it.
    pub(crate) fn proc_dir(&self) -> Option<&File> {
        self.proc_dir.as_ref()
    }

    /// The network setting of the filter every child inherits from the starter.
    pub(crate) fn filter_network(&self) -> bool {
        self.filter_network
    }

    /// Whether children find their temporary directory at `/tmp`.
    pub(crate) fn tmp_covered(&self) -> bool {
        self.tmp_covered
    }

    /// The processes that start children in the view.
    pub(crate) fn processes(&self) -> Option<&ViewProcesses> {
        self.processes.as_ref()
    }
}

impl Drop for View {
    fn drop(&mut self) {
        if let Some(processes) = self.processes.take() {
            let pids = [processes.init(), processes.starter()];
            // Out of the pass-through set first: a reused pid must never be walked through.
            for pid in pids {
                crate::containment::untrack_view(pid);
            }
            drop(processes);
            for pid in pids {
                crate::containment::untrack(pid);
            }
        }
        if let Some((end, thread)) = self.thread.take() {
            let _ = end.send(());
            let _ = thread.join();
        }
    }
}

/// A thread started by wrt's "clean" thread, which never holds a seccomp filter of ours (it is
/// started before any thread installs one: see [`ensure_clean_thread`]), so that `f` may make
/// namespaces even when the calling thread holds the children's filter.
fn spawn_clean(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, Errno> {
    let maker = ensure_clean_thread()?;
    let (tx, rx) = mpsc::channel();
    let name = name.to_owned();
    let job: Job = Box::new(move || {
        let _ = tx.send(std::thread::Builder::new().name(name).spawn(f));
    });
    maker.lock().unwrap_or_else(std::sync::PoisonError::into_inner).send(job).map_err(|_| Errno::EAGAIN)?;
    match rx.recv() {
        Ok(Ok(handle)) => Ok(handle),
        Ok(Err(err)) => Err(Errno::from_raw(err.raw_os_error().unwrap_or(libc::EAGAIN))),
        Err(_) => Err(Errno::EAGAIN),
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Starts, once per process, the thread that starts the views' threads, and returns the way to
/// it. Called before any thread of the process installs the children's filter on itself.
pub(crate) fn ensure_clean_thread() -> Result<&'static std::sync::Mutex<mpsc::Sender<Job>>, Errno> {
    static MAKER: std::sync::OnceLock<Result<std::sync::Mutex<mpsc::Sender<Job>>, Errno>> = std::sync::OnceLock::new();
    let made = MAKER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("wrt-view-maker".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            })
            .map(|_| std::sync::Mutex::new(tx))
            .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EAGAIN)))
    });
    made.as_ref().map_err(|errno| *errno)
}

/// The mounts of a view, parents before what lies beneath them, and whether the temporary
/// directory covers `/tmp`. A working directory the policy allows that the cover would hide
/// (under the host's `/tmp`, in no grant) is mounted again, read-only, as a read grant is.
fn plan<'a>(
    read: impl Iterator<Item = &'a Path>,
    write: impl Iterator<Item = &'a Path>,
    working: impl Iterator<Item = &'a Path>,
    tmp: Option<&Path>,
) -> (ViewPlan, bool) {
    let root = Path::new("/");
    let grants: Vec<(PathBuf, MountKind)> =
        read.map(|p| (p.to_owned(), MountKind::Read)).chain(write.map(|p| (p.to_owned(), MountKind::Write))).collect();
    let read_only = !grants.iter().any(|(p, kind)| *kind == MountKind::Write && p == root);
    let tmp_covered =
        tmp.is_some() && Path::new("/tmp").is_dir() && !grants.iter().any(|(p, _)| p == Path::new("/tmp") || p == root);
    // (target, kind, source)
    let mut mounts: Vec<(PathBuf, MountKind, PathBuf)> =
        grants.into_iter().filter(|(p, _)| p != root).map(|(p, kind)| (p.clone(), kind, p)).collect();
    if let Some(tmp) = tmp.filter(|_| !tmp_covered) {
        // Not over `/tmp` (a grant reaches it): still writable where it is, under the grant
        // that the whole tree's read-only pass would otherwise cover.
        mounts.push((tmp.to_owned(), MountKind::Write, tmp.to_owned()));
    }
    if let Some(tmp) = tmp.filter(|_| tmp_covered) {
        let hidden: Vec<PathBuf> = working
            .filter(|dir| dir.starts_with("/tmp") && *dir != Path::new("/tmp"))
            .filter(|dir| !mounts.iter().any(|(granted, _, _)| dir.starts_with(granted)))
            .map(Path::to_owned)
            .collect();
        for dir in hidden {
            mounts.push((dir.clone(), MountKind::Read, dir));
        }
        mounts.push((PathBuf::from("/tmp"), MountKind::Tmp, tmp.to_owned()));
    }
    if Path::new("/proc").is_dir() {
        mounts.push((PathBuf::from("/proc"), MountKind::Proc, PathBuf::from("/proc")));
    }
    // Shallower targets first; at one path, a writable grant over a read one.
    mounts.sort_by_key(|(target, kind, _)| {
        (target.components().filter(|c| matches!(c, Component::Normal(_))).count(), *kind == MountKind::Write)
    });
    let mounts = mounts.into_iter().map(|(_, kind, source)| ViewMount::new(&source, kind)).collect();
    (ViewPlan { mounts, read_only, filter: Vec::new() }, tmp_covered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(plan: &ViewPlan) -> Vec<MountKind> {
        plan.mounts.iter().map(ViewMount::kind).collect()
    }

    #[test]
    fn mounts_come_parents_first_and_a_writable_root_keeps_the_tree_writable() {
        let read = [PathBuf::from("/srv/data/ro")];
        let write = [PathBuf::from("/srv/data"), PathBuf::from("/tmp/project")];
        let tmp = PathBuf::from("/tmp/wrt-tmp-1-x");
        let working = [PathBuf::from("/"), PathBuf::from("/tmp/project/sub"), PathBuf::from("/tmp/elsewhere")];
        let (plan, covered) = plan(
            read.iter().map(PathBuf::as_path),
            write.iter().map(PathBuf::as_path),
            working.iter().map(PathBuf::as_path),
            Some(&tmp),
        );
        assert!(covered && plan.read_only);
        // `/tmp/elsewhere` is mounted again; `/tmp/project/sub` lies in a grant.
        assert_eq!(
            kinds(&plan),
            [MountKind::Tmp, MountKind::Proc, MountKind::Read, MountKind::Write, MountKind::Write, MountKind::Read]
        );

        let write = [PathBuf::from("/")];
        let (plan, covered) = plan_of(&[], &write, Some(&tmp));
        assert!(!covered && !plan.read_only);
        assert_eq!(kinds(&plan), [MountKind::Proc, MountKind::Write]);
    }

    #[test]
    fn a_granted_tmp_is_not_covered_and_the_childrens_directory_stays_writable() {
        let tmp = PathBuf::from("/tmp/wrt-tmp-1-x");
        let (plan, covered) = plan_of(&[PathBuf::from("/tmp")], &[], Some(&tmp));
        assert!(!covered);
        assert_eq!(kinds(&plan), [MountKind::Read, MountKind::Proc, MountKind::Write]);
        let (_, covered) = plan_of(&[], &[], None);
        assert!(!covered);
    }

    fn plan_of(read: &[PathBuf], write: &[PathBuf], tmp: Option<&Path>) -> (ViewPlan, bool) {
        plan(read.iter().map(PathBuf::as_path), write.iter().map(PathBuf::as_path), std::iter::empty(), tmp)
    }
}

//! What the child of both hand-written strategies (fork-exec and the confined `clone`) does
//! between its creation and `execve`: only async-signal-safe system calls on data prepared
//! before it existed. It allocates nothing and takes no lock.

use std::ffi::c_int;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::sys::signal::SigSet;

use super::exec::Exec;
use super::{imp, landlock, seccomp};
use crate::spawn_step::SpawnStep;

/// A resource limit for the child: `(resource, soft, hard)`.
pub(crate) type Rlimit = (u32, u64, u64);

/// The confinement a child applies to itself before `execve`, prepared in the parent.
#[derive(Clone, Copy)]
pub(crate) struct Confine<'a> {
    /// The filled Landlock ruleset (close-on-exec).
    pub(crate) ruleset: RawFd,
    /// The seccomp filter's program, or `None` where the spawning thread already runs under
    /// it (the child inherits it at `clone`).
    pub(crate) filter: Option<&'a [libc::sock_filter]>,
    /// The file of the process budget's control group that moves the writing process into it,
    /// opened for writing.
    pub(crate) budget: Option<RawFd>,
    /// Whether the host process may have a controlling terminal, which the child gives up.
    pub(crate) terminal: bool,
}

impl std::fmt::Debug for Confine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confine")
            .field("ruleset", &self.ruleset)
            .field("budget", &self.budget)
            .field("terminal", &self.terminal)
            .finish_non_exhaustive()
    }
}

/// How the child reports the step that failed and its `errno`.
pub(super) enum Report<'a> {
    /// Eight bytes to a close-on-exec pipe (fork-exec: the child has its own memory).
    Pipe(RawFd),
    /// A word in the parent's memory, which the `CLONE_VM` child shares; the parent reads it
    /// once the child has executed or exited (`CLONE_VFORK`). Zero means no failure.
    Shared(&'a AtomicU64),
}

/// Everything the child reads: plain values and pointers into memory prepared before it was
/// created.
pub(super) struct ChildPlan<'a> {
    pub(super) exec: &'a Exec<'a>,
    pub(super) rlimits: &'a [Rlimit],
    pub(super) confine: Option<Confine<'a>>,
    pub(super) report: Report<'a>,
    /// Highest fd to close when `close_range` is missing (the soft `RLIMIT_NOFILE`, capped).
    pub(super) max_fd: c_int,
    pub(super) sigrtmax: c_int,
    /// Whether every disposition is the default already (a child of a view's starter, which
    /// reset them all once): the child then resets none.
    pub(super) dispositions_default: bool,
    pub(super) empty_mask: SigSet,
    /// The creating process, which the child checks is still its parent once it has asked for
    /// `SIGKILL` on its parent's death: 0 for a child in a view, whose parent (the host) lies
    /// outside its PID namespace (were the host gone, its parent would be the view's init, 1).
    pub(super) parent: libc::pid_t,
    /// The seccomp program of `confine` the child installs, built before the child exists.
    pub(super) fprog: Option<libc::sock_fprog>,
}

impl<'a> ChildPlan<'a> {
    pub(super) fn new(
        exec: &'a Exec<'a>,
        rlimits: &'a [Rlimit],
        confine: Option<Confine<'a>>,
        report: Report<'a>,
    ) -> Self {
        let max_fd = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
            .map_or(1024, |(soft, _)| soft.min(65_536))
            .try_into()
            .unwrap_or(65_536);
        Self {
            exec,
            rlimits,
            fprog: confine.and_then(|c| c.filter).map(seccomp::fprog),
            confine,
            report,
            max_fd,
            sigrtmax: libc::SIGRTMAX(),
            dispositions_default: false,
            empty_mask: SigSet::empty(),
            parent: nix::unistd::getpid().as_raw(),
        }
    }
}

/// Packs a failure into the word [`Report::Shared`] carries (never zero).
pub(super) fn pack(step: SpawnStep, errno: c_int) -> u64 {
    (1 << 63) | (u64::from(step.code()) << 32) | u64::from(errno.cast_unsigned())
}

/// The failure packed by [`pack`], if any.
pub(super) fn unpack(word: u64) -> Option<(SpawnStep, Errno)> {
    if word == 0 {
        return None;
    }
    let step = SpawnStep::from_code(((word >> 32) & 0x7FFF_FFFF) as u32);
    Some((step, Errno::from_raw((word & 0xFFFF_FFFF) as u32 as i32)))
}

/// The child: sets itself up and executes the program, or reports the failing step and exits
/// with 127.
pub(super) fn child_exec(plan: &ChildPlan<'_>) -> ! {
    let (step, errno) = child_setup(plan);
    match plan.report {
        Report::Pipe(fd) => {
            let mut report = [0u8; 8];
            report[..4].copy_from_slice(&step.code().to_ne_bytes());
            report[4..].copy_from_slice(&errno.to_ne_bytes());
            // SAFETY: `report` is valid for 8 bytes; `fd` is open in the child. A short or
            // failed write leaves the parent with a partial report, which it still treats as a
            // failure.
            unsafe { libc::write(fd, report.as_ptr().cast(), report.len()) };
        }
        Report::Shared(word) => word.store(pack(step, errno), Ordering::Relaxed),
    }
    // SAFETY: `_exit` ends the process without running atexit handlers or unwinding.
    unsafe { libc::_exit(127) }
}

/// Returns the step that failed and its `errno`; returns only on failure.
fn child_setup(plan: &ChildPlan<'_>) -> (SpawnStep, c_int) {
    let fail = |step| (step, Errno::last_raw());

    // A child on a pseudo-terminal starts a session of its own, whose controlling terminal it
    // opens below. A confined child must have no controlling terminal (one it could push input
    // into, or take the foreground of): where the host may have one, it gives it up, and starts
    // a session of its own only where that cannot be done otherwise (`setsid` is the dearer way).
    let own_session = plan.exec.pty.is_some()
        || plan.confine.is_some_and(|c| c.terminal)
            && match imp::give_up_controlling_terminal() {
                Ok(done) => !done,
                Err(errno) => return (SpawnStep::Session, errno as c_int),
            };
    if own_session {
        // SAFETY: setsid makes the calling process the leader of a new session and of a new
        // process group whose id is its pid; no memory is passed.
        if unsafe { libc::setsid() } == -1 {
            return fail(SpawnStep::Session);
        }
    // SAFETY: setpgid(0, 0) puts the calling process in a new group; no memory is passed.
    } else if unsafe { libc::setpgid(0, 0) } == -1 {
        return fail(SpawnStep::ProcessGroup);
    }

    // Die with the host: SIGKILL when the creating thread ends (a SIGKILL of wrt included). If
    // the host already died before the request took effect, the child was reparented: give up.
    if let Err(errno) = imp::set_parent_death_kill() {
        return (SpawnStep::Setup, errno as c_int);
    }
    // SAFETY: getppid takes no argument and cannot fail.
    if unsafe { libc::getppid() } != plan.parent {
        return (SpawnStep::Setup, libc::ESRCH);
    }

    // Reset every disposition while all signals are still blocked (the parent blocked them),
    // including the signals glibc reserves, which its `sigaction` refuses to touch. Handled
    // signals too, not only ignored ones, although `execve` resets those: the mask is emptied
    // just before `execve`, and a signal arriving in between must not run a host handler in the
    // child. One call per signal; querying each first would cost at least as many.
    if !plan.dispositions_default
        && let Err(errno) = reset_dispositions(plan.sigrtmax)
    {
        return (SpawnStep::Signals, errno as c_int);
    }

    for &(resource, soft, hard) in plan.rlimits {
        let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: `limit` is a valid `rlimit`; setrlimit only reads it.
        if unsafe { libc::setrlimit(resource, &limit) } == -1 {
            return fail(SpawnStep::Rlimit);
        }
    }

    if let Some(fd) = plan.confine.and_then(|c| c.budget) {
        // Writing 0 to the group's `tasks` (or `cgroup.procs`) moves the writer, the whole child.
        // SAFETY: the buffer is a static byte; `fd` was opened for writing by the parent.
        if unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) } != 1 {
            return fail(SpawnStep::ProcessBudget);
        }
    }

    for (target, fd) in (0..).zip(plan.exec.stdio) {
        if let Some(fd) = fd {
            // SAFETY: `fd` is open (it is borrowed from the parent's prepared descriptors) and
            // at least 3, so it is not one of the targets.
            if unsafe { libc::dup2(fd.as_raw_fd(), target) } == -1 {
                return fail(SpawnStep::Stdio);
            }
        }
    }

    if let Some(pty) = &plan.exec.pty {
        // The session leader opens the slave without O_NOCTTY: it becomes its controlling
        // terminal.
        // SAFETY: `path` is NUL-terminated and was prepared before the child was created.
        let fd = unsafe { libc::open(pty.path.as_ptr(), libc::O_RDWR) };
        if fd == -1 {
            return fail(SpawnStep::Session);
        }
        for (target, is_pty) in (0..).zip(pty.targets) {
            // SAFETY: `fd` was just opened; `target` is 0, 1 or 2.
            if is_pty && target != fd && unsafe { libc::dup2(fd, target) } == -1 {
                return fail(SpawnStep::Stdio);
            }
        }
        if fd > 2 || !pty.targets[fd as usize] {
            // SAFETY: `fd` is ours and no longer needed: its copies are installed.
            unsafe { libc::close(fd) };
        }
    }

    // SAFETY: `cwd` is NUL-terminated and outlives the call.
    if unsafe { libc::chdir(plan.exec.cwd.as_ptr()) } == -1 {
        return fail(SpawnStep::Chdir);
    }

    if let Some(confine) = plan.confine {
        if let Err(errno) = imp::drop_capabilities() {
            return (SpawnStep::Privileges, errno as c_int);
        }
        if let Err(errno) = imp::set_no_new_privs() {
            return (SpawnStep::Privileges, errno as c_int);
        }
        if let Err(errno) = landlock::restrict_self(confine.ruleset) {
            return (SpawnStep::Landlock, errno as c_int);
        }
        if let Some(fprog) = &plan.fprog
            && let Err(errno) = seccomp::install(fprog)
        {
            return (SpawnStep::Seccomp, errno as c_int);
        }
    }

    let err_fd = match plan.report {
        Report::Pipe(fd) => fd,
        Report::Shared(_) => NO_FD,
    };
    let keep = [err_fd, plan.exec.fd.map_or(err_fd, |fd| fd.as_raw_fd())];
    if let Err(errno) = close_fds_except(keep, plan.max_fd) {
        return (SpawnStep::CloseFds, errno as c_int);
    }

    // SAFETY: `empty_mask` is a valid set; the old mask is not wanted.
    if unsafe { libc::sigprocmask(libc::SIG_SETMASK, plan.empty_mask.as_ref(), ptr::null_mut()) } == -1 {
        return fail(SpawnStep::Signals);
    }

    if let Some(fd) = plan.exec.fd {
        // SAFETY: `fd` is open in the child; `argv` and `envp` are NULL-terminated arrays of
        // NUL-terminated strings prepared before the child was created. On success fexecve
        // does not return.
        unsafe { libc::fexecve(fd.as_raw_fd(), plan.exec.argv.as_ptr(), plan.exec.envp.as_ptr()) };
        return fail(SpawnStep::Exec);
    }
    // SAFETY: `path` is NUL-terminated; `argv` and `envp` are NULL-terminated arrays of
    // NUL-terminated strings prepared before the child was created. On success execve does
    // not return.
    unsafe { libc::execve(plan.exec.path.as_ptr(), plan.exec.argv.as_ptr(), plan.exec.envp.as_ptr()) };
    fail(SpawnStep::Exec)
}

/// Sets every signal but `SIGKILL` and `SIGSTOP`, up to `sigrtmax`, to its default action.
pub(super) fn reset_dispositions(sigrtmax: c_int) -> Result<(), Errno> {
    for signal in 1..=sigrtmax {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        imp::set_default_disposition(signal)?;
    }
    Ok(())
}

/// A `keep` entry that keeps nothing: below 3, so never among the descriptors closed.
const NO_FD: RawFd = 2;

/// Closes every fd from 3 up, except the two in `keep` (the error pipe and the program's
/// descriptor, either of which may be [`NO_FD`]; the others are close-on-exec and at least 3).
fn close_fds_except(keep: [RawFd; 2], max_fd: c_int) -> Result<(), Errno> {
    let (low, high) = (keep[0].min(keep[1]).cast_unsigned(), keep[0].max(keep[1]).cast_unsigned());
    let ranges = [
        (3, low.saturating_sub(1)),
        (low.saturating_add(1).max(3), high.saturating_sub(1)),
        (high.saturating_add(1).max(3), u32::MAX),
    ];
    let close = |&(first, last): &(u32, u32)| {
        if first <= last { imp::close_range(first, last) } else { Ok(()) }
    };
    match ranges.iter().try_for_each(close) {
        Err(Errno::ENOSYS) => {
            for fd in 3..=max_fd {
                if !keep.contains(&fd) {
                    // SAFETY: closing an fd number we do not otherwise use in the child; EBADF
                    // for numbers that are not open is expected and ignored.
                    unsafe { libc::close(fd) };
                }
            }
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_failure_unpacks_to_itself() {
        assert_eq!(unpack(0), None);
        for step in [SpawnStep::Exec, SpawnStep::Landlock, SpawnStep::Setup] {
            assert_eq!(unpack(pack(step, libc::EACCES)), Some((step, Errno::EACCES)));
        }
    }
}

//! The fork-exec strategy, for what `posix_spawn` cannot express (resource limits): the forked
//! child runs only async-signal-safe calls on data prepared before the fork.

use std::ffi::c_int;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::unistd::Pid;

use super::exec::{Exec, SpawnFailure};
use super::fd::above_stdio;
use super::imp;
use crate::error::SpawnStep;

/// A resource limit for the fork-exec child: `(resource, soft, hard)`.
pub(crate) type Rlimit = (u32, u64, u64);

/// Everything the forked child reads: plain values and pointers into memory prepared before
/// the fork. The child allocates nothing and takes no lock.
struct ChildPlan<'a> {
    exec: &'a Exec<'a>,
    rlimits: &'a [Rlimit],
    err_fd: RawFd,
    /// Highest fd to close when `close_range` is missing (the soft `RLIMIT_NOFILE`, capped).
    max_fd: c_int,
    sigrtmax: c_int,
    empty_mask: SigSet,
    /// The forking process, which the child checks is still its parent once it has asked for
    /// `SIGKILL` on its parent's death.
    parent: libc::pid_t,
}

/// Starts `exec` with `fork` and `execve`, applying `rlimits` in the child.
///
/// The parent blocks every signal around `fork` so that no handler runs in the child before
/// the child has reset all dispositions. A failing step in the child writes the step and
/// `errno` to a close-on-exec pipe and calls `_exit(127)`; the parent reads the pipe, so it
/// sees either EOF (the `execve` succeeded) or the failure, and reaps a failed child itself.
pub(crate) fn fork_exec(exec: &Exec<'_>, rlimits: &[Rlimit]) -> Result<Pid, SpawnFailure> {
    let setup = SpawnFailure::at(SpawnStep::Setup);
    let (err_read, err_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(setup)?;
    let err_read = above_stdio(err_read).map_err(setup)?;
    let err_write = above_stdio(err_write).map_err(setup)?;

    let max_fd = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft.min(65_536))
        .try_into()
        .unwrap_or(65_536);
    let plan = ChildPlan {
        exec,
        rlimits,
        err_fd: err_write.as_raw_fd(),
        max_fd,
        sigrtmax: libc::SIGRTMAX(),
        empty_mask: SigSet::empty(),
        parent: nix::unistd::getpid().as_raw(),
    };

    let mut old_mask = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), Some(&mut old_mask)).map_err(setup)?;
    // SAFETY: in the child, `child_exec` only makes async-signal-safe calls on `plan`, which was
    // prepared above, and never returns; the parent continues normally.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child_exec(&plan);
    }
    let fork_errno = Errno::last();
    // Restoring a mask we just read cannot fail.
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
    if pid == -1 {
        return Err(SpawnFailure { step: SpawnStep::Fork, errno: fork_errno });
    }
    let pid = Pid::from_raw(pid);
    drop(err_write);

    let mut report = [0u8; 8];
    let mut filled = 0;
    while filled < report.len() {
        match nix::unistd::read(&err_read, &mut report[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(Errno::EINTR) => {}
            Err(errno) => {
                reap_failed(pid);
                return Err(SpawnFailure { step: SpawnStep::Setup, errno });
            }
        }
    }
    if filled == 0 {
        return Ok(pid);
    }
    reap_failed(pid);
    let [s0, s1, s2, s3, e0, e1, e2, e3] = report;
    let step = SpawnStep::from_code(u32::from_ne_bytes([s0, s1, s2, s3]));
    let errno = Errno::from_raw(i32::from_ne_bytes([e0, e1, e2, e3]));
    Err(SpawnFailure { step, errno })
}

/// Waits for a child that reported a setup failure; it has already called `_exit`.
fn reap_failed(pid: Pid) {
    loop {
        match nix::sys::wait::waitpid(pid, None) {
            Err(Errno::EINTR) => {}
            _ => return,
        }
    }
}

/// The forked child. Only async-signal-safe calls on data prepared before the fork.
fn child_exec(plan: &ChildPlan<'_>) -> ! {
    let (step, errno) = child_setup(plan);
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&step.code().to_ne_bytes());
    report[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: `report` is valid for 8 bytes; `err_fd` is open in the child. A short or failed
    // write leaves the parent with a partial report, which it still treats as a failure.
    unsafe { libc::write(plan.err_fd, report.as_ptr().cast(), report.len()) };
    // SAFETY: `_exit` ends the process without running atexit handlers or unwinding.
    unsafe { libc::_exit(127) }
}

/// Returns the step that failed and its `errno`; returns only on failure.
fn child_setup(plan: &ChildPlan<'_>) -> (SpawnStep, c_int) {
    let fail = |step| (step, Errno::last_raw());

    if plan.exec.pty.is_some() {
        // SAFETY: setsid makes the calling process the leader of a new session and of a new
        // process group whose id is its pid; no memory is passed.
        if unsafe { libc::setsid() } == -1 {
            return fail(SpawnStep::Session);
        }
    // SAFETY: setpgid(0, 0) puts the calling process in a new group; no memory is passed.
    } else if unsafe { libc::setpgid(0, 0) } == -1 {
        return fail(SpawnStep::ProcessGroup);
    }

    // Die with the host: SIGKILL when the forking thread ends (a SIGKILL of wrt included). If
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
    for signal in 1..=plan.sigrtmax {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        if let Err(errno) = imp::set_default_disposition(signal) {
            return (SpawnStep::Signals, errno as c_int);
        }
    }

    for &(resource, soft, hard) in plan.rlimits {
        let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: `limit` is a valid `rlimit`; setrlimit only reads it.
        if unsafe { libc::setrlimit(resource, &limit) } == -1 {
            return fail(SpawnStep::Rlimit);
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
        // SAFETY: `path` is NUL-terminated and was prepared before the fork.
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

    let keep = [plan.err_fd, plan.exec.fd.map_or(plan.err_fd, |fd| fd.as_raw_fd())];
    if let Err(errno) = close_fds_except(keep, plan.max_fd) {
        return (SpawnStep::CloseFds, errno as c_int);
    }

    // SAFETY: `empty_mask` is a valid set; the old mask is not wanted.
    if unsafe { libc::sigprocmask(libc::SIG_SETMASK, plan.empty_mask.as_ref(), ptr::null_mut()) } == -1 {
        return fail(SpawnStep::Signals);
    }

    if let Some(fd) = plan.exec.fd {
        // SAFETY: `fd` is open in the child; `argv` and `envp` are NULL-terminated arrays of
        // NUL-terminated strings prepared before the fork. On success fexecve does not return.
        unsafe { libc::fexecve(fd.as_raw_fd(), plan.exec.argv.as_ptr(), plan.exec.envp.as_ptr()) };
        return fail(SpawnStep::Exec);
    }
    // SAFETY: `path` is NUL-terminated; `argv` and `envp` are NULL-terminated arrays of
    // NUL-terminated strings prepared before the fork. On success execve does not return.
    unsafe { libc::execve(plan.exec.path.as_ptr(), plan.exec.argv.as_ptr(), plan.exec.envp.as_ptr()) };
    fail(SpawnStep::Exec)
}

/// Closes every fd from 3 up, except the two in `keep` (the error pipe and the program's
/// descriptor, or the error pipe twice; both close-on-exec and at least 3).
fn close_fds_except(keep: [RawFd; 2], max_fd: c_int) -> Result<(), Errno> {
    let (low, high) = (keep[0].min(keep[1]).cast_unsigned(), keep[0].max(keep[1]).cast_unsigned());
    let ranges = [
        (3, low.saturating_sub(1)),
        (low.saturating_add(1), high.saturating_sub(1)),
        (high.saturating_add(1), u32::MAX),
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

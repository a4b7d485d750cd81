//! The fork-exec strategy, for what `posix_spawn` cannot express (resource limits): the forked
//! child runs only async-signal-safe calls on data prepared before the fork (see
//! [`child_setup`](super::child_setup)).

use std::os::fd::AsRawFd;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::unistd::Pid;

use super::child_setup::{ChildPlan, Confine, Report, Rlimit, child_exec};
use super::exec::{Exec, SpawnFailure};
use super::fd::above_stdio;
use crate::spawn_step::SpawnStep;

/// Starts `exec` with `fork` and `execve`, applying `rlimits` and `confine` in the child.
///
/// The parent blocks every signal around `fork` so that no handler runs in the child before
/// the child has reset all dispositions. A failing step in the child writes the step and
/// `errno` to a close-on-exec pipe and calls `_exit(127)`; the parent reads the pipe, so it
/// sees either EOF (the `execve` succeeded) or the failure, and reaps a failed child itself.
pub(crate) fn fork_exec(
    exec: &Exec<'_>,
    rlimits: &[Rlimit],
    confine: Option<Confine<'_>>,
) -> Result<Pid, SpawnFailure> {
    let setup = SpawnFailure::at(SpawnStep::Setup);
    let (err_read, err_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(setup)?;
    let err_read = above_stdio(err_read).map_err(setup)?;
    let err_write = above_stdio(err_write).map_err(setup)?;

    let plan = ChildPlan::new(exec, rlimits, confine, Report::Pipe(err_write.as_raw_fd()));

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
pub(super) fn reap_failed(pid: Pid) {
    loop {
        match nix::sys::wait::waitpid(pid, None) {
            Err(Errno::EINTR) => {}
            _ => return,
        }
    }
}

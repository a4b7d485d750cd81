//! The vfork-exec strategy, which confines children at `posix_spawn`'s cost: the child is a
//! `clone(CLONE_VM | CLONE_VFORK)` on a stack of its own, as glibc writes `posix_spawn`, so no
//! page table is copied however large the host is; unlike `posix_spawn`, it runs the set-up of
//! [`child_setup`](super::child_setup) (resource limits, the process budget, no-new-privileges,
//! Landlock, seccomp) before `execve`.
//!
//! The child shares the parent's memory until `execve`, and the parent thread is suspended
//! until then: the child reports a failure by storing it into a word of the parent's stack.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::unistd::Pid;

use super::child_setup::{ChildPlan, Confine, Report, Rlimit, child_exec, unpack};
use super::exec::{Exec, SpawnFailure};
use super::fork_exec::reap_failed;
use super::stack::Stack;
use super::view::ViewProcesses;
use crate::spawn_step::SpawnStep;

thread_local! {
    /// One stack per spawning thread, made on its first confined spawn: a thread's children
    /// are started one at a time (the thread is suspended until each has executed), so the
    /// stack is free again whenever this thread starts another.
    static STACK: RefCell<Option<Stack>> = const { RefCell::new(None) };
}

extern "C" fn child_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `ChildPlan` on the suspended parent's stack, alive until the child
    // has executed or exited.
    let plan = unsafe { &*arg.cast::<ChildPlan<'_>>() };
    child_exec(plan)
}

/// Starts `exec` with `clone(CLONE_VM | CLONE_VFORK)` and `execve`, applying `rlimits` and
/// `confine` in the child; in `view`, the child is started by the view's starter.
///
/// The parent blocks every signal around `clone` so that no handler runs in the child (on the
/// parent's memory) before the child has reset all dispositions.
pub(crate) fn vfork_exec(
    exec: &Exec<'_>,
    rlimits: &[Rlimit],
    confine: Option<Confine<'_>>,
    view: Option<&ViewProcesses>,
) -> Result<Pid, SpawnFailure> {
    let setup = SpawnFailure::at(SpawnStep::Setup);
    if let Some(view) = view {
        // The view's starter makes the child, on a stack of its own, with every signal blocked.
        let failure = AtomicU64::new(0);
        let mut plan = ChildPlan::new(exec, rlimits, confine, Report::Shared(&failure));
        plan.parent = 0;
        plan.dispositions_default = true;
        return view.start(&plan, &failure).map_err(|(step, errno)| SpawnFailure { step, errno });
    }
    STACK.with(|cell| {
        let mut stack = cell.try_borrow_mut().map_err(|_| setup(Errno::EBUSY))?;
        if stack.is_none() {
            *stack = Some(Stack::new().map_err(setup)?);
        }
        let top = stack.as_ref().map_or(ptr::null_mut(), Stack::top);

        let failure = AtomicU64::new(0);
        let plan = ChildPlan::new(exec, rlimits, confine, Report::Shared(&failure));

        let mut old_mask = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), Some(&mut old_mask)).map_err(setup)?;
        // SAFETY: the child runs `child_entry` on its own stack (`top`, which nothing else uses
        // while this thread is suspended) with `plan`, which outlives it: `CLONE_VFORK` suspends
        // this thread until the child has executed or exited. The child only makes
        // async-signal-safe calls and never returns.
        let pid = unsafe {
            libc::clone(
                child_entry,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                ptr::from_ref(&plan).cast_mut().cast::<c_void>(),
            )
        };
        let clone_errno = Errno::last();
        // Restoring a mask we just read cannot fail.
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
        if pid == -1 {
            return Err(SpawnFailure { step: SpawnStep::Clone, errno: clone_errno });
        }
        let pid = Pid::from_raw(pid);
        match unpack(failure.load(Ordering::Relaxed)) {
            None => Ok(pid),
            Some((step, errno)) => {
                reap_failed(pid);
                Err(SpawnFailure { step, errno })
            }
        }
    })
}

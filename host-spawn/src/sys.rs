//! Every `unsafe` operation of the crate: `posix_spawn`, the fork-exec and vfork-exec children,
//! Landlock, seccomp, capabilities, `wait4`, `pidfd_open`, `close_range`, `getdents64`, a
//! `SIGPIPE`-free `write` and pseudo-terminals.
//!
//! Callers see safe functions. nix 0.32 wraps `posix_spawn`, but not
//! `posix_spawn_file_actions_addchdir_np` or `posix_spawn_file_actions_addclosefrom_np`, and its
//! file-actions object does not expose the C object, so this module wraps the C objects itself
//! (RAII newtypes with `Drop`, the way nix and std do).
//!
//! Laid out like std's `sys/process/unix`: `exec` (the request every strategy carries out),
//! `posix_spawn`, `fork_exec` and `vfork_exec` (the strategies), `child_setup` (what the
//! hand-written children do before `execve`), `landlock` and `seccomp` (the confinement they
//! apply), `probe` (what this libc's `posix_spawn` can
//! do), `wait` (`wait4`), `fd` (descriptor helpers) and `linux` (Linux-only system calls).

use std::ffi::c_int;

use nix::errno::Errno;

mod child_setup;
mod exec;
mod fd;
mod fork_exec;
pub(crate) mod landlock;
mod posix_spawn;
mod probe;
mod pty;
pub(crate) mod seccomp;
mod stack;
pub(crate) mod termination;
mod vfork_exec;
pub(crate) mod view;
mod wait;

cfg_select! {
    target_os = "linux" => {
        mod linux;
        use linux as imp;
    }
    _ => {
        compile_error!("wrt-host-spawn supports Linux only");
    }
}

pub(crate) use self::child_setup::{Confine, Rlimit};
pub(crate) use self::exec::{CStringArray, Exec, PtyExec, SpawnFailure};
pub(crate) use self::fd::{above_stdio, write_no_sigpipe};
pub(crate) use self::fork_exec::fork_exec;
pub(crate) use self::posix_spawn::{ActionsCache, posix_spawn};
pub(crate) use self::probe::{PosixSpawnSupport, posix_spawn_support};
pub(crate) use self::pty::{open_pty, set_window_size};
pub(crate) use self::vfork_exec::vfork_exec;
pub(crate) use self::wait::{RawExit, own_peak_at_least_kib, own_peak_kib, wait4_nohang};
pub(crate) use imp::{getdents64, is_ignored, pidfd_open, pidfd_send_signal};

/// `-1` and `errno` to `Err`.
fn cvt(ret: c_int) -> Result<c_int, Errno> {
    if ret == -1 { Err(Errno::last()) } else { Ok(ret) }
}

/// Zero to `Ok`; anything else is the error number itself (the `posix_spawn*` convention).
fn cvt_nz(ret: c_int) -> Result<(), Errno> {
    if ret == 0 { Ok(()) } else { Err(Errno::from_raw(ret)) }
}

//! The default strategy: `posix_spawn` with RAII wrappers around its file actions and
//! attributes.

use std::ffi::{CStr, CString, c_int};
use std::fmt;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Mutex, TryLockError};

use nix::errno::Errno;
use nix::sys::signal::SigSet;
use nix::unistd::Pid;

use super::cvt_nz;
use super::exec::{Exec, SpawnFailure};
use super::probe::{addchdir_fn, addclosefrom_fn};
use crate::spawn_step::SpawnStep;

/// An initialised `posix_spawn_file_actions_t`, destroyed on drop.
///
/// The C object holds no pointer to itself (glibc, musl), so moving it is fine.
struct FileActions(libc::posix_spawn_file_actions_t);

impl FileActions {
    /// See [posix_spawn_file_actions_init](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn_file_actions_init.html).
    #[doc(alias = "posix_spawn_file_actions_init")]
    fn new() -> Result<Self, Errno> {
        let mut actions = MaybeUninit::uninit();
        // SAFETY: `init` writes an initialised object through the valid out-pointer.
        cvt_nz(unsafe { libc::posix_spawn_file_actions_init(actions.as_mut_ptr()) })?;
        // SAFETY: `init` returned 0, so `actions` is initialised.
        Ok(Self(unsafe { actions.assume_init() }))
    }

    /// See [posix_spawn_file_actions_adddup2](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn_file_actions_adddup2.html).
    #[doc(alias = "posix_spawn_file_actions_adddup2")]
    fn add_dup2(&mut self, fd: RawFd, target: RawFd) -> Result<(), Errno> {
        // SAFETY: `self.0` was initialised by `new` and is borrowed exclusively.
        cvt_nz(unsafe { libc::posix_spawn_file_actions_adddup2(&mut self.0, fd, target) })
    }

    /// See [posix_spawn_file_actions_addopen](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn_file_actions_addopen.html).
    #[doc(alias = "posix_spawn_file_actions_addopen")]
    fn add_open(&mut self, target: RawFd, path: &CStr, flags: c_int) -> Result<(), Errno> {
        // SAFETY: `self.0` is initialised and borrowed exclusively; glibc copies `path`.
        cvt_nz(unsafe { libc::posix_spawn_file_actions_addopen(&mut self.0, target, path.as_ptr(), flags, 0) })
    }

    /// See [posix_spawn_file_actions_addclose](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn_file_actions_addclose.html).
    /// glibc ignores a failing close of a descriptor that is not open.
    #[doc(alias = "posix_spawn_file_actions_addclose")]
    fn add_close(&mut self, fd: RawFd) -> Result<(), Errno> {
        // SAFETY: `self.0` was initialised by `new` and is borrowed exclusively.
        cvt_nz(unsafe { libc::posix_spawn_file_actions_addclose(&mut self.0, fd) })
    }

    /// `posix_spawn_file_actions_addchdir_np` (a GNU extension, standardised as
    /// [posix_spawn_file_actions_addchdir](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn_file_actions_addchdir.html)).
    #[doc(alias = "posix_spawn_file_actions_addchdir_np")]
    fn add_chdir(&mut self, dir: &CStr) -> Result<(), Errno> {
        let add = addchdir_fn().ok_or(Errno::ENOSYS)?;
        // SAFETY: `self.0` is initialised and borrowed exclusively; glibc copies `dir`.
        cvt_nz(unsafe { add(&mut self.0, dir.as_ptr()) })
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): close every fd ≥ `lowest`.
    #[doc(alias = "posix_spawn_file_actions_addclosefrom_np")]
    fn add_closefrom(&mut self, lowest: RawFd) -> Result<(), Errno> {
        let add = addclosefrom_fn().ok_or(Errno::ENOSYS)?;
        // SAFETY: `self.0` is initialised and borrowed exclusively.
        cvt_nz(unsafe { add(&mut self.0, lowest) })
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: `self.0` was initialised by `new` and is destroyed exactly once.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

// SAFETY: the C object is a counter and a pointer to an array that glibc (or musl) allocated
// with `malloc` for it alone; nothing in it is tied to the thread that made it, so it may be
// used, and freed, on another. (It is not `Sync`: the cache below shares it behind a mutex.)
unsafe impl Send for FileActions {}

/// What the file actions of a spawn depend on when it has no pseudo-terminal and no pinned
/// program: the descriptors `dup2`ed to 0, 1 and 2, and the working directory. Equal plans
/// give identical file actions (they hold descriptor numbers, never the files behind them).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    stdio: [Option<RawFd>; 3],
    cwd: CString,
}

impl Plan {
    /// Whether the file actions of `exec` may be kept for the next spawn.
    fn applies(exec: &Exec<'_>) -> bool {
        exec.pty.is_none() && exec.fd.is_none()
    }

    fn stdio(exec: &Exec<'_>) -> [Option<RawFd>; 3] {
        exec.stdio.map(|fd| fd.map(|fd| fd.as_raw_fd()))
    }

    /// The plan of `exec` (for which [`Plan::applies`]).
    fn of(exec: &Exec<'_>) -> Self {
        Self { stdio: Self::stdio(exec), cwd: exec.cwd.to_owned() }
    }

    /// Whether `exec` (for which [`Plan::applies`]) has this plan.
    fn is_of(&self, exec: &Exec<'_>) -> bool {
        self.stdio == Self::stdio(exec) && self.cwd.as_c_str() == exec.cwd
    }
}

/// The file actions of the last spawn, kept for the next spawn with the same [`Plan`]: a
/// spawner's children usually have the same stdio descriptors and working directory, and
/// building the actions costs as much as a few system calls (glibc checks each `dup2` and
/// `closefrom` against `RLIMIT_NOFILE`, seven `prlimit64` calls for three streams).
///
/// A spawn that finds the cache in use by another thread builds its own actions.
#[derive(Default)]
pub(crate) struct ActionsCache(Mutex<Option<(Plan, FileActions)>>);

impl fmt::Debug for ActionsCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plan = match self.0.try_lock() {
            Ok(guard) => guard.as_ref().map(|(plan, _)| plan.clone()),
            Err(_) => None,
        };
        f.debug_struct("ActionsCache").field("plan", &plan).finish()
    }
}

/// The file actions `exec` asks for: stdio by `dup2`, the pseudo-terminal's slave opened
/// (the controlling terminal), every other descriptor closed, and `chdir`.
fn file_actions(exec: &Exec<'_>) -> Result<FileActions, SpawnFailure> {
    let mut actions = FileActions::new().map_err(SpawnFailure::at(SpawnStep::Setup))?;
    for (target, fd) in (0..).zip(exec.stdio) {
        if let Some(fd) = fd {
            debug_assert!(fd.as_raw_fd() > 2, "stdio sources must not collide with 0, 1, 2");
            actions.add_dup2(fd.as_raw_fd(), target).map_err(SpawnFailure::at(SpawnStep::Stdio))?;
        }
    }
    if let Some(pty) = &exec.pty {
        // After `setsid` (glibc runs the file actions after the attributes), opening the slave
        // without O_NOCTTY makes it the child's controlling terminal.
        let first = pty.first();
        actions.add_open(first, pty.path, libc::O_RDWR).map_err(SpawnFailure::at(SpawnStep::Session))?;
        for (target, is_pty) in (0..).zip(pty.targets) {
            if is_pty && target != first {
                actions.add_dup2(first, target).map_err(SpawnFailure::at(SpawnStep::Stdio))?;
            }
        }
    }
    let close_fds = SpawnFailure::at(SpawnStep::CloseFds);
    match exec.fd {
        None => actions.add_closefrom(3).map_err(close_fds)?,
        // Keep the program's descriptor for the exec of `/proc/self/fd/N`: it is close-on-exec,
        // so the kernel closes it once it has opened the program, and the child still sees
        // only 0, 1 and 2.
        Some(fd) => {
            let keep = fd.as_raw_fd();
            for other in 3..keep {
                actions.add_close(other).map_err(close_fds)?;
            }
            actions.add_closefrom(keep + 1).map_err(close_fds)?;
        }
    }
    actions.add_chdir(exec.cwd).map_err(SpawnFailure::at(SpawnStep::Chdir))?;
    Ok(actions)
}

/// An initialised `posix_spawnattr_t`, destroyed on drop.
struct SpawnAttr(libc::posix_spawnattr_t);

impl SpawnAttr {
    /// See [posix_spawnattr_init](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawnattr_init.html).
    #[doc(alias = "posix_spawnattr_init")]
    fn new() -> Result<Self, Errno> {
        let mut attr = MaybeUninit::uninit();
        // SAFETY: `init` writes an initialised object through the valid out-pointer.
        cvt_nz(unsafe { libc::posix_spawnattr_init(attr.as_mut_ptr()) })?;
        // SAFETY: `init` returned 0, so `attr` is initialised.
        Ok(Self(unsafe { attr.assume_init() }))
    }

    /// See [posix_spawnattr_setflags](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawnattr_setflags.html).
    #[doc(alias = "posix_spawnattr_setflags")]
    fn set_flags(&mut self, flags: c_int) -> Result<(), Errno> {
        let flags = libc::c_short::try_from(flags).map_err(|_| Errno::EINVAL)?;
        // SAFETY: `self.0` is initialised and borrowed exclusively.
        cvt_nz(unsafe { libc::posix_spawnattr_setflags(&mut self.0, flags) })
    }

    /// See [posix_spawnattr_setpgroup](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawnattr_setpgroup.html).
    #[doc(alias = "posix_spawnattr_setpgroup")]
    fn set_pgroup(&mut self, pgroup: libc::pid_t) -> Result<(), Errno> {
        // SAFETY: `self.0` is initialised and borrowed exclusively.
        cvt_nz(unsafe { libc::posix_spawnattr_setpgroup(&mut self.0, pgroup) })
    }

    /// See [posix_spawnattr_setsigmask](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawnattr_setsigmask.html).
    #[doc(alias = "posix_spawnattr_setsigmask")]
    fn set_sigmask(&mut self, mask: &SigSet) -> Result<(), Errno> {
        // SAFETY: `self.0` is initialised and borrowed exclusively; `mask` is a valid set.
        cvt_nz(unsafe { libc::posix_spawnattr_setsigmask(&mut self.0, mask.as_ref()) })
    }

    /// See [posix_spawnattr_setsigdefault](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawnattr_setsigdefault.html).
    #[doc(alias = "posix_spawnattr_setsigdefault")]
    fn set_sigdefault(&mut self, set: &libc::sigset_t) -> Result<(), Errno> {
        // SAFETY: `self.0` is initialised and borrowed exclusively; `set` is a valid set.
        cvt_nz(unsafe { libc::posix_spawnattr_setsigdefault(&mut self.0, set) })
    }
}

impl Drop for SpawnAttr {
    fn drop(&mut self) {
        // SAFETY: `self.0` was initialised by `new` and is destroyed exactly once.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

/// A signal set with every bit set, including the signals glibc reserves for itself (32 and
/// 33), which `sigfillset` leaves out.
///
/// glibc's `posix_spawn` sets each reserved signal that is not in the `SETSIGDEF` set to
/// `SIG_IGN` in the child, and ignored signals survive `execve`; with every bit set, they are
/// reset to `SIG_DFL` like all others.
///
/// The full set is also the cheapest: glibc's child visits every signal whatever the set holds.
/// A signal in the set costs one `rt_sigaction` (the reset); one outside it costs a query and
/// then (glibc 2.36) a reset unless the host ignores it, in which case it stays ignored. A set of
/// only the signals the host ignores would need those queried or read from `/proc` before each
/// spawn (the host may change a disposition at any time), and would double the child's calls:
/// 122 `rt_sigaction` per spawn instead of 64 (strace, glibc 2.36).
fn every_signal() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigset_t` is a plain bit array: writing 0xff to all its bytes initialises it to
    // a valid value, the full set.
    unsafe {
        set.as_mut_ptr().write_bytes(0xff, 1);
        set.assume_init()
    }
}

/// Starts `exec` with [posix_spawn](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_spawn.html):
/// stdio by `dup2` file actions, every other fd closed, `chdir`, a new process group, an empty
/// signal mask and every signal at its default disposition.
///
/// glibc ≥ 2.24 creates the child with `clone(CLONE_VM | CLONE_VFORK)` and reports a failed
/// `execve` (or file action) as the return value.
///
/// The file actions are `cache`'s when the last spawn through it had the same [`Plan`].
pub(crate) fn posix_spawn(exec: &Exec<'_>, cache: &ActionsCache) -> Result<Pid, SpawnFailure> {
    let setup = SpawnFailure::at(SpawnStep::Setup);
    let mut cached = match cache.0.try_lock() {
        _ if !Plan::applies(exec) => None,
        Ok(guard) => Some(guard),
        // A panic cannot leave the actions half-built: they are replaced whole.
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    };
    let fresh;
    let actions = match cached.as_deref_mut() {
        Some(Some((kept, actions))) if kept.is_of(exec) => &*actions,
        Some(slot) => &slot.insert((Plan::of(exec), file_actions(exec)?)).1,
        None => {
            fresh = file_actions(exec)?;
            &fresh
        }
    };

    let mut attr = SpawnAttr::new().map_err(setup)?;
    // A new session for a terminal (its process group's id is the child's pid, as with
    // SETPGROUP, which would fail after it); a new process group otherwise.
    let group = match exec.pty {
        Some(_) => c_int::from(libc::POSIX_SPAWN_SETSID),
        None => libc::POSIX_SPAWN_SETPGROUP,
    };
    attr.set_flags(group | libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF).map_err(setup)?;
    attr.set_pgroup(0).map_err(setup)?;
    attr.set_sigmask(&SigSet::empty()).map_err(setup)?;
    attr.set_sigdefault(&every_signal()).map_err(setup)?;

    let mut pid = MaybeUninit::<libc::pid_t>::uninit();
    // SAFETY: every pointer is valid for the call: `pid` is an out-parameter, `path` is
    // NUL-terminated, `actions` and `attr` are initialised, and `argv`/`envp` are
    // NULL-terminated arrays of NUL-terminated strings that outlive the call.
    let ret = unsafe {
        libc::posix_spawn(
            pid.as_mut_ptr(),
            exec.path.as_ptr(),
            &actions.0,
            &attr.0,
            exec.argv.as_ptr().cast(),
            exec.envp.as_ptr().cast(),
        )
    };
    cvt_nz(ret).map_err(SpawnFailure::at(SpawnStep::Spawn))?;
    // SAFETY: posix_spawn returned 0, so it stored the child's pid.
    Ok(Pid::from_raw(unsafe { pid.assume_init() }))
}

//! Every `unsafe` operation of the crate: `posix_spawn`, the fork-exec child, `wait4`,
//! `pidfd_open`, `close_range` and a `SIGPIPE`-free `write`.
//!
//! Callers see safe functions. nix 0.32 wraps `posix_spawn`, but not
//! `posix_spawn_file_actions_addchdir_np` or `posix_spawn_file_actions_addclosefrom_np`, and its
//! file-actions object does not expose the C object, so this module wraps the C objects itself
//! (RAII newtypes with `Drop`, the way nix and std do).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::fmt;
use std::mem::{self, MaybeUninit};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::sync::OnceLock;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::unistd::Pid;

use crate::error::SpawnStep;

cfg_select! {
    target_os = "linux" => {
        mod linux;
        use linux as imp;
    }
    _ => {
        compile_error!("wrt-host-spawn supports Linux only");
    }
}

pub(crate) use imp::{is_ignored, pidfd_open, pidfd_send_signal};

/// `-1` and `errno` to `Err`.
fn cvt(ret: c_int) -> Result<c_int, Errno> {
    if ret == -1 { Err(Errno::last()) } else { Ok(ret) }
}

/// Zero to `Ok`; anything else is the error number itself (the `posix_spawn*` convention).
fn cvt_nz(ret: c_int) -> Result<(), Errno> {
    if ret == 0 { Ok(()) } else { Err(Errno::from_raw(ret)) }
}

/// A NULL-terminated array of C strings, as `execve` and `posix_spawn` take them.
///
/// `ptrs` points into the heap buffers of `items`; those buffers never move or change
/// while `self` lives, because `items` is only ever pushed to.
pub(crate) struct CStringArray {
    items: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStringArray {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut ptrs = Vec::with_capacity(capacity + 1);
        ptrs.push(ptr::null());
        Self { items: Vec::with_capacity(capacity), ptrs }
    }

    pub(crate) fn push(&mut self, item: CString) {
        let last = self.ptrs.len() - 1;
        self.ptrs[last] = item.as_ptr();
        self.ptrs.push(ptr::null());
        self.items.push(item);
    }

    /// Replaces the first item (pushes it if there is none).
    pub(crate) fn set_first(&mut self, item: CString) {
        match self.items.first_mut() {
            Some(first) => {
                *first = item;
                self.ptrs[0] = first.as_ptr();
            }
            None => self.push(item),
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &CStr> {
        self.items.iter().map(CString::as_c_str)
    }

    fn as_ptr(&self) -> *const *const c_char {
        self.ptrs.as_ptr()
    }
}

impl fmt::Debug for CStringArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Everything both strategies need to start a program, prepared before any process exists.
#[derive(Debug)]
pub(crate) struct Exec<'a> {
    /// The canonical path to execute.
    pub(crate) path: &'a CStr,
    pub(crate) argv: &'a CStringArray,
    pub(crate) envp: &'a CStringArray,
    /// Descriptors to install as the child's 0, 1 and 2; `None` leaves the host's in place.
    /// Each is at least 3, so installing one never overwrites another.
    pub(crate) stdio: [Option<BorrowedFd<'a>>; 3],
    pub(crate) cwd: &'a CStr,
    /// The program's descriptor (close-on-exec, at least 3) when it must run from exactly the
    /// file that was hashed: fork-exec calls `fexecve` on it; `posix_spawn` executes `path`,
    /// which is then `/proc/self/fd/N`, and leaves the descriptor open (close-on-exec) for it.
    pub(crate) fd: Option<BorrowedFd<'a>>,
}

/// Why starting a child failed, and at which step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpawnFailure {
    pub(crate) step: SpawnStep,
    pub(crate) errno: Errno,
}

impl SpawnFailure {
    fn at(step: SpawnStep) -> impl Fn(Errno) -> Self + Copy {
        move |errno| Self { step, errno }
    }
}

/// What this libc's `posix_spawn` can express.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PosixSpawnSupport {
    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29, musl 1.1.24).
    pub(crate) chdir: bool,
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    pub(crate) closefrom: bool,
}

type AddChdirFn = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const c_char) -> c_int;
type AddClosefromFn = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, c_int) -> c_int;

/// Looks `name` up in the libraries already loaded, as std's `weak!` does.
fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `name` is NUL-terminated; RTLD_DEFAULT searches the global symbol scope.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!sym.is_null()).then_some(sym)
}

fn addchdir_fn() -> Option<AddChdirFn> {
    static FN: OnceLock<Option<AddChdirFn>> = OnceLock::new();
    *FN.get_or_init(|| {
        lookup(c"posix_spawn_file_actions_addchdir_np").map(|sym| {
            // SAFETY: glibc and musl declare this symbol with exactly the `AddChdirFn` signature.
            unsafe { mem::transmute::<*mut c_void, AddChdirFn>(sym) }
        })
    })
}

fn addclosefrom_fn() -> Option<AddClosefromFn> {
    static FN: OnceLock<Option<AddClosefromFn>> = OnceLock::new();
    *FN.get_or_init(|| {
        lookup(c"posix_spawn_file_actions_addclosefrom_np").map(|sym| {
            // SAFETY: glibc declares this symbol with exactly the `AddClosefromFn` signature.
            unsafe { mem::transmute::<*mut c_void, AddClosefromFn>(sym) }
        })
    })
}

pub(crate) fn posix_spawn_support() -> PosixSpawnSupport {
    PosixSpawnSupport { chdir: addchdir_fn().is_some(), closefrom: addclosefrom_fn().is_some() }
}

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
pub(crate) fn posix_spawn(exec: &Exec<'_>) -> Result<Pid, SpawnFailure> {
    let setup = SpawnFailure::at(SpawnStep::Setup);
    let mut actions = FileActions::new().map_err(setup)?;
    for (target, fd) in (0..).zip(exec.stdio) {
        if let Some(fd) = fd {
            debug_assert!(fd.as_raw_fd() > 2, "stdio sources must not collide with 0, 1, 2");
            actions.add_dup2(fd.as_raw_fd(), target).map_err(SpawnFailure::at(SpawnStep::Stdio))?;
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

    let mut attr = SpawnAttr::new().map_err(setup)?;
    attr.set_flags(libc::POSIX_SPAWN_SETPGROUP | libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF)
        .map_err(setup)?;
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

    // SAFETY: setpgid(0, 0) puts the calling process in a new group; no memory is passed.
    if unsafe { libc::setpgid(0, 0) } == -1 {
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
    // including the signals glibc reserves, which its `sigaction` refuses to touch.
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

/// `fd` moved to a number ≥ 3 if it is 0, 1 or 2 (only possible when the host closed its
/// stdio). The copy is close-on-exec, as every fd this crate opens.
pub(crate) fn above_stdio(fd: OwnedFd) -> Result<OwnedFd, Errno> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    let fd_num = cvt(nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?)?;
    // SAFETY: F_DUPFD_CLOEXEC just returned this new descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd_num) })
}

/// The raw status and resource usage of a reaped child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawExit {
    /// The `wait` status word.
    pub(crate) status: c_int,
    pub(crate) user_time: Duration,
    pub(crate) system_time: Duration,
    /// `ru_maxrss`, in KiB on Linux.
    pub(crate) max_rss_kib: u64,
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::new(secs, micros.saturating_mul(1000))
}

/// Reaps `pid` if it has exited: [wait4](https://man7.org/linux/man-pages/man2/wait4.2.html)
/// with `WNOHANG`. `Ok(None)` means it is still running.
#[doc(alias = "wait4")]
pub(crate) fn wait4_nohang(pid: Pid) -> Result<Option<RawExit>, Errno> {
    let mut status: c_int = 0;
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: `status` and `usage` are valid out-parameters for the duration of the call.
        let ret = unsafe { libc::wait4(pid.as_raw(), &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
        match ret {
            -1 if Errno::last() == Errno::EINTR => {}
            -1 => return Err(Errno::last()),
            0 => return Ok(None),
            _ => break,
        }
    }
    // SAFETY: the buffer was zero-initialised and wait4 filled it in on success.
    let usage = unsafe { usage.assume_init() };
    Ok(Some(RawExit {
        status,
        user_time: timeval(usage.ru_utime),
        system_time: timeval(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }))
}

/// Writes to a pipe without letting a closed reader raise `SIGPIPE` in the host.
///
/// `SIGPIPE` is blocked in the calling thread around the `write`; a `SIGPIPE` that the write
/// raised is then consumed with `sigtimedwait`. If the caller already blocks `SIGPIPE`, nothing
/// changes and the caller keeps handling it.
pub(crate) fn write_no_sigpipe(fd: BorrowedFd<'_>, buf: &[u8]) -> Result<usize, Errno> {
    let pipe_set = SigSet::from(Signal::SIGPIPE);
    let mut old = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&pipe_set), Some(&mut old))?;
    let result = loop {
        match nix::unistd::write(fd, buf) {
            Err(Errno::EINTR) => {}
            other => break other,
        }
    };
    if !old.contains(Signal::SIGPIPE) {
        if result == Err(Errno::EPIPE) {
            let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: `pipe_set` and `zero` are valid; no siginfo is wanted. This consumes the
            // SIGPIPE our write raised (it is pending on this thread, where it is blocked).
            unsafe { libc::sigtimedwait(pipe_set.as_ref(), ptr::null_mut(), &zero) };
        }
        pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None)?;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cstring_array_is_null_terminated() {
        let mut array = CStringArray::with_capacity(2);
        array.push(c"a".to_owned());
        array.push(c"bc".to_owned());
        assert_eq!(array.ptrs.len(), 3);
        assert!(array.ptrs[2].is_null());
        // SAFETY: the pointers come from `array`, which is alive.
        let second = unsafe { CStr::from_ptr(array.ptrs[1]) };
        assert_eq!(second, c"bc");
        assert_eq!(array.iter().count(), 2);
    }

    #[test]
    fn this_glibc_supports_chdir_and_closefrom() {
        // The development and CI machines run glibc ≥ 2.34; if this fails, posix_spawn falls
        // back to fork-exec for every request.
        assert_eq!(posix_spawn_support(), PosixSpawnSupport { chdir: true, closefrom: true });
    }

    #[test]
    fn write_to_a_closed_pipe_is_epipe_not_a_signal() {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        drop(read);
        let before = SigSet::thread_get_mask().unwrap();
        assert_eq!(write_no_sigpipe(std::os::fd::AsFd::as_fd(&write), b"x"), Err(Errno::EPIPE));
        assert_eq!(SigSet::thread_get_mask().unwrap(), before);
    }
}

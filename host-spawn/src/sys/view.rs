//! The processes behind a child view (see `sandbox::view`): the raw system calls that make a
//! set of namespaces, fill the mount namespace, and start children inside them.
//!
//! Two processes share the host's memory (`CLONE_VM`) and run only async-signal-safe calls on
//! data prepared before they were created, on stacks of their own:
//!
//! - **init**, made with new user, mount, PID and IPC namespaces: pid 1 of the view. It
//!   makes the mount namespace the children see (everything read-only, the writable grants
//!   writable again, a `/proc` of the PID namespace, the children's temporary directory over
//!   `/tmp`), then reaps the orphans that are reparented to it. When it dies the kernel kills
//!   every process in the view.
//! - the **starter**, made with the host's descriptor table (`CLONE_FILES`), which joins init's
//!   namespaces and, on each request, starts a child with
//!   `clone(CLONE_VM | CLONE_VFORK | CLONE_PARENT)`: the child is the host's child (the host
//!   waits for it as for any other) but lives in the view. Requests and replies pass through a
//!   futex word in shared memory.
//!
//! Both die with the thread that made them (`PR_SET_PDEATHSIG`), and so, with init, does
//! everything in the view. The three share one thread-local block (no `CLONE_SETTLS`), so the
//! loops that run alongside the host use system calls that leave `errno` alone.

use std::ffi::{CString, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

use nix::errno::Errno;
use nix::unistd::Pid;

use super::child_setup::{ChildPlan, child_exec, unpack};
use super::stack::Stack;
use crate::spawn_step::SpawnStep;

/// A mount the view makes, in the order given (parents before what lies beneath them).
pub(crate) struct ViewMount {
    /// The canonical host path, NUL-terminated (init cuts a copy of it on its own stack to make
    /// the missing directories of a mount point under the `/tmp` cover).
    path: Box<[u8]>,
    kind: MountKind,
    /// The detached copy of the host's tree at `path`, taken before the view is made read-only.
    tree: AtomicI32,
}

/// What is mounted at a [`ViewMount`]'s path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MountKind {
    /// The host's tree at the path, read-only.
    Read,
    /// The host's tree at the path, as writable as on the host.
    Write,
    /// The children's temporary directory (the path), mounted over `/tmp`.
    Tmp,
    /// A new `/proc` of the view's PID namespace.
    Proc,
}

impl ViewMount {
    /// What is mounted.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> MountKind {
        self.kind
    }

    pub(crate) fn new(path: &std::path::Path, kind: MountKind) -> Self {
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(path.as_os_str().as_bytes()).unwrap_or_default();
        Self { path: c.into_bytes_with_nul().into_boxed_slice(), kind, tree: AtomicI32::new(-1) }
    }
}

/// Everything init reads, prepared before it exists.
pub(crate) struct ViewPlan {
    pub(crate) mounts: Vec<ViewMount>,
    /// Whether the whole tree is made read-only first (not when `/` itself is writable).
    pub(crate) read_only: bool,
    /// The children's seccomp filter, which the starter installs on itself once it has joined
    /// the namespaces: every child inherits it at `clone`, and installs none of its own unless
    /// it needs a stricter one.
    pub(crate) filter: Vec<libc::sock_filter>,
}

/// The step of making the view that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ViewStep {
    /// `clone` with new user, mount, PID and IPC namespaces.
    Namespaces,
    /// Writing the user namespace's id maps.
    IdMaps,
    /// Making every mount private to the view.
    Private,
    /// Copying a granted tree (`open_tree`).
    Copy,
    /// Making the tree read-only (`mount_setattr`).
    ReadOnly,
    /// Mounting a new `/proc`.
    Proc,
    /// Making a mount point, or mounting a copy there (`move_mount`).
    Attach,
    /// Starting the starter, its joining the namespaces (`setns`), or its installing the
    /// children's filter.
    Starter,
    /// init ended before the view was made.
    Ended,
}

impl ViewStep {
    const ALL: [ViewStep; 9] = [
        Self::Namespaces,
        Self::IdMaps,
        Self::Private,
        Self::Copy,
        Self::ReadOnly,
        Self::Proc,
        Self::Attach,
        Self::Starter,
        Self::Ended,
    ];

    fn code(self) -> u32 {
        Self::ALL.iter().position(|&s| s == self).map_or(0, |i| i as u32)
    }

    fn from_code(code: u32) -> Self {
        Self::ALL.get(code as usize).copied().unwrap_or(Self::Namespaces)
    }
}

/// The failed step of making the view, and the path it concerned (if a mount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViewFailure {
    pub(crate) step: ViewStep,
    pub(crate) errno: Errno,
    pub(crate) path: Option<std::path::PathBuf>,
}

// The words shared with init and the starter.
const INIT_WAIT: u32 = 1;
const INIT_GO: u32 = 2;
const INIT_READY: u32 = 3;
const INIT_FAILED: u32 = 4;

// 0: the starter is gone (`CLONE_CHILD_CLEARTID` stores 0 when it exits).
const STARTER_IDLE: u32 = 1;
const STARTER_REQUEST: u32 = 2;
const STARTER_DONE: u32 = 3;
const STARTER_FAILED: u32 = 4;
/// Made, not yet in the namespaces.
const STARTER_JOINING: u32 = 5;

/// The memory init and the starter share with the host, at a fixed address (boxed).
struct Shared {
    init_state: AtomicU32,
    /// init's failure: `(step, errno, index of the mount + 1)`.
    init_failure: AtomicU64,
    starter_state: AtomicU32,
    starter_failure: AtomicU64,
    /// The request: a `ChildPlan` on the requesting thread's stack.
    request: std::sync::atomic::AtomicPtr<c_void>,
    /// The reply: the child's pid, or `-errno` of `clone`.
    reply: AtomicI64,
    /// The child of the request in flight, stored by the kernel before the child runs
    /// (`CLONE_PARENT_SETTID`), 0 before: the requester ends it should the starter die.
    child: AtomicI32,
    /// The namespaces' descriptors, for the starter's `setns` (in the shared table).
    ns_fds: [AtomicI32; 4],
    parent: AtomicI32,
}

/// Init and the starter of one view; dropping it kills both (and with init the whole view)
/// and reaps them.
pub(crate) struct ViewProcesses {
    /// Boxed and leaked until drop: init and the starter read it through pointers for their
    /// whole life, so the host reaches it only through shared references too.
    shared: ptr::NonNull<Shared>,
    plan: ptr::NonNull<ViewPlan>,
    init: Pid,
    starter: Pid,
    /// Stacks of init, the starter and the children the starter starts: unmapped only after
    /// both were reaped.
    stacks: [Stack; 3],
    /// Held by a request: the starter takes one at a time.
    requests: std::sync::Mutex<()>,
}

/// A system call that leaves `errno` alone: init, the starter and the host's view thread
/// share one thread-local block (the processes are made without `CLONE_SETTLS`), so a call
/// that sets `errno` in one could change what another reads after its own failed call.
/// Returns the kernel's result: a negative error number on failure.
///
/// # Safety
///
/// The arguments must be valid for system call `nr`.
#[cfg(target_arch = "x86_64")]
unsafe fn raw_syscall(nr: libc::c_long, args: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: the caller's; `syscall` clobbers rcx and r11, declared.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") args[0],
            in("rsi") args[1],
            in("rdx") args[2],
            in("r10") args[3],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// See the `x86_64` version.
///
/// # Safety
///
/// The arguments must be valid for system call `nr`.
#[cfg(target_arch = "aarch64")]
unsafe fn raw_syscall(nr: libc::c_long, args: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY: the caller's.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") args[0] as isize => ret,
            in("x1") args[1],
            in("x2") args[2],
            in("x3") args[3],
            options(nostack),
        );
    }
    ret
}

fn futex_wait(word: &AtomicU32, expected: u32) {
    // Shared (not private) futex operations: the kernel's `CLONE_CHILD_CLEARTID` wake is a
    // shared one.
    let args = [word.as_ptr() as usize, libc::FUTEX_WAIT as usize, expected as usize, 0];
    // SAFETY: `word` is a valid, aligned u32 for the call; no timeout.
    unsafe { raw_syscall(libc::SYS_futex, args) };
}

fn futex_wake(word: &AtomicU32) {
    let args = [word.as_ptr() as usize, libc::FUTEX_WAKE as usize, i32::MAX as usize, 0];
    // SAFETY: as in `futex_wait`; wakes every waiter.
    unsafe { raw_syscall(libc::SYS_futex, args) };
}

/// Waits until `word` is 0: the kernel's mark that the process made with it as its
/// `CLONE_CHILD_CLEARTID` word has released the shared memory.
fn wait_change_to_zero(word: &AtomicU32) {
    loop {
        let now = word.load(Ordering::Acquire);
        if now == 0 {
            return;
        }
        futex_wait(word, now);
    }
}

/// Waits until `word` leaves `from`, and returns its new value.
fn wait_change(word: &AtomicU32, from: u32) -> u32 {
    loop {
        let now = word.load(Ordering::Acquire);
        if now != from {
            return now;
        }
        futex_wait(word, from);
    }
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
const MOUNT_ATTR_RDONLY: u64 = 1;

fn set_read_only(dirfd: c_int, path: *const libc::c_char, flags: libc::c_uint) -> Result<(), c_int> {
    let attr = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: `path` is NUL-terminated; `attr` is a valid `struct mount_attr` of the size given.
    let ret = unsafe { libc::syscall(libc::SYS_mount_setattr, dirfd, path, flags, &attr, size_of::<MountAttr>()) };
    if ret == -1 { Err(Errno::last_raw()) } else { Ok(()) }
}

/// Makes the mount namespace init is in: returns `(step, errno, mount index + 1)` on failure.
fn make_mounts(plan: &ViewPlan) -> Result<(), (ViewStep, c_int, usize)> {
    let fail = |step, at: usize| (step, Errno::last_raw(), at);
    // SAFETY: NUL-terminated literals; nothing else is passed.
    if unsafe { libc::mount(ptr::null(), c"/".as_ptr(), ptr::null(), libc::MS_REC | libc::MS_PRIVATE, ptr::null()) }
        == -1
    {
        return Err(fail(ViewStep::Private, 0));
    }
    for (i, mount) in plan.mounts.iter().enumerate() {
        if !matches!(mount.kind, MountKind::Read | MountKind::Write | MountKind::Tmp) {
            continue;
        }
        let path = mount.path.as_ptr().cast::<libc::c_char>();
        // SAFETY: `path` is NUL-terminated; the result is a new descriptor or -1.
        let tree = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                path,
                OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
            )
        };
        if tree == -1 {
            return Err(fail(ViewStep::Copy, i + 1));
        }
        let tree = tree as c_int;
        mount.tree.store(tree, Ordering::Relaxed);
        if mount.kind == MountKind::Read {
            set_read_only(tree, c"".as_ptr(), libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE)
                .map_err(|errno| (ViewStep::ReadOnly, errno, i + 1))?;
        }
    }
    if plan.read_only {
        set_read_only(libc::AT_FDCWD, c"/".as_ptr(), AT_RECURSIVE).map_err(|errno| (ViewStep::ReadOnly, errno, 0))?;
    }
    for (i, mount) in plan.mounts.iter().enumerate() {
        let path = mount.path.as_ptr().cast::<libc::c_char>();
        if mount.kind == MountKind::Proc {
            // Read-only, as Landlock grants it: no write to `/proc/sys`, `/proc/sysrq-trigger` or
            // a process's files, whatever a child's identity (uid 0 maps to the host's root
            // where wrt is root).
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
            // `hidepid=ptraceable`: a process a child may not inspect, whatever its groups, is
            // not listed at all: pid 1 (which shares wrt's memory), and the children of the
            // guest outside its own tree (each is in a Landlock domain of its own).
            let data = c"hidepid=ptraceable".as_ptr().cast::<c_void>();
            // SAFETY: NUL-terminated strings, the options a NUL-terminated string too.
            if unsafe { libc::mount(c"proc".as_ptr(), path, c"proc".as_ptr(), flags, data) } == -1 {
                return Err(fail(ViewStep::Proc, i + 1));
            }
            continue;
        }
        let target: *const libc::c_char = if mount.kind == MountKind::Tmp { c"/tmp".as_ptr() } else { path };
        make_mount_point(mount, target).map_err(|errno| (ViewStep::Attach, errno, i + 1))?;
        let tree = mount.tree.load(Ordering::Relaxed);
        // SAFETY: `tree` is the detached tree made above; `target` is NUL-terminated.
        let ret = unsafe {
            libc::syscall(libc::SYS_move_mount, tree, c"".as_ptr(), libc::AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH)
        };
        if ret == -1 {
            return Err(fail(ViewStep::Attach, i + 1));
        }
        // SAFETY: the descriptor is ours and attached now.
        unsafe { libc::close(tree) };
    }
    Ok(())
}

/// Makes `target` exist when it does not (a granted path under the `/tmp` cover, which is the
/// children's own directory): its missing directories, then a directory or an empty file, as
/// the copied tree is one.
fn make_mount_point(mount: &ViewMount, target: *const libc::c_char) -> Result<(), c_int> {
    // SAFETY: a zeroed `stat` is a valid value of the plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `target` is NUL-terminated; `st` is a valid buffer.
    if unsafe { libc::lstat(target, &mut st) } == 0 {
        return Ok(());
    }
    // The path, cut at each `/` in turn, in a buffer of init's own stack.
    let mut buf = [0u8; libc::PATH_MAX as usize];
    let path = &mount.path[..];
    if path.len() > buf.len() {
        return Err(libc::ENAMETOOLONG);
    }
    buf[..path.len()].copy_from_slice(path);
    let len = path.len() - 1;
    for at in 1..len {
        if buf[at] == b'/' {
            buf[at] = 0;
            // SAFETY: the prefix is NUL-terminated now; an existing directory is fine.
            let ret = unsafe { libc::mkdir(buf.as_ptr().cast(), 0o700) };
            let errno = Errno::last_raw();
            // A directory made here (in the children's `/tmp`) is a mount of itself, so that
            // no child can move or remove it (`EBUSY`) and plant another at the grant's path.
            // SAFETY: NUL-terminated paths; no file system type or data.
            let pinned = ret == -1
                || unsafe {
                    libc::mount(buf.as_ptr().cast(), buf.as_ptr().cast(), ptr::null(), libc::MS_BIND, ptr::null())
                } == 0;
            let bind_errno = Errno::last_raw();
            buf[at] = b'/';
            if ret == -1 && errno != libc::EEXIST {
                return Err(errno);
            }
            if !pinned {
                return Err(bind_errno);
            }
        }
    }
    // SAFETY: a zeroed `stat` is a valid value of the plain C struct.
    let mut tree_st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is the detached tree; `tree_st` is a valid buffer.
    if unsafe { libc::fstat(mount.tree.load(Ordering::Relaxed), &mut tree_st) } == -1 {
        return Err(Errno::last_raw());
    }
    let ret = if tree_st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        // SAFETY: NUL-terminated path.
        unsafe { libc::mkdir(buf.as_ptr().cast(), 0o700) }
    } else {
        // SAFETY: NUL-terminated path; the descriptor is closed at once.
        let fd = unsafe { libc::open(buf.as_ptr().cast(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o600) };
        if fd >= 0 {
            // SAFETY: the descriptor just opened.
            unsafe { libc::close(fd) };
            0
        } else {
            -1
        }
    };
    if ret == -1 && Errno::last_raw() != libc::EEXIST { Err(Errno::last_raw()) } else { Ok(()) }
}

/// Asks for `SIGKILL` when the thread that made the calling process ends.
fn die_with_parent() -> bool {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == 0 }
}

extern "C" fn init_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `ViewProcesses` being made, alive (and unmoved: its parts are boxed)
    // until this process is reaped.
    let (shared, plan) = unsafe { *arg.cast::<(&Shared, &ViewPlan)>() };
    // The view keeps nothing of the host's open: its descriptors stay the host's.
    // SAFETY: close_range on integers only.
    unsafe { libc::syscall(libc::SYS_close_range, 0, u32::MAX, 0) };
    // init cannot tell whether its parent ended before this took effect (`getppid` is 0 for a
    // parent outside its PID namespace); the host waits for it, and ends it if it fails.
    if !die_with_parent() {
        shared.init_failure.store(pack_view(ViewStep::Ended, Errno::last_raw()), Ordering::Relaxed);
        shared.init_state.store(INIT_FAILED, Ordering::Release);
        futex_wake(&shared.init_state);
        // SAFETY: ends this process only.
        unsafe { libc::_exit(1) };
    }
    wait_change(&shared.init_state, INIT_WAIT);
    match make_mounts(plan) {
        Ok(()) => shared.init_state.store(INIT_READY, Ordering::Release),
        Err((step, errno, at)) => {
            let word = (u64::from(step.code()) << 48) | ((at as u64 & 0xFFFF) << 32) | u64::from(errno.cast_unsigned());
            shared.init_failure.store(word, Ordering::Relaxed);
            shared.init_state.store(INIT_FAILED, Ordering::Release);
            futex_wake(&shared.init_state);
            // SAFETY: ends this process (and with it the namespaces).
            unsafe { libc::_exit(1) };
        }
    }
    futex_wake(&shared.init_state);
    // SAFETY: prctl with a NUL-terminated name.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"wrt-view".as_ptr(), 0, 0, 0) };
    // Every signal is blocked (inherited from the view's thread) and stays pending until taken
    // here, any signal (a child may send any), so that none piles up.
    let every: u64 = u64::MAX;
    loop {
        let wait = [usize::MAX, 0, (libc::WNOHANG | libc::__WALL) as usize, 0];
        // SAFETY: wait4(-1, NULL, flags, NULL): reaps any child, no status wanted.
        while unsafe { raw_syscall(libc::SYS_wait4, wait) } > 0 {}
        let take = [ptr::from_ref(&every) as usize, 0, 0, size_of::<u64>()];
        // SAFETY: rt_sigtimedwait(set, NULL, NULL, 8): `every` is a valid kernel signal set.
        unsafe { raw_syscall(libc::SYS_rt_sigtimedwait, take) };
    }
}

extern "C" fn starter_entry(arg: *mut c_void) -> c_int {
    // SAFETY: as for `init_entry`.
    let (shared, child_stack, filter) = unsafe { *arg.cast::<(&Shared, *mut c_void, &libc::sock_fprog)>() };
    let fail = |step: ViewStep| -> ! {
        shared.starter_failure.store(pack_view(step, Errno::last_raw()), Ordering::Relaxed);
        shared.starter_state.store(STARTER_FAILED, Ordering::Release);
        futex_wake(&shared.starter_state);
        // SAFETY: ends this process only.
        unsafe { libc::_exit(1) }
    };
    // SAFETY: getppid takes no argument.
    if !die_with_parent() || unsafe { libc::getppid() } != shared.parent.load(Ordering::Relaxed) {
        fail(ViewStep::Starter);
    }
    let kinds = [libc::CLONE_NEWUSER, libc::CLONE_NEWNS, libc::CLONE_NEWIPC, libc::CLONE_NEWPID];
    for (fd, kind) in shared.ns_fds.iter().zip(kinds) {
        // SAFETY: the descriptor is open in the shared table; setns takes integers.
        if unsafe { libc::setns(fd.load(Ordering::Relaxed), kind) } == -1 {
            fail(ViewStep::Starter);
        }
    }
    if super::imp::set_no_new_privs().is_err() || super::seccomp::install(filter).is_err() {
        fail(ViewStep::Starter);
    }
    // Every disposition to its default once, here, where every signal stays blocked: each
    // child inherits them at `clone` (no `CLONE_SIGHAND`) and need not reset them itself.
    if super::child_setup::reset_dispositions(libc::SIGRTMAX()).is_err() {
        fail(ViewStep::Starter);
    }
    shared.starter_state.store(STARTER_IDLE, Ordering::Release);
    futex_wake(&shared.starter_state);
    loop {
        let now = shared.starter_state.load(Ordering::Acquire);
        if now != STARTER_REQUEST {
            futex_wait(&shared.starter_state, now);
            continue;
        }
        let plan = shared.request.load(Ordering::Acquire);
        // SAFETY: the child runs `child_entry` on the starter's child stack, which nothing else
        // uses while this process is suspended (`CLONE_VFORK`), with the requester's plan,
        // which outlives it (the requester waits for the reply). `CLONE_PARENT` makes it the
        // host's child.
        let pid = unsafe {
            libc::clone(
                child_entry,
                child_stack,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT | libc::CLONE_PARENT_SETTID | libc::SIGCHLD,
                plan,
                shared.child.as_ptr(),
            )
        };
        let reply = if pid == -1 { -i64::from(Errno::last_raw()) } else { i64::from(pid) };
        shared.reply.store(reply, Ordering::Relaxed);
        shared.starter_state.store(STARTER_DONE, Ordering::Release);
        futex_wake(&shared.starter_state);
    }
}

extern "C" fn child_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the requester's `ChildPlan`, alive until the child has executed or
    // exited (the requester waits for the starter's reply, which comes after).
    let plan = unsafe { &*arg.cast::<ChildPlan<'_>>() };
    child_exec(plan)
}

fn pack_view(step: ViewStep, errno: c_int) -> u64 {
    (u64::from(step.code()) << 48) | u64::from(errno.cast_unsigned())
}

fn unpack_view(word: u64) -> (ViewStep, Errno, usize) {
    let step = ViewStep::from_code((word >> 48) as u32);
    let at = ((word >> 32) & 0xFFFF) as usize;
    (step, Errno::from_raw((word & 0xFFFF_FFFF) as u32 as i32), at)
}

/// The calling thread with every signal blocked while it runs `f`, so that no host handler
/// runs in a process made meanwhile (they share the host's memory, and inherit the mask).
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
    let mut old = SigSet::empty();
    let blocked = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), Some(&mut old)).is_ok();
    let out = f();
    if blocked {
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    }
    out
}

/// Runs a `clone` and returns its result: the caller's hook around making a process of the
/// view (the spawn gate held, the new pid recorded).
pub(crate) type Around<'a> = &'a dyn Fn(&mut dyn FnMut() -> libc::pid_t) -> libc::pid_t;

impl ViewProcesses {
    /// Makes the view. The calling thread must outlive it (both processes die with it) and
    /// must not run under a seccomp filter that refuses namespaces. `around` runs each `clone`.
    pub(crate) fn create(plan: ViewPlan, around: Around<'_>) -> Result<Self, ViewFailure> {
        let plan = ptr::NonNull::from(Box::leak(Box::new(plan)));
        let shared = ptr::NonNull::from(Box::leak(Box::new(Shared {
            init_state: AtomicU32::new(INIT_WAIT),
            init_failure: AtomicU64::new(0),
            starter_state: AtomicU32::new(STARTER_JOINING),
            starter_failure: AtomicU64::new(0),
            request: std::sync::atomic::AtomicPtr::new(ptr::null_mut()),
            reply: AtomicI64::new(0),
            child: AtomicI32::new(0),
            ns_fds: [const { AtomicI32::new(-1) }; 4],
            // The parent the starter sees: this thread's process.
            parent: AtomicI32::new(nix::unistd::getpid().as_raw()),
        })));
        let stacks = match (Stack::new(), Stack::new(), Stack::new()) {
            (Ok(a), Ok(b), Ok(c)) => [a, b, c],
            (Err(errno), ..) | (_, Err(errno), _) | (.., Err(errno)) => {
                // SAFETY: leaked just above, shared with no process yet.
                unsafe { drop((Box::from_raw(plan.as_ptr()), Box::from_raw(shared.as_ptr()))) };
                return Err(ViewFailure { step: ViewStep::Namespaces, errno, path: None });
            }
        };
        let mut made = Self {
            shared,
            plan,
            init: Pid::from_raw(0),
            starter: Pid::from_raw(0),
            stacks,
            requests: std::sync::Mutex::new(()),
        };
        match made.start_processes(around) {
            Ok(()) => Ok(made),
            Err(failure) => Err(failure),
        }
    }

    fn shared(&self) -> &Shared {
        // SAFETY: leaked in `create`, freed only in `drop`.
        unsafe { self.shared.as_ref() }
    }

    fn plan(&self) -> &ViewPlan {
        // SAFETY: as for `shared`.
        unsafe { self.plan.as_ref() }
    }

    /// Starts init, waits until it has made the view, then starts the starter in its
    /// namespaces. On failure, `self` (dropped by the caller) ends what was started.
    fn start_processes(&mut self, around: Around<'_>) -> Result<(), ViewFailure> {
        // SAFETY: leaked in `create`, freed only in `drop` (after this returns).
        let (shared, plan): (&Shared, &ViewPlan) = unsafe { (self.shared.as_ref(), self.plan.as_ref()) };
        let init_arg: (&Shared, &ViewPlan) = (shared, plan);
        let flags = libc::CLONE_VM
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_CHILD_CLEARTID
            | libc::SIGCHLD;
        let init_top = self.stacks[0].top();
        let init_ctid = shared.init_state.as_ptr();
        // SAFETY: init runs `init_entry` on a stack of its own with `init_arg`, which it copies
        // at once and whose parts live until it is reaped (in `drop`); the kernel stores 0 into
        // `init_state` when it exits (`CLONE_CHILD_CLEARTID`). It makes only async-signal-safe
        // calls and never returns.
        let init = with_signals_blocked(|| {
            // SAFETY: see above.
            around(&mut || unsafe {
                libc::clone(
                    init_entry,
                    init_top,
                    flags,
                    ptr::from_ref(&init_arg).cast_mut().cast(),
                    ptr::null_mut::<libc::pid_t>(),
                    ptr::null_mut::<c_void>(),
                    init_ctid,
                )
            })
        });
        if init == -1 {
            return Err(ViewFailure { step: ViewStep::Namespaces, errno: Errno::last(), path: None });
        }
        self.init = Pid::from_raw(init);
        if let Err(errno) = write_id_maps(self.init) {
            // init may not have read `init_arg` yet: end it while `init_arg` lives.
            self.end();
            return Err(ViewFailure { step: ViewStep::IdMaps, errno, path: None });
        }
        // Unless init already failed (or died): then the word says so, and stays.
        let now = match shared.init_state.compare_exchange(INIT_WAIT, INIT_GO, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                futex_wake(&shared.init_state);
                wait_change(&shared.init_state, INIT_GO)
            }
            Err(now) => now,
        };
        if now != INIT_READY {
            // A failure is written before init exits; the kernel's 0 at its exit may come
            // first to this thread's eyes, but not in place of the failure word.
            let failure = shared.init_failure.load(Ordering::Acquire);
            if failure != 0 {
                let (step, errno, at) = unpack_view(failure);
                return Err(self.failure_at(step, errno, at));
            }
            // init ended (killed, or crashed) without a word.
            return Err(ViewFailure { step: ViewStep::Ended, errno: Errno::ESRCH, path: None });
        }

        let opened = self.open_namespaces();
        let started = opened.and_then(|()| self.start_starter(around));
        for fd in &shared.ns_fds {
            let fd = fd.swap(-1, Ordering::Relaxed);
            if fd >= 0 {
                // SAFETY: a descriptor opened by `open_namespaces`, closed once.
                unsafe { libc::close(fd) };
            }
        }
        started.map_err(|errno| ViewFailure { step: ViewStep::Starter, errno, path: None })
    }

    fn failure_at(&self, step: ViewStep, errno: Errno, at: usize) -> ViewFailure {
        use std::os::unix::ffi::OsStrExt;
        let path = at
            .checked_sub(1)
            .and_then(|i| self.plan().mounts.get(i))
            .map(|m| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&m.path[..m.path.len() - 1])));
        ViewFailure { step, errno, path }
    }

    /// Opens init's namespaces for the starter's `setns`.
    fn open_namespaces(&self) -> Result<(), Errno> {
        for (slot, name) in self.shared().ns_fds.iter().zip(["user", "mnt", "ipc", "pid"]) {
            let path = CString::new(format!("/proc/{}/ns/{name}", self.init)).unwrap_or_default();
            // SAFETY: NUL-terminated path.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd == -1 {
                return Err(Errno::last());
            }
            slot.store(fd, Ordering::Relaxed);
        }
        Ok(())
    }

    fn start_starter(&mut self, around: Around<'_>) -> Result<(), Errno> {
        // SAFETY: leaked in `create`, freed only in `drop`.
        let (shared, plan): (&Shared, &ViewPlan) = unsafe { (self.shared.as_ref(), self.plan.as_ref()) };
        let filter = super::seccomp::fprog(&plan.filter);
        let starter_arg: (&Shared, *mut c_void, &libc::sock_fprog) = (shared, self.stacks[2].top(), &filter);
        let top = self.stacks[1].top();
        let ctid = shared.starter_state.as_ptr();
        // SAFETY: the starter runs `starter_entry` on a stack of its own with `starter_arg`
        // (copied at once; its parts live until it is reaped, `filter` until it has installed
        // it, which this thread waits for); the kernel stores 0 into the state word when it
        // exits (`CLONE_CHILD_CLEARTID`), a word that lives as long.
        let starter = with_signals_blocked(|| {
            // SAFETY: see above.
            around(&mut || unsafe {
                libc::clone(
                    starter_entry,
                    top,
                    libc::CLONE_VM | libc::CLONE_FILES | libc::CLONE_CHILD_CLEARTID | libc::SIGCHLD,
                    ptr::from_ref(&starter_arg).cast_mut().cast(),
                    ptr::null_mut::<libc::pid_t>(),
                    ptr::null_mut::<c_void>(),
                    ctid,
                )
            })
        });
        if starter == -1 {
            return Err(Errno::last());
        }
        self.starter = Pid::from_raw(starter);
        match wait_change(&shared.starter_state, STARTER_JOINING) {
            STARTER_IDLE => Ok(()),
            // Failed (or 0: exited, perhaps after writing why).
            _ => match shared.starter_failure.load(Ordering::Acquire) {
                0 => Err(Errno::ESRCH),
                failure => Err(unpack_view(failure).1),
            },
        }
    }

    /// init's pid, as the host sees it.
    pub(crate) fn init(&self) -> Pid {
        self.init
    }

    /// The starter's pid.
    pub(crate) fn starter(&self) -> Pid {
        self.starter
    }

    /// Starts the child of `plan` in the view, and returns its pid or the step that failed.
    pub(super) fn start(&self, plan: &ChildPlan<'_>, failure: &AtomicU64) -> Result<Pid, (SpawnStep, Errno)> {
        let _one = self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let shared = self.shared();
        let state = &shared.starter_state;
        shared.child.store(0, Ordering::Relaxed);
        shared.request.store(ptr::from_ref(plan).cast_mut().cast(), Ordering::Release);
        if state.compare_exchange(STARTER_IDLE, STARTER_REQUEST, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err((SpawnStep::Clone, Errno::ESRCH));
        }
        futex_wake(state);
        if wait_change(state, STARTER_REQUEST) != STARTER_DONE {
            // The starter died (the word is 0). A child it made may still run on `plan` and
            // this thread's stack: end it before they go.
            let child = shared.child.load(Ordering::Acquire);
            if child > 0 {
                let child = Pid::from_raw(child);
                let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
                while let Err(Errno::EINTR) = nix::sys::wait::waitpid(child, Some(nix::sys::wait::WaitPidFlag::__WALL))
                {
                }
            }
            return Err((SpawnStep::Clone, Errno::ESRCH));
        }
        let reply = shared.reply.load(Ordering::Relaxed);
        // Back to idle, unless the starter died meanwhile (then the word stays 0).
        let _ = state.compare_exchange(STARTER_DONE, STARTER_IDLE, Ordering::AcqRel, Ordering::Acquire);
        if reply < 0 {
            return Err((SpawnStep::Clone, Errno::from_raw((-reply) as i32)));
        }
        let pid = Pid::from_raw(reply as i32);
        match unpack(failure.load(Ordering::Relaxed)) {
            None => Ok(pid),
            Some((step, errno)) => {
                super::fork_exec::reap_failed(pid);
                Err((step, errno))
            }
        }
    }

    /// Kills init (and with it every process in the view) and the starter, and reaps both.
    ///
    /// Once the kernel has stored 0 into a process's word (`CLONE_CHILD_CLEARTID`, when it
    /// releases the shared memory at exit) the process touches none of it again, so the memory
    /// may be freed even if it is not reaped yet: init is reaped only once every process of
    /// its PID namespace is, and a child of the view may be a zombie the host has not waited
    /// for (a `Child` kept after its spawner). Reaping is tried for a while; a zombie left is
    /// the process-wide reaper's, or goes with wrt.
    fn end(&mut self) {
        // SAFETY: leaked in `create`, freed only in `drop`, after this.
        let shared: &Shared = unsafe { self.shared.as_ref() };
        for (pid, word) in [(self.init, &shared.init_state), (self.starter, &shared.starter_state)] {
            if pid.as_raw() <= 0 {
                continue;
            }
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            wait_change_to_zero(word);
            let until = std::time::Instant::now() + std::time::Duration::from_millis(200);
            loop {
                match nix::sys::wait::waitpid(
                    pid,
                    Some(nix::sys::wait::WaitPidFlag::__WALL | nix::sys::wait::WaitPidFlag::WNOHANG),
                ) {
                    Ok(nix::sys::wait::WaitStatus::StillAlive) if std::time::Instant::now() < until => {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    Err(Errno::EINTR) => {}
                    _ => break,
                }
            }
        }
        self.init = Pid::from_raw(0);
        self.starter = Pid::from_raw(0);
    }
}

// SAFETY: the stacks are used only by init, the starter and the children the starter starts,
// never through `self`; the shared words are atomics; `start` takes one request at a time.
unsafe impl Send for ViewProcesses {}
// SAFETY: as for `Send`: `&self` gives only `start` (one request at a time) and the pids.
unsafe impl Sync for ViewProcesses {}

impl Drop for ViewProcesses {
    fn drop(&mut self) {
        self.end();
        // SAFETY: leaked in `create`; both processes that read them are reaped.
        unsafe { drop((Box::from_raw(self.plan.as_ptr()), Box::from_raw(self.shared.as_ptr()))) };
    }
}

/// Maps, in init's user namespace, the host's user and group to themselves: every id where the
/// host is root (which may map any), else its own only (with `setgroups` denied, as the kernel
/// requires of an unprivileged map).
fn write_id_maps(init: Pid) -> Result<(), Errno> {
    let write = |name: &str, text: &str| -> Result<(), Errno> {
        std::fs::write(format!("/proc/{init}/{name}"), text)
            .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
    };
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    if uid == 0 {
        // Every id this process's own namespace maps (all of them on a host; a rootless
        // container's ranges inside one).
        let own = |name: &str| {
            std::fs::read_to_string(format!("/proc/self/{name}"))
                .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
        };
        write("uid_map", &identity_of(&own("uid_map")?))?;
        write("gid_map", &identity_of(&own("gid_map")?))
    } else {
        write("setgroups", "deny")?;
        write("uid_map", &format!("{uid} {uid} 1"))?;
        write("gid_map", &format!("{gid} {gid} 1"))
    }
}

/// The map that gives each id of `own` (a `/proc/self/uid_map` or `gid_map`) to itself.
fn identity_of(own: &str) -> String {
    own.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (first, _, count) = (fields.next()?, fields.next()?, fields.next()?);
            Some(format!("{first} {first} {count}\n"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_map_keeps_each_range_of_the_own_namespace() {
        assert_eq!(identity_of("         0          0 4294967295\n"), "0 0 4294967295\n");
        assert_eq!(identity_of("0 1000 1\n1 100000 65536\n"), "0 0 1\n1 1 65536\n");
    }

    #[test]
    fn a_packed_view_failure_unpacks_to_itself() {
        for step in ViewStep::ALL {
            let (back, errno, at) = unpack_view(pack_view(step, libc::EPERM));
            assert_eq!((back, errno, at), (step, Errno::EPERM, 0));
        }
    }
}

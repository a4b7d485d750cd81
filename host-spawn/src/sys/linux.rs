//! Linux-only system calls: `pidfd_open`, `pidfd_send_signal`, `close_range`, `prctl`,
//! `getdents64` and a read-only `sigaction`.

use std::ffi::{c_int, c_long, c_uint, c_void};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// A pidfd for `pid`, see [pidfd_open(2)](https://man7.org/linux/man-pages/man2/pidfd_open.2.html).
/// It becomes readable when the process exits. Close-on-exec, like every fd this crate opens.
///
/// Linux ≥ 5.3; callers fall back to `waitid` polling on `ENOSYS`.
pub(crate) fn pidfd_open(pid: Pid) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags by value and touches none of our memory.
    let ret: c_long = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if ret == -1 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(ret).map_err(|_| io::Error::from(Errno::EBADF))?;
    // SAFETY: the kernel just returned `fd`; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Closes every fd in `first..=last`, see
/// [close_range(2)](https://man7.org/linux/man-pages/man2/close_range.2.html) (Linux ≥ 5.9).
/// Async-signal-safe: one system call.
pub(super) fn close_range(first: c_uint, last: c_uint) -> Result<(), Errno> {
    // SAFETY: close_range takes integers by value; closing fds the fork child does not use is
    // the point of the call.
    let ret = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0 as c_uint) };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// The size of the kernel's `sigset_t` (`_NSIG / 8`), as `rt_sigaction` wants it.
#[cfg(any(target_arch = "mips", target_arch = "mips32r6", target_arch = "mips64", target_arch = "mips64r6"))]
const KERNEL_SIGSET_SIZE: usize = 16;
#[cfg(not(any(target_arch = "mips", target_arch = "mips32r6", target_arch = "mips64", target_arch = "mips64r6")))]
const KERNEL_SIGSET_SIZE: usize = 8;

/// The kernel's `struct sigaction` with every field zero: handler `SIG_DFL`, no flags, no
/// restorer, empty mask, whatever the field order of the architecture. Larger than any
/// architecture's struct.
static DEFAULT_ACTION: [u64; 8] = [0; 8];

/// Sets `signal` to `SIG_DFL` with the raw
/// [rt_sigaction(2)](https://man7.org/linux/man-pages/man2/rt_sigaction.2.html) system call.
/// Unlike libc's `sigaction`, it also reaches the signals glibc reserves for itself (32, 33).
/// Async-signal-safe: one system call on static data.
pub(super) fn set_default_disposition(signal: c_int) -> Result<(), Errno> {
    // SAFETY: `DEFAULT_ACTION` is a valid, zeroed kernel `sigaction` that outlives the call
    // (the kernel reads at most its size); no old action is requested.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            signal,
            DEFAULT_ACTION.as_ptr(),
            ptr::null_mut::<c_void>(),
            KERNEL_SIGSET_SIZE,
        )
    };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// Sends `signal` to the process behind `pidfd`, see
/// [pidfd_send_signal(2)](https://man7.org/linux/man-pages/man2/pidfd_send_signal.2.html)
/// (Linux ≥ 5.1). Unlike `kill`, it can never reach a process that reused the pid.
pub(crate) fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: Signal) -> Result<(), Errno> {
    // SAFETY: pidfd_send_signal takes an fd and a signal number by value; a NULL siginfo asks
    // the kernel to fill it in as `kill` would; no memory of ours is passed.
    let ret = unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), signal as c_int, ptr::null::<c_void>(), 0)
    };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// Reads directory entries of `dir` into `buf` (`struct linux_dirent64` records), see
/// [getdents64(2)](https://man7.org/linux/man-pages/man2/getdents64.2.html); `Ok(0)` at the end
/// of the directory. Unlike `readdir`, it opens nothing and allocates nothing: the caller's
/// descriptor and buffer are all it uses.
pub(crate) fn getdents64(dir: BorrowedFd<'_>, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`, which is valid and
    // exclusively borrowed for the duration of the call.
    let ret = unsafe { libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
    if ret == -1 {
        return Err(Errno::last());
    }
    usize::try_from(ret).map_err(|_| Errno::EINVAL)
}

/// Asks the kernel to send `SIGKILL` to the calling process when its parent thread exits, see
/// [PR_SET_PDEATHSIG](https://man7.org/linux/man-pages/man2/PR_SET_PDEATHSIG.2const.html).
/// Async-signal-safe: one system call.
pub(super) fn set_parent_death_kill() -> Result<(), Errno> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes the signal by value; no memory is passed.
    let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// Gives up the calling process's controlling terminal without leaving its session, see
/// [TIOCNOTTY](https://man7.org/linux/man-pages/man2/TIOCNOTTY.2const.html): `Ok(true)` when it
/// has none now (it had none: `/dev/tty` is `ENXIO`; or it gave it up), `Ok(false)` when that
/// cannot be known here (no `/dev/tty` to open). For a process that leads no session (a new
/// child never does: a session leader's `TIOCNOTTY` would hang up its whole session).
/// Async-signal-safe: `open`, `ioctl` and `close`.
///
/// `setsid` gives up the terminal too, but with the scheduler's automatic grouping on (as on
/// most distributions) it also makes a scheduling group for the new session, which costs more
/// than a `posix_spawn` child's whole set-up.
pub(super) fn give_up_controlling_terminal() -> Result<bool, Errno> {
    // SAFETY: the path is a NUL-terminated static string; the flags ask for a descriptor that
    // does not become a controlling terminal and does not survive `execve`.
    let fd = unsafe { libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if fd == -1 {
        return match Errno::last() {
            Errno::ENXIO => Ok(true),
            _ => Ok(false),
        };
    }
    // SAFETY: `fd` was just opened and is the controlling terminal; TIOCNOTTY takes no argument.
    let ret = unsafe { libc::ioctl(fd, libc::TIOCNOTTY) };
    let errno = Errno::last();
    // SAFETY: `fd` is ours and closed once.
    unsafe { libc::close(fd) };
    if ret == -1 { Err(errno) } else { Ok(true) }
}

/// Whether `signal`'s disposition in this process is `SIG_IGN`, read with
/// [sigaction(2)](https://man7.org/linux/man-pages/man2/sigaction.2.html) without changing it.
pub(crate) fn is_ignored(signal: Signal) -> Result<bool, Errno> {
    let mut old = MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a NULL new action only reads the current one into `old`, a valid out-pointer.
    let ret = unsafe { libc::sigaction(signal as c_int, ptr::null(), old.as_mut_ptr()) };
    if ret == -1 {
        return Err(Errno::last());
    }
    // SAFETY: sigaction succeeded, so it filled in `old` (it was zeroed before anyway).
    let old = unsafe { old.assume_init() };
    Ok(old.sa_sigaction == libc::SIG_IGN)
}

/// Sets no-new-privileges on the calling thread, see
/// [PR_SET_NO_NEW_PRIVS](https://man7.org/linux/man-pages/man2/PR_SET_NO_NEW_PRIVS.2const.html):
/// `execve` no longer grants set-user-ID, set-group-ID or file capabilities. Async-signal-safe.
pub(super) fn set_no_new_privs() -> Result<(), Errno> {
    // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes integers by value; no memory is passed.
    let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0 as libc::c_ulong, 0, 0) };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`: two `CapData`, 64 capabilities.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Gives up every capability, see [capabilities(7)](https://man7.org/linux/man-pages/man7/capabilities.7.html):
/// the effective, permitted and inheritable sets emptied with one `capset` (the ambient set
/// empties with them, as it must stay within both). Together with no-new-privileges this is for
/// good: `execve` then grants no capability back, not to root either (the kernel intersects
/// what it would grant with the empty permitted set), so the bounding set needs no dropping,
/// one credential commit per capability. Async-signal-safe: one system call on stack data.
pub(super) fn drop_capabilities() -> Result<(), Errno> {
    let header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
    let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: `header` and `data` are valid version-3 capability structs on this stack; the
    // kernel only reads them.
    let ret = unsafe { libc::syscall(libc::SYS_capset, ptr::from_ref(&header), data.as_ptr()) };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

//! Linux-only system calls: `pidfd_open` and `close_range`.

use std::ffi::{c_int, c_long, c_uint, c_void};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::ptr;

use nix::errno::Errno;
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

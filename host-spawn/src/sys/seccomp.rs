//! Installing the child's seccomp filter (built by the sandbox's `filter` module), see
//! [seccomp(2)](https://man7.org/linux/man-pages/man2/seccomp.2.html): in each child, or once
//! on a spawning thread whose children then inherit it.

use std::ffi::c_void;
use std::ptr;

use nix::errno::Errno;

use super::imp;

/// The `sock_fprog` the kernel takes for `program`; valid while `program` lives.
pub(crate) fn fprog(program: &[libc::sock_filter]) -> libc::sock_fprog {
    libc::sock_fprog { len: u16::try_from(program.len()).unwrap_or(u16::MAX), filter: program.as_ptr().cast_mut() }
}

/// Installs `prog` on the calling thread. Needs no-new-privileges. Async-signal-safe: one
/// system call on memory prepared before the child was created.
pub(super) fn install(prog: &libc::sock_fprog) -> Result<(), Errno> {
    // SAFETY: `prog` points at a valid BPF program that outlives the call; the kernel copies it.
    let ret = unsafe {
        libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0u32, ptr::from_ref(prog).cast::<c_void>())
    };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// Sets no-new-privileges on the calling thread and installs `program` on it, for good: the
/// thread and every process or thread it creates from now on run under the filter.
pub(crate) fn install_on_this_thread(program: &[libc::sock_filter]) -> Result<(), Errno> {
    imp::set_no_new_privs()?;
    install(&fprog(program))
}

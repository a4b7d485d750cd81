//! Landlock's three system calls, see [landlock(7)](https://man7.org/linux/man-pages/man7/landlock.7.html):
//! the ruleset is created and filled in the parent, once; the child applies it with one call.
//!
//! The constants are the kernel's UAPI (`include/uapi/linux/landlock.h`); libc does not carry
//! them.

use std::ffi::{c_long, c_void};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;

use nix::errno::Errno;

/// The oldest Landlock ABI the sandbox accepts: 3, the first that refuses truncation (without
/// it a child could empty any file it can read, `/etc/passwd` included when wrt runs as root).
pub const MIN_LANDLOCK_ABI: u32 = 3;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask for the ABI version instead of creating a ruleset.
const CREATE_RULESET_VERSION: u32 = 1 << 0;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: u32 = 1;

/// Filesystem access rights (`LANDLOCK_ACCESS_FS_*`), with the ABI that introduced each.
pub(crate) mod fs {
    pub(crate) const EXECUTE: u64 = 1 << 0;
    pub(crate) const WRITE_FILE: u64 = 1 << 1;
    pub(crate) const READ_FILE: u64 = 1 << 2;
    pub(crate) const READ_DIR: u64 = 1 << 3;
    // 4, 5: remove a directory, a file.
    pub(crate) const MAKE_CHAR: u64 = 1 << 6;
    // 7 to 10: make a directory, a regular file, a socket, a FIFO.
    pub(crate) const MAKE_BLOCK: u64 = 1 << 11;
    // 12: make a symlink; 13 (ABI 2): link or rename into another directory.
    /// ABI 3.
    pub(crate) const TRUNCATE: u64 = 1 << 14;
    /// ABI 5.
    pub(crate) const IOCTL_DEV: u64 = 1 << 15;

    /// The rights a rule on a file (not a directory) may carry.
    pub(crate) const FILE: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;

    /// Every right the kernel with Landlock `abi` knows.
    pub(crate) const fn known(abi: u32) -> u64 {
        match abi {
            0 => 0,
            1 => (1 << 13) - 1,
            2 => (1 << 14) - 1,
            3 | 4 => (1 << 15) - 1,
            _ => (1 << 16) - 1,
        }
    }
}

/// Network access rights (`LANDLOCK_ACCESS_NET_*`, ABI 4).
pub(crate) mod net {
    pub(crate) const BIND_TCP: u64 = 1 << 0;
    pub(crate) const CONNECT_TCP: u64 = 1 << 1;
}

/// Scopes (`LANDLOCK_SCOPE_*`, ABI 6).
pub(crate) mod scope {
    pub(crate) const ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    pub(crate) const SIGNAL: u64 = 1 << 1;
}

/// `struct landlock_ruleset_attr`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RulesetAttr {
    pub(crate) handled_access_fs: u64,
    pub(crate) handled_access_net: u64,
    pub(crate) scoped: u64,
}

/// `struct landlock_path_beneath_attr`, which the kernel declares packed.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version of the running kernel; 0 when Landlock is missing or disabled.
pub(crate) fn abi_version() -> u32 {
    // SAFETY: with the VERSION flag the kernel reads no attribute (NULL, size 0) and returns
    // the version or -1.
    let ret: c_long = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, ptr::null::<c_void>(), 0usize, CREATE_RULESET_VERSION)
    };
    u32::try_from(ret).unwrap_or(0)
}

/// Creates a ruleset that handles what `attr` names (close-on-exec). Only the fields the kernel
/// with `abi` knows are passed, so an older kernel is not handed a larger struct.
pub(crate) fn create_ruleset(attr: &RulesetAttr, abi: u32) -> Result<OwnedFd, Errno> {
    let size = match abi {
        0..=3 => 8,
        4 | 5 => 16,
        _ => size_of::<RulesetAttr>(),
    };
    // SAFETY: `attr` is a valid `landlock_ruleset_attr` of at least `size` bytes that outlives
    // the call; the kernel only reads it.
    let ret: c_long =
        unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, ptr::from_ref(attr).cast::<c_void>(), size, 0u32) };
    if ret == -1 {
        return Err(Errno::last());
    }
    let fd = RawFd::try_from(ret).map_err(|_| Errno::EBADF)?;
    // SAFETY: the kernel just returned `fd` (close-on-exec); nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Allows `access` beneath the file or directory `parent` (an `O_PATH` descriptor will do).
pub(crate) fn add_path_rule(ruleset: BorrowedFd<'_>, parent: BorrowedFd<'_>, access: u64) -> Result<(), Errno> {
    let attr = PathBeneathAttr { allowed_access: access, parent_fd: parent.as_raw_fd() };
    // SAFETY: `attr` is a valid packed `landlock_path_beneath_attr` that outlives the call; the
    // kernel only reads it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            ptr::from_ref(&attr).cast::<c_void>(),
            0u32,
        )
    };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

/// Confines the calling thread (and everything it executes or starts) to `ruleset`.
/// Needs no-new-privileges (or `CAP_SYS_ADMIN`). Async-signal-safe: one system call.
pub(super) fn restrict_self(ruleset: RawFd) -> Result<(), Errno> {
    // SAFETY: landlock_restrict_self takes a descriptor and flags by value.
    let ret = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}

//! Extended attributes of an open file, which nix does not wrap: where the compile cache keeps
//! its key (`crate::cache`).
//!
//! See [`fgetxattr(2)`](https://man7.org/linux/man-pages/man2/fgetxattr.2.html).

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::libc;

/// Reads the attribute `name` of `fd` into `value` and returns its length.
///
/// # Errors
///
/// `ENODATA` when the file has no such attribute, `ERANGE` when it is longer than `value`,
/// `ENOTSUP` when the file system has no attributes of its namespace.
#[doc(alias = "fgetxattr")]
pub(crate) fn get(fd: BorrowedFd<'_>, name: &CStr, value: &mut [u8]) -> Result<usize, Errno> {
    #[cfg(test)]
    tests::injected()?;
    // SAFETY: `name` is NUL-terminated; `value` is valid for writes of `value.len()` bytes, and
    // the kernel writes no more; `fd` is open for the duration of the call.
    let len = unsafe { libc::fgetxattr(fd.as_raw_fd(), name.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
    Errno::result(len).map(|len| len.unsigned_abs())
}

/// Sets the attribute `name` of `fd` to `value`; with `create`, only if it has none (`EEXIST`
/// otherwise).
///
/// # Errors
///
/// `EEXIST` (with `create`), `ENOTSUP` when the file system has no attributes of the name's
/// namespace, `EPERM` or `EACCES` when this process may not set it.
#[doc(alias = "fsetxattr")]
pub(crate) fn set(fd: BorrowedFd<'_>, name: &CStr, value: &[u8], create: bool) -> Result<(), Errno> {
    #[cfg(test)]
    tests::injected()?;
    let flags = if create { libc::XATTR_CREATE } else { 0 };
    // SAFETY: `name` is NUL-terminated; `value` is valid for reads of `value.len()` bytes; `fd`
    // is open for the duration of the call.
    let result = unsafe { libc::fsetxattr(fd.as_raw_fd(), name.as_ptr(), value.as_ptr().cast(), value.len(), flags) };
    Errno::result(result).map(drop)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use nix::errno::Errno;

    thread_local! {
        /// The error every attribute call of this thread fails with, as a file system without
        /// them would.
        static FAIL: Cell<Option<Errno>> = const { Cell::new(None) };
    }

    /// Makes every attribute call of this thread fail with `errno` (or succeed again).
    pub(crate) fn inject(errno: Option<Errno>) {
        FAIL.with(|fail| fail.set(errno));
    }

    pub(super) fn injected() -> Result<(), Errno> {
        FAIL.with(Cell::get).map_or(Ok(()), Err)
    }

    #[test]
    fn attributes_round_trip_on_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let fd = std::fs::File::open(dir.path()).unwrap();
        let fd = std::os::fd::AsFd::as_fd(&fd);
        let mut buf = [0u8; 8];
        assert_eq!(super::get(fd, c"user.wrt.test", &mut buf), Err(Errno::ENODATA));
        super::set(fd, c"user.wrt.test", b"abc", true).unwrap();
        assert_eq!(super::set(fd, c"user.wrt.test", b"xyz", true), Err(Errno::EEXIST));
        assert_eq!(super::get(fd, c"user.wrt.test", &mut buf), Ok(3));
        assert_eq!(&buf[..3], b"abc");
        assert_eq!(super::get(fd, c"user.wrt.test", &mut [0u8; 2]), Err(Errno::ERANGE));
        inject(Some(Errno::ENOTSUP));
        assert_eq!(super::get(fd, c"user.wrt.test", &mut buf), Err(Errno::ENOTSUP));
        inject(None);
    }
}

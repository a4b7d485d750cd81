//! Pseudo-terminals: a new pair ([`open_pty`]) and the window size ([`set_window_size`]).

use std::ffi::{CString, c_char};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;

use super::{cvt, cvt_nz};

/// A new pseudo-terminal: the master (the host's side), the slave (the child's) and the
/// slave's path, which the child opens after `setsid` so that it becomes its controlling
/// terminal. Both descriptors are close-on-exec and not the host's controlling terminal.
#[derive(Debug)]
pub(crate) struct Pty {
    pub(crate) master: OwnedFd,
    pub(crate) slave: OwnedFd,
    pub(crate) path: CString,
}

/// Opens a pseudo-terminal of `rows` × `cols` with
/// [posix_openpt](https://pubs.opengroup.org/onlinepubs/9799919799/functions/posix_openpt.html),
/// `grantpt`, `unlockpt` and `ptsname_r`, then opens the slave.
#[doc(alias = "posix_openpt")]
#[doc(alias = "openpty")]
pub(crate) fn open_pty(rows: u16, cols: u16) -> Result<Pty, Errno> {
    let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: posix_openpt takes flags only and returns a new descriptor or -1.
    let master = cvt(unsafe { libc::posix_openpt(flags) })?;
    // SAFETY: posix_openpt just returned this descriptor; nothing else owns it.
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    // SAFETY: `master` is an open pseudo-terminal master.
    cvt(unsafe { libc::grantpt(master.as_raw_fd()) })?;
    // SAFETY: `master` is an open pseudo-terminal master.
    cvt(unsafe { libc::unlockpt(master.as_raw_fd()) })?;
    let mut name = [0 as c_char; 128];
    // SAFETY: `name` is valid for `name.len()` bytes; ptsname_r writes a NUL-terminated path.
    cvt_nz(unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) })?;
    let bytes: Vec<u8> = name.iter().take_while(|&&c| c != 0).map(|&c| c.cast_unsigned()).collect();
    let path = CString::new(bytes).map_err(|_| Errno::EINVAL)?;
    // SAFETY: `path` is NUL-terminated; open returns a new descriptor or -1.
    let slave = cvt(unsafe { libc::open(path.as_ptr(), flags) })?;
    // SAFETY: open just returned this descriptor; nothing else owns it.
    let slave = unsafe { OwnedFd::from_raw_fd(slave) };
    let slave = super::above_stdio(slave)?;
    let master = super::above_stdio(master)?;
    set_window_size(master.as_fd(), rows, cols)?;
    Ok(Pty { master, slave, path })
}

/// Sets the window size of the terminal behind `fd` (`TIOCSWINSZ`); the kernel sends
/// `SIGWINCH` to the terminal's foreground process group when it changes.
#[doc(alias = "TIOCSWINSZ")]
pub(crate) fn set_window_size(fd: BorrowedFd<'_>, rows: u16, cols: u16) -> Result<(), Errno> {
    let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCSWINSZ reads one `winsize` through the pointer, which is valid for the call.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &size) })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_pty_has_the_size_it_was_given() {
        let pty = open_pty(33, 101).unwrap();
        assert!(pty.path.to_bytes().starts_with(b"/dev/pts/"), "{:?}", pty.path);
        let mut size = std::mem::MaybeUninit::<libc::winsize>::uninit();
        // SAFETY: TIOCGWINSZ writes one `winsize` through the valid out-pointer.
        let ret = unsafe { libc::ioctl(pty.slave.as_raw_fd(), libc::TIOCGWINSZ, size.as_mut_ptr()) };
        assert_eq!(ret, 0);
        // SAFETY: the ioctl succeeded, so `size` is initialised.
        let size = unsafe { size.assume_init() };
        assert_eq!((size.ws_row, size.ws_col), (33, 101));
    }
}

//! Descriptor helpers: moving a descriptor above stdio, and writing to a pipe without
//! `SIGPIPE`.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

use super::cvt;

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
    use nix::fcntl::OFlag;

    #[test]
    fn write_to_a_closed_pipe_is_epipe_not_a_signal() {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        drop(read);
        let before = SigSet::thread_get_mask().unwrap();
        assert_eq!(write_no_sigpipe(std::os::fd::AsFd::as_fd(&write), b"x"), Err(Errno::EPIPE));
        assert_eq!(SigSet::thread_get_mask().unwrap(), before);
    }
}

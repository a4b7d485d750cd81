//! The host's end of a child's stdout or stderr pipe, with its output limit.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;

/// What one non-blocking read produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadStep {
    Data(usize),
    Eof,
    WouldBlock,
    /// The output limit was passed; the pipe is closed.
    Limit,
    NotPiped,
}

/// A non-blocking pipe end that stops at `limit` bytes.
///
/// At the limit it reads one more byte: if there is one, the stream is truncated and the pipe
/// is closed, so the child gets `EPIPE` or `SIGPIPE` on its next write instead of filling
/// host memory or blocking on a full pipe.
#[derive(Debug)]
pub(crate) struct Reader {
    fd: Option<OwnedFd>,
    piped: bool,
    /// Handed over with [`Reader::take`].
    taken: bool,
    /// A pseudo-terminal's master: `EIO` is the end of the output (every process holding the
    /// slave has exited), not an error.
    pty: bool,
    read: u64,
    limit: u64,
    truncated: bool,
}

fn retry<T>(mut f: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match f() {
            Err(Errno::EINTR) => {}
            other => return other,
        }
    }
}

impl Reader {
    pub(crate) fn new(fd: Option<OwnedFd>, limit: u64) -> Self {
        Self { piped: fd.is_some(), fd, taken: false, pty: false, read: 0, limit, truncated: false }
    }

    /// Marks the reader as a pseudo-terminal's master (if `pty`).
    pub(crate) fn on_pty(mut self, pty: bool) -> Self {
        self.pty = pty;
        self
    }

    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(AsFd::as_fd)
    }

    pub(crate) fn is_open(&self) -> bool {
        self.fd.is_some()
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.read
    }

    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    /// Hands the pipe over (it is no longer read here): later reads report
    /// [`ReadStep::NotPiped`]. `None` if it is not open.
    pub(crate) fn take(&mut self) -> Option<OwnedFd> {
        let fd = self.fd.take()?;
        self.piped = false;
        self.taken = true;
        Some(fd)
    }

    /// Takes back a pipe handed over with [`Reader::take`].
    pub(crate) fn put_back(&mut self, fd: OwnedFd) {
        self.fd = Some(fd);
        self.piped = true;
        self.taken = false;
    }

    /// Whether the pipe was handed over with [`Reader::take`] (and not put back).
    pub(crate) fn was_taken(&self) -> bool {
        self.taken
    }

    /// Stops reading without marking the stream truncated.
    pub(crate) fn close(&mut self) {
        self.fd = None;
    }

    pub(crate) fn try_read(&mut self, buf: &mut [u8]) -> io::Result<ReadStep> {
        let Some(fd) = &self.fd else {
            return Ok(if self.truncated {
                ReadStep::Limit
            } else if self.piped {
                ReadStep::Eof
            } else {
                ReadStep::NotPiped
            });
        };
        let room = self.limit - self.read;
        if room == 0 {
            let mut probe = [0u8; 1];
            return match retry(|| nix::unistd::read(fd, &mut probe)) {
                Ok(0) => {
                    self.fd = None;
                    Ok(ReadStep::Eof)
                }
                Ok(_) => {
                    self.truncated = true;
                    self.fd = None;
                    Ok(ReadStep::Limit)
                }
                Err(Errno::EAGAIN) => Ok(ReadStep::WouldBlock),
                Err(errno) => Err(errno.into()),
            };
        }
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if len == 0 {
            return Ok(ReadStep::Data(0));
        }
        match retry(|| nix::unistd::read(fd, &mut buf[..len])) {
            Ok(0) => {
                self.fd = None;
                Ok(ReadStep::Eof)
            }
            Ok(n) => {
                self.read += n as u64;
                Ok(ReadStep::Data(n))
            }
            Err(Errno::EAGAIN) => Ok(ReadStep::WouldBlock),
            Err(Errno::EIO) if self.pty => {
                self.fd = None;
                Ok(ReadStep::Eof)
            }
            Err(errno) => Err(errno.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};

    use super::*;

    fn pipe() -> (Reader, OwnedFd, u64) {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).unwrap();
        let _ = fcntl(&w, FcntlArg::F_SETFL(OFlag::empty()));
        (Reader::new(Some(r), 4), w, 4)
    }

    #[test]
    fn stops_at_the_limit_and_reports_truncation() {
        let (mut reader, w, _) = pipe();
        nix::unistd::write(&w, b"abcdef").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::Data(4));
        assert_eq!(&buf[..4], b"abcd");
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::Limit);
        assert!(reader.truncated());
        assert!(!reader.is_open());
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::Limit);
    }

    #[test]
    fn exactly_the_limit_is_not_truncation() {
        let (mut reader, w, _) = pipe();
        nix::unistd::write(&w, b"abcd").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::Data(4));
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::WouldBlock);
        drop(w);
        assert_eq!(reader.try_read(&mut buf).unwrap(), ReadStep::Eof);
        assert!(!reader.truncated());
    }

    #[test]
    fn a_taken_pipe_is_not_piped_until_put_back() {
        let (mut reader, w, _) = pipe();
        let fd = reader.take().unwrap();
        assert!(reader.take().is_none());
        assert_eq!(reader.try_read(&mut [0u8; 4]).unwrap(), ReadStep::NotPiped);
        reader.put_back(fd);
        nix::unistd::write(&w, b"ab").unwrap();
        assert_eq!(reader.try_read(&mut [0u8; 4]).unwrap(), ReadStep::Data(2));
    }

    #[test]
    fn not_piped() {
        let mut reader = Reader::new(None, 10);
        assert_eq!(reader.try_read(&mut [0u8; 4]).unwrap(), ReadStep::NotPiped);
    }
}

//! The guest's ends of a child's pipes: [`ChildStdin`], [`ChildStdout`], [`ChildStderr`].

use std::fmt;
use std::io::{self, Read, Write};
use std::sync::Arc;

use crate::error::{check, error};
use crate::handle::Handle;
use crate::sys;

/// The `stream` numbers of `read`.
const STDOUT: i32 = 1;
const STDERR: i32 = 2;

/// The child's stdin, when it was [`piped`](crate::Stdio::piped). Writes block until at least
/// one byte is written; dropping it closes the pipe, so the child sees end of file.
///
/// Writing after the child closed its stdin fails with `BrokenPipe`.
pub struct ChildStdin {
    handle: Arc<Handle>,
}

impl ChildStdin {
    pub(super) fn new(handle: Arc<Handle>) -> Self {
        Self { handle }
    }

    /// Writes what fits in the pipe without waiting: `WouldBlock` if nothing does.
    ///
    /// # Errors
    ///
    /// `WouldBlock`, `BrokenPipe` if the child closed its stdin, or another host error.
    pub fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_impl(buf, true)
    }

    fn write_impl(&mut self, buf: &[u8], nonblocking: bool) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let ret = sys::write(self.handle.raw(), buf, nonblocking);
        check(ret, || format!("cannot write to the stdin of child {}", self.handle.raw())).map(|n| n as usize)
    }
}

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_impl(buf, false)
    }

    /// Does nothing: writes go straight to the pipe.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ChildStdin {
    fn drop(&mut self) {
        // Fails only if stdin is already closed, which is what this wants.
        let _ = sys::close_stdin(self.handle.raw());
    }
}

impl fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildStdin").field("handle", &self.handle.raw()).finish()
    }
}

/// One readable stream of a child.
struct Reader {
    handle: Arc<Handle>,
    stream: i32,
}

impl Reader {
    fn read(&mut self, buf: &mut [u8], nonblocking: bool) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let ret = sys::read(self.handle.raw(), self.stream, buf, nonblocking);
        if ret >= 0 {
            return Ok(ret as usize);
        }
        let name = if self.stream == STDOUT { "stdout" } else { "stderr" };
        Err(error(ret, || format!("cannot read the {name} of child {}", self.handle.raw())))
    }
}

macro_rules! reader {
    ($name:ident, $stream:expr, $what:literal) => {
        #[doc = concat!("The child's ", $what, ", when it was [`piped`](crate::Stdio::piped). Reads block")]
        /// until data arrives and return 0 at end of file.
        ///
        /// Once the stream has passed its output limit, reads fail with `FileTooLarge` (code
        /// [`OutputLimit`](crate::ErrorCode::OutputLimit)) and the child's status says it was
        /// truncated.
        pub struct $name(Reader);

        impl $name {
            pub(super) fn new(handle: Arc<Handle>) -> Self {
                Self(Reader { handle, stream: $stream })
            }

            /// Reads what is available without waiting: `WouldBlock` if nothing is, 0 at end
            /// of file.
            ///
            /// # Errors
            ///
            /// `WouldBlock`, `FileTooLarge` past the output limit, or another host error.
            pub fn try_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf, true)
            }
        }

        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf, false)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("handle", &self.0.handle.raw()).finish()
            }
        }
    };
}

reader!(ChildStdout, STDOUT, "stdout");
reader!(ChildStderr, STDERR, "stderr");

//! The guest's ends of a child's pipes: [`ChildStdin`], [`ChildStdout`], [`ChildStderr`].

use std::fmt;
use std::io::{self, Read, Write};

use crate::buffer::Buffer;
use crate::error::{ErrorCode, WrtError, check, error};
use crate::sys::{self, ConcatPart};
use crate::transport::ChildHandle;

/// The `stream` numbers of `read`.
use wrt_abi::consts::{STREAM_STDERR as STDERR, STREAM_STDOUT as STDOUT};

/// The most `read_buffer` reads in one call.
const MAX_READ_BUFFER: usize = wrt_abi::consts::MAX_READ_BUFFER as usize;

/// The child's stdin, when it was [`piped`](crate::Stdio::piped). Writes block until at least
/// one byte is written; dropping it closes the pipe, so the child sees end of file.
///
/// Writing after the child closed its stdin fails with `BrokenPipe`.
pub struct ChildStdin {
    handle: ChildHandle,
}

impl ChildStdin {
    pub(crate) fn new(handle: ChildHandle) -> Self {
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

    /// Writes all of `buf` to the child's stdin, blocking until it is written.
    ///
    /// The bytes of a host buffer go from the host buffer to the pipe (`write_buffer`) without
    /// passing through linear memory; an inline buffer (64 bytes or less) is written like any
    /// slice.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wrt_guest::{Buffer, Command, Stdio};
    ///
    /// let mut child = Command::new("wc").arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    /// let page = Buffer::zeroed(1 << 20)?;
    /// child.stdin.take().unwrap().write_buffer(&page)?;
    /// let out = child.wait_with_output()?;
    /// assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1048576");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `BrokenPipe` if the child closed its stdin, or another host error; some bytes may have
    /// been written.
    pub fn write_buffer(&mut self, buf: &Buffer) -> io::Result<()> {
        let mut offset = 0;
        while offset < buf.len() {
            match self.write_buffer_impl(buf, offset, false)? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => offset += n,
            }
        }
        Ok(())
    }

    /// Writes what fits in the pipe of `buf[offset..]` without waiting, and returns how many
    /// bytes that was: `WouldBlock` if nothing fits, 0 if `offset` is the length.
    ///
    /// # Errors
    ///
    /// `InvalidInput` (code [`OutOfRange`](ErrorCode::OutOfRange)) for an offset past the
    /// end, otherwise as [`try_write`](Self::try_write).
    pub fn try_write_buffer(&mut self, buf: &Buffer, offset: usize) -> io::Result<usize> {
        self.write_buffer_impl(buf, offset, true)
    }

    fn write_buffer_impl(&mut self, buf: &Buffer, offset: usize, nonblocking: bool) -> io::Result<usize> {
        let context =
            || format!("cannot write a buffer at offset {offset} to the stdin of child {}", self.handle.raw());
        match buf.as_part() {
            ConcatPart::Linear(bytes) => {
                let bytes = bytes.get(offset..).ok_or_else(|| WrtError::new(ErrorCode::OutOfRange, context()))?;
                self.write_impl(bytes, nonblocking)
            }
            ConcatPart::Host(raw) => {
                let offset = u32::try_from(offset).map_err(|_| WrtError::new(ErrorCode::OutOfRange, context()))?;
                check(sys::write_buffer(self.handle.raw(), raw, offset, nonblocking), context).map(|n| n as usize)
            }
        }
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
    handle: ChildHandle,
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
        Err(error(ret, || format!("cannot read the {} of child {}", self.name(), self.handle.raw())))
    }

    fn read_buffer(&mut self, max_len: usize, nonblocking: bool) -> io::Result<Option<Buffer>> {
        if max_len == 0 {
            return Ok(Some(Buffer::new()));
        }
        let context = || format!("cannot read the {} of child {} into a buffer", self.name(), self.handle.raw());
        let ret = sys::read_buffer(self.handle.raw(), self.stream, max_len.min(MAX_READ_BUFFER), nonblocking);
        match check(ret, context)? {
            0 => Ok(None),
            handle => Buffer::from_host_handle(handle, context).map(Some),
        }
    }

    fn name(&self) -> &'static str {
        if self.stream == STDOUT { "stdout" } else { "stderr" }
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
            pub(crate) fn new(handle: ChildHandle) -> Self {
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

            /// Reads up to `max_len` bytes (at most 16 MiB a call) into a new [`Buffer`],
            /// blocking until data arrives: `None` at end of file.
            ///
            /// The bytes go from the pipe to a host buffer without passing through linear
            /// memory; a read of 64 bytes or less is then copied inline (and its host buffer
            /// released), like any small buffer. A `max_len` of 0 returns an empty buffer
            /// without reading.
            ///
            /// # Examples
            ///
            /// ```no_run
            /// use wrt_guest::{Buffer, Command, Stdio};
            ///
            #[doc = concat!("let mut child = Command::new(\"cat\").arg(\"/etc/services\").", $what, "(Stdio::piped()).spawn()?;")]
            #[doc = concat!("let pipe = child.", $what, ".as_mut().unwrap();")]
            /// let mut chunks = Vec::new();
            /// while let Some(chunk) = pipe.read_buffer(64 << 10)? {
            ///     chunks.push(chunk);
            /// }
            /// let whole = Buffer::concat(&chunks.iter().collect::<Vec<_>>())?;
            /// println!("{} bytes", whole.len());
            /// # Ok::<(), std::io::Error>(())
            /// ```
            ///
            /// # Errors
            ///
            /// `FileTooLarge` past the output limit, `OutOfMemory` (code
            /// [`NoMemory`](crate::ErrorCode::NoMemory)) when the sandbox's memory limit is
            /// reached, or another host error.
            pub fn read_buffer(&mut self, max_len: usize) -> io::Result<Option<Buffer>> {
                self.0.read_buffer(max_len, false)
            }

            /// Like [`read_buffer`](Self::read_buffer), without waiting: `WouldBlock` if
            /// nothing is available.
            ///
            /// # Errors
            ///
            /// `WouldBlock`, otherwise as [`read_buffer`](Self::read_buffer).
            pub fn try_read_buffer(&mut self, max_len: usize) -> io::Result<Option<Buffer>> {
                self.0.read_buffer(max_len, true)
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

impl ChildStdout {
    /// The child, for a pipeline stage's request.
    pub(crate) fn into_handle(self) -> ChildHandle {
        self.0.handle
    }
}
reader!(ChildStderr, STDERR, "stderr");

//! The guest's ends of a child's pipes: [`ChildStdin`], [`ChildStdout`], [`ChildStderr`].
//!
//! Each takes its `wasi:io` stream from the child on first use, so that until then the host can
//! still use the pipe itself: to read into or write from a host buffer, or to join it to
//! another child ([`Child::pipe_into`](crate::Child::pipe_into)).

use std::fmt;
use std::io::{self, Read, Write};

use wasip2::io::streams::{InputStream, OutputStream, StreamError};

use crate::buffer::Buffer;
use crate::error::{ErrorCode, WrtError, from_wit, local};
use crate::sys;
use crate::transport::ChildHandle;

/// The most a read asks for at once (the host's cap for a buffer read too).
pub(crate) const MAX_READ: usize = 1 << 20;
/// The most `blocking-write-and-flush` takes at once.
const MAX_WRITE: usize = 4096;

/// The `io::Error` of a failed stream operation: `BROKEN_PIPE` for a closed stream, `IO` with
/// the host's description otherwise.
pub(crate) fn stream_error(err: StreamError, context: impl FnOnce() -> String) -> io::Error {
    match err {
        StreamError::Closed => local(ErrorCode::BrokenPipe, context()),
        StreamError::LastOperationFailed(err) => {
            let context = context();
            let message = format!("{context}: {}", err.to_debug_string());
            WrtError::from_host(ErrorCode::Io.raw(), context, message).into()
        }
    }
}

/// The child's stdin, piped from the guest: [`Write`] blocks until the child took the bytes.
/// Dropping it closes the pipe, so the child sees end of file.
pub struct ChildStdin {
    stream: Option<OutputStream>,
    child: ChildHandle,
}

impl ChildStdin {
    pub(crate) fn new(child: ChildHandle) -> Self {
        Self { stream: None, child }
    }

    /// The stream, taken from the child on first use.
    pub(crate) fn stream(&mut self) -> io::Result<&OutputStream> {
        if self.stream.is_none() {
            let stream = self.child.take_stdin().map_err(|e| from_wit(e, || self.context("write to")))?;
            self.stream = Some(stream);
        }
        Ok(self.stream.as_ref().expect("just taken"))
    }

    fn context(&self, what: &str) -> String {
        format!("cannot {what} the stdin of child {}", self.child.id())
    }

    /// Writes all of `buf`, a host buffer, to the child's stdin, from the host's memory to the
    /// pipe. Only before the first [`Write`] call (which takes the pipe into the guest).
    ///
    /// # Errors
    ///
    /// `BrokenPipe` ([`BrokenPipe`](ErrorCode::BrokenPipe)) once the child closed its stdin;
    /// [`NotPiped`](ErrorCode::NotPiped) after a `Write` call.
    pub fn write_buffer(&mut self, buf: &Buffer) -> io::Result<()> {
        let mut offset = 0;
        while offset < buf.wit_len() {
            let written = self
                .child
                .write_buffer(buf.resource(), offset)
                .map_err(|e| from_wit(e, || self.context("write a buffer to")))?;
            offset = offset.saturating_add(written);
        }
        Ok(())
    }
}

impl Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let len = buf.len().min(MAX_WRITE);
        let result = self.stream()?.blocking_write_and_flush(&buf[..len]);
        result.map(|()| len).map_err(|e| stream_error(e, || self.context("write to")))
    }

    fn flush(&mut self) -> io::Result<()> {
        let Some(stream) = &self.stream else { return Ok(()) };
        stream.blocking_flush().map_err(|e| stream_error(e, || self.context("flush")))
    }
}

impl Drop for ChildStdin {
    fn drop(&mut self) {
        // A pipe never taken is still open in the host: take it, to close it with the stream.
        if self.stream.is_none() {
            drop(self.child.take_stdin());
        }
    }
}

impl fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildStdin").field("child", &self.child.id()).field("taken", &self.stream.is_some()).finish()
    }
}

/// A child's stdout or stderr, piped to the guest.
pub(crate) struct OutputPipe {
    stream: Option<InputStream>,
    source: sys::OutputSource,
    child: ChildHandle,
}

impl OutputPipe {
    fn new(child: ChildHandle, source: sys::OutputSource) -> Self {
        Self { stream: None, source, child }
    }

    fn name(&self) -> &'static str {
        match self.source {
            sys::OutputSource::Stdout => "stdout",
            sys::OutputSource::Stderr => "stderr",
        }
    }

    pub(crate) fn context(&self, what: &str) -> String {
        format!("cannot {what} the {} of child {}", self.name(), self.child.id())
    }

    /// The stream, taken from the child on first use.
    pub(crate) fn stream(&mut self) -> io::Result<&InputStream> {
        if self.stream.is_none() {
            let taken = match self.source {
                sys::OutputSource::Stdout => self.child.take_stdout(),
                sys::OutputSource::Stderr => self.child.take_stderr(),
            };
            self.stream = Some(taken.map_err(|e| from_wit(e, || self.context("read")))?);
        }
        Ok(self.stream.as_ref().expect("just taken"))
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let len = buf.len().min(MAX_READ) as u64;
        match self.stream()?.blocking_read(len) {
            Ok(bytes) => {
                buf[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            Err(StreamError::Closed) => Ok(0),
            Err(err) => Err(stream_error(err, || self.context("read"))),
        }
    }

    fn read_buffer(&mut self, max_len: usize) -> io::Result<Option<Buffer>> {
        let max_len = u32::try_from(max_len.min(MAX_READ)).expect("1 MiB fits");
        match self.child.read_buffer(self.source, max_len) {
            Ok(buffer) => Ok(buffer.map(Buffer::from_wit)),
            Err(e) => Err(from_wit(e, || self.context("read into a buffer"))),
        }
    }
}

macro_rules! output_pipe {
    ($name:ident, $source:ident, $doc:literal) => {
        #[doc = $doc]
        pub struct $name(pub(crate) OutputPipe);

        impl $name {
            pub(crate) fn new(child: ChildHandle) -> Self {
                Self(OutputPipe::new(child, sys::OutputSource::$source))
            }

            /// Reads up to `max_len` bytes (at most 1 MiB) into a new host [`Buffer`], without
            /// passing through linear memory; `Ok(None)` at end of file. Only before the first
            /// [`Read`] call (which takes the pipe into the guest).
            ///
            /// # Errors
            ///
            /// `BrokenPipe` ([`NotPiped`](ErrorCode::NotPiped)) after a `Read` call.
            pub fn read_buffer(&mut self, max_len: usize) -> io::Result<Option<Buffer>> {
                self.0.read_buffer(max_len)
            }
        }

        impl Read for $name {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("child", &self.0.child.id())
                    .field("taken", &self.0.stream.is_some())
                    .finish()
            }
        }
    };
}

impl ChildStdout {
    /// The child, for a pipeline; the stream (if the guest took it) is closed.
    pub(crate) fn into_handle(self) -> ChildHandle {
        let OutputPipe { stream, child, .. } = self.0;
        drop(stream);
        child
    }
}

output_pipe!(ChildStdout, Stdout, "The child's stdout, piped to the guest: [`Read`] blocks until it wrote something.");
output_pipe!(ChildStderr, Stderr, "The child's stderr, piped to the guest: [`Read`] blocks until it wrote something.");

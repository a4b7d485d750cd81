//! A captured output stream of a guest: bytes kept in memory up to a limit, with a record of
//! whether anything was refused past it; or bytes handed on to the embedder's writer
//! ([`crate::GuestOutput::Writer`]) as they come, with a record of whether the writer failed.
//!
//! A write that does not fit keeps what fits; the guest's `fd_write` then reports the short
//! count, and its next write fails with an I/O error (WASI `EIO`), never a trap. The run's
//! [`crate::Report`] says the stream was truncated. A writer that fails is treated the same
//! way: the write fails, every later one too, and the report says the stream was truncated.
//!
//! The guest's writes and its children's (through `process_service::drain`) go to the same
//! capture.

use std::io::{self, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

use crate::embedder_streams::OutputWriter;

/// How many bytes a write to an embedder's writer may hand on at once.
const WRITER_ROOM: usize = 1 << 20;

/// One captured stream; clones share the bytes.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    sink: Sink,
    /// Bytes were refused at the limit, or the writer failed.
    truncated: AtomicBool,
}

#[derive(Debug)]
enum Sink {
    /// Kept in memory, at most `limit` bytes.
    Kept { bytes: Mutex<Vec<u8>>, limit: usize },
    /// Handed on to the embedder's writer.
    Writer(OutputWriter),
}

impl Capture {
    pub(crate) fn new(limit: usize) -> Self {
        let sink = Sink::Kept { bytes: Mutex::default(), limit };
        Self { shared: Arc::new(Shared { sink, truncated: AtomicBool::new(false) }) }
    }

    /// A stream handed on to `writer`.
    pub(crate) fn writer(writer: OutputWriter) -> Self {
        Self { shared: Arc::new(Shared { sink: Sink::Writer(writer), truncated: AtomicBool::new(false) }) }
    }

    /// Appends what fits of `bytes` and returns how many that was; the rest is refused and
    /// marks the stream truncated. A writer takes everything, blocking as long as it blocks,
    /// unless it failed (now or before): then it takes nothing.
    pub(crate) fn append(&self, bytes: &[u8]) -> usize {
        let n = match &self.shared.sink {
            Sink::Kept { bytes: kept, limit } => {
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                let n = bytes.len().min(limit - kept.len());
                kept.extend_from_slice(&bytes[..n]);
                n
            }
            Sink::Writer(_) if self.truncated() => 0,
            Sink::Writer(writer) => match writer.lock().write_all(bytes) {
                Ok(()) => bytes.len(),
                Err(_) => 0,
            },
        };
        if n < bytes.len() {
            self.shared.truncated.store(true, Ordering::Relaxed);
        }
        n
    }

    /// Room left before the limit.
    fn room(&self) -> usize {
        match &self.shared.sink {
            Sink::Kept { bytes, limit } => limit - bytes.lock().unwrap_or_else(PoisonError::into_inner).len(),
            Sink::Writer(_) if self.truncated() => 0,
            Sink::Writer(_) => WRITER_ROOM,
        }
    }

    /// Flushes the embedder's writer; a failure marks the stream truncated (what the writer
    /// held is lost).
    pub(crate) fn flush(&self) -> io::Result<()> {
        match &self.shared.sink {
            Sink::Kept { .. } => Ok(()),
            Sink::Writer(writer) => writer.lock().flush().inspect_err(|_| {
                self.shared.truncated.store(true, Ordering::Relaxed);
            }),
        }
    }

    /// The bytes kept so far (none for a writer).
    pub(crate) fn contents(&self) -> Vec<u8> {
        match &self.shared.sink {
            Sink::Kept { bytes, .. } => bytes.lock().unwrap_or_else(PoisonError::into_inner).clone(),
            Sink::Writer(_) => Vec::new(),
        }
    }

    /// Whether a write was refused, whole or in part, at the limit, or the writer failed.
    pub(crate) fn truncated(&self) -> bool {
        self.shared.truncated.load(Ordering::Relaxed)
    }
}

impl IsTerminal for Capture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Capture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for Capture {
    async fn ready(&mut self) {}
}

impl OutputStream for Capture {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        // `check_write` promised room for these bytes; a caller that writes more loses the rest.
        if self.append(&bytes) < bytes.len() && matches!(self.shared.sink, Sink::Writer(_)) {
            return Err(StreamError::LastOperationFailed(wasmtime::format_err!("the embedder's writer failed")));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Capture::flush(self).map_err(|err| StreamError::LastOperationFailed(err.into()))
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        match self.room() {
            0 => {
                self.shared.truncated.store(true, Ordering::Relaxed);
                Err(StreamError::Closed)
            }
            room => Ok(room),
        }
    }
}

impl tokio::io::AsyncWrite for Capture {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let n = self.append(buf);
        if n == 0 && !buf.is_empty() && matches!(self.shared.sink, Sink::Writer(_)) {
            return Poll::Ready(Err(io::Error::other("the embedder's writer failed")));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Capture::flush(&self))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_fits_and_says_the_rest_was_refused() {
        let capture = Capture::new(5);
        assert_eq!(capture.append(b"abc"), 3);
        assert!(!capture.truncated());
        assert_eq!(capture.append(b"defg"), 2);
        assert!(capture.truncated());
        assert_eq!(capture.contents(), b"abcde");
        let mut stream = capture.clone();
        assert!(matches!(stream.check_write(), Err(StreamError::Closed)));
    }

    #[test]
    fn exactly_full_is_not_truncated() {
        let capture = Capture::new(3);
        assert_eq!(capture.append(b"abc"), 3);
        assert!(!capture.truncated());
    }
}

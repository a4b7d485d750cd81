//! A captured output stream of a guest: bytes kept in memory up to a limit, with a record of
//! whether anything was refused past it.
//!
//! A write that does not fit keeps what fits; the guest's `fd_write` then reports the short
//! count, and its next write fails with an I/O error (WASI `EIO`), never a trap. The run's
//! [`crate::Report`] says the stream was truncated.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// One captured stream; clones share the bytes.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    bytes: Mutex<Vec<u8>>,
    limit: usize,
    truncated: AtomicBool,
}

impl Capture {
    pub(crate) fn new(limit: usize) -> Self {
        Self { shared: Arc::new(Shared { bytes: Mutex::default(), limit, truncated: AtomicBool::new(false) }) }
    }

    /// Appends what fits of `bytes` and returns how many that was; the rest is refused and
    /// marks the stream truncated.
    pub(crate) fn append(&self, bytes: &[u8]) -> usize {
        let mut kept = self.shared.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        let n = bytes.len().min(self.shared.limit - kept.len());
        kept.extend_from_slice(&bytes[..n]);
        if n < bytes.len() {
            self.shared.truncated.store(true, Ordering::Relaxed);
        }
        n
    }

    /// Room left before the limit.
    fn room(&self) -> usize {
        self.shared.limit - self.shared.bytes.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// The bytes kept so far.
    pub(crate) fn contents(&self) -> Vec<u8> {
        self.shared.bytes.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether a write was refused, whole or in part, at the limit.
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
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
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
        Poll::Ready(Ok(self.append(buf)))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
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

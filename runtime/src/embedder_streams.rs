//! Standard streams the embedder supplies: a writer the guest's output streams into
//! ([`OutputWriter`], for [`crate::GuestOutput::Writer`]) and a reader its input streams from
//! ([`InputReader`], for [`crate::GuestStdin::Reader`]). Bytes pass through in the guest's own
//! pieces, on the guest's thread: nothing is kept, so a guest may write any amount.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdinStream};
use wasmtime_wasi::p2::{InputStream, Pollable, StreamError, StreamResult};

/// The most bytes one read of an [`InputReader`] asks for.
const READ_CHUNK: usize = 64 << 10;

/// A writer that a guest's standard output or error goes to ([`crate::GuestOutput::writer`]).
/// Cheap to clone; clones share the writer, so options cloned for several runs interleave
/// their output in it, one write at a time.
#[derive(Clone)]
pub struct OutputWriter(Arc<Mutex<Box<dyn Write + Send>>>);

impl OutputWriter {
    /// Wraps `writer`.
    pub fn new(writer: impl Write + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Box::new(writer))))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for OutputWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputWriter")
    }
}

/// Two writers are equal when they are clones of one.
impl PartialEq for OutputWriter {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for OutputWriter {}

/// A reader that a guest's standard input comes from ([`crate::GuestStdin::reader`]). Cheap to
/// clone; clones share the reader, so options cloned for several runs take turns reading from
/// it.
#[derive(Clone)]
pub struct InputReader(Arc<Mutex<Box<dyn Read + Send>>>);

impl InputReader {
    /// Wraps `reader`.
    pub fn new(reader: impl Read + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Box::new(reader))))
    }

    /// Reads at most `size` bytes (and at most 64 KiB), blocking until some arrive; empty at end
    /// of file.
    fn read_some(&self, size: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; size.min(READ_CHUNK)];
        let mut reader = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = loop {
            match reader.read(&mut buf) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                result => break result?,
            }
        };
        buf.truncate(n);
        Ok(buf)
    }
}

impl std::fmt::Debug for InputReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputReader")
    }
}

/// Two readers are equal when they are clones of one.
impl PartialEq for InputReader {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for InputReader {}

impl IsTerminal for InputReader {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for InputReader {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for InputReader {
    /// Always ready: a read blocks in the reader until bytes or the end arrive.
    async fn ready(&mut self) {}
}

#[async_trait::async_trait]
impl InputStream for InputReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if size == 0 {
            return Ok(Bytes::new());
        }
        match self.read_some(size) {
            Ok(bytes) if bytes.is_empty() => Err(StreamError::Closed),
            Ok(bytes) => Ok(Bytes::from(bytes)),
            Err(err) => Err(StreamError::LastOperationFailed(err.into())),
        }
    }
}

impl tokio::io::AsyncRead for InputReader {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let bytes = self.read_some(buf.remaining())?;
        buf.put_slice(&bytes);
        Poll::Ready(Ok(()))
    }
}

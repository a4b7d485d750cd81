//! A component's file reads in synchronous runs, made on the guest's own thread.
//!
//! `wasi:filesystem`'s `read-via-stream` gives a guest an input stream over a file. wasmtime's
//! stream answers the non-blocking `read` by starting the read on tokio's blocking pool and
//! returning no bytes; the guest then subscribes, waits in `poll` for the pool's thread and reads
//! again. Only `blocking-read` reads on the calling thread (where blocking is allowed, as in
//! every synchronous run). Rust 1.97's standard library on `wasm32-wasip2` reads files with
//! `read`, `subscribe` and `poll` (1.95's called `blocking-read`), so each read of a file cost a
//! hand-off to another thread and back and three more host calls: a walk of 2,000 small files
//! took five times as long as with `blocking-read`.
//!
//! In a synchronous run the guest's thread may block on a file (`allow_blocking_current_thread`),
//! and a regular file is always ready, so the stream here reads at once, on that thread, in
//! `read` as in `blocking-read`: the bytes the guest asked for, or the end of the file. What a
//! read returns and where the stream's position goes are those of wasmtime's stream.
//! Asynchronous runs keep wasmtime's `read-via-stream`, whose executor thread must not block;
//! file writes keep wasmtime's streams (docs/design.md says what they cost).

use bytes::{Bytes, BytesMut};
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;
use wasmtime_wasi::p2::{DynInputStream, InputStream, Pollable, StreamError, StreamResult};

use crate::guest_state::GuestState;
use crate::stop::StopCell;

/// The instance whose `read-via-stream` is replaced.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// The most bytes one read takes from the file, as wasmtime's own file streams.
const MAX_READ: usize = 64 << 10;

/// Replaces `[method]descriptor.read-via-stream` in `linker`, which already holds WASI's
/// (synchronous runs only: the stream blocks the calling thread on the file).
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.instance(FILESYSTEM_TYPES)?.func_wrap(
        "[method]descriptor.read-via-stream",
        |store: StoreContextMut<'_, GuestState>, (descriptor, offset): (Resource<Descriptor>, u64)| {
            read_via_stream(store, &descriptor, offset).map(|stream| (stream,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// A stream over the file `descriptor` names, from `offset`; a directory is `is-directory`, as
/// in wasmtime's. A handle that is not a descriptor traps.
fn read_via_stream(
    mut store: StoreContextMut<'_, GuestState>,
    descriptor: &Resource<Descriptor>,
    offset: u64,
) -> wasmtime::Result<Result<Resource<DynInputStream>, ErrorCode>> {
    let stop = store.data().stop_cell.clone();
    let table = store.data_mut().ctx().table;
    let file = match table.get(descriptor)? {
        Descriptor::File(file) => std::sync::Arc::clone(&file.file),
        Descriptor::Dir(_) => return Ok(Err(ErrorCode::IsDirectory)),
    };
    let stream: DynInputStream = Box::new(FileReader::new(file, offset, stop));
    Ok(Ok(table.push(stream)?))
}

/// An input stream over a file that reads on the calling thread.
pub(crate) struct FileReader {
    file: std::sync::Arc<std::fs::File>,
    /// Where the next read starts.
    position: u64,
    /// The end of the file was read, or a read failed (reported once, then closed).
    closed: bool,
    /// The run's deadline and cancel: a read the deadline's signal interrupts (`EINTR`) fails
    /// once they have passed, rather than being made again.
    stop: StopCell,
}

impl FileReader {
    pub(crate) fn new(file: std::sync::Arc<std::fs::File>, position: u64, stop: StopCell) -> Self {
        Self { file, position, closed: false, stop }
    }
}

#[async_trait::async_trait]
impl InputStream for FileReader {
    /// Up to `size` bytes (at most 64 KiB) from the position on; `Closed` at the end of the
    /// file. A failed read is reported once, and the stream is closed after it.
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        if size == 0 {
            return Ok(Bytes::new());
        }
        let mut buf = BytesMut::zeroed(size.min(MAX_READ));
        loop {
            match std::os::unix::fs::FileExt::read_at(&*self.file, &mut buf, self.position) {
                Ok(0) => {
                    self.closed = true;
                    return Err(StreamError::Closed);
                }
                Ok(n) => {
                    buf.truncate(n);
                    self.position += n as u64;
                    return Ok(buf.freeze());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted && !self.stop.passed() => {}
                Err(e) => {
                    self.closed = true;
                    return Err(StreamError::LastOperationFailed(e.into()));
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl Pollable for FileReader {
    /// A file is always ready: a read returns bytes or the end at once.
    async fn ready(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn reader_over(bytes: &[u8], position: u64) -> FileReader {
        let mut file = tempfile::tempfile().expect("a temporary file");
        file.write_all(bytes).expect("written");
        FileReader::new(std::sync::Arc::new(file), position, StopCell::default())
    }

    #[test]
    fn reads_the_file_from_its_offset_in_pieces_of_at_most_64_kib_then_closes() {
        let bytes: Vec<u8> = (0..200_000_u32).map(|i| (i % 251) as u8).collect();
        let mut reader = reader_over(&bytes, 10);
        let mut read = Vec::new();
        loop {
            match reader.read(100_000) {
                Ok(chunk) => {
                    assert!(!chunk.is_empty() && chunk.len() <= MAX_READ, "a chunk of {} bytes", chunk.len());
                    read.extend_from_slice(&chunk);
                }
                Err(StreamError::Closed) => break,
                Err(other) => panic!("read failed: {other:?}"),
            }
        }
        assert_eq!(read, bytes[10..]);
        assert!(matches!(reader.read(1), Err(StreamError::Closed)), "the end stays the end");
    }

    #[test]
    fn a_read_of_zero_bytes_is_empty_and_moves_nothing() {
        let mut reader = reader_over(b"abc", 1);
        assert!(reader.read(0).expect("read").is_empty());
        assert_eq!(&reader.read(5).expect("read")[..], b"bc");
    }

    #[test]
    fn a_stream_past_the_end_is_closed_at_its_first_read() {
        let mut reader = reader_over(b"abc", 3);
        assert!(matches!(reader.read(8), Err(StreamError::Closed)));
        let mut reader = reader_over(b"abc", u64::MAX);
        assert!(matches!(reader.read(8), Err(StreamError::Closed) | Err(StreamError::LastOperationFailed(_))));
    }

    #[test]
    fn a_failed_read_is_reported_once_then_the_stream_is_closed() {
        // A file opened for writing only: its reads fail with EBADF.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("w");
        std::fs::write(&path, b"bytes").expect("written");
        let file = std::fs::OpenOptions::new().write(true).open(&path).expect("opened");
        let mut reader = FileReader::new(std::sync::Arc::new(file), 0, StopCell::default());
        assert!(matches!(reader.read(4), Err(StreamError::LastOperationFailed(_))));
        assert!(matches!(reader.read(4), Err(StreamError::Closed)));
    }
}

//! Where a guest's standard streams go.

use crate::embedder_streams::{InputReader, OutputWriter};

/// The guest's standard input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestStdin {
    /// End of file at once.
    #[default]
    Null,
    /// The host process's standard input.
    Inherit,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
    /// What the embedder's reader gives, read as the guest asks (at most 64 KiB a read, on the
    /// guest's thread, blocking as long as the reader blocks), then end of file. Children the
    /// guest starts with an inherited stdin get end of file at once.
    Reader(InputReader),
}

impl GuestStdin {
    /// [`GuestStdin::Reader`] of `reader`.
    pub fn reader(reader: impl std::io::Read + Send + 'static) -> Self {
        Self::Reader(InputReader::new(reader))
    }
}

/// The guest's standard output or error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestOutput {
    /// Written to the host process's stream.
    Inherit,
    /// Discarded: the default, so that an embedder that never chose gets no guest's output in
    /// its own streams (`wrt run` inherits them).
    #[default]
    Null,
    /// Kept in memory and returned in the run's report ([`crate::Report::stdout`]). Past
    /// `limit` bytes nothing more is kept: the write that crosses the limit keeps what fits and
    /// reports a short count, every later write fails with an I/O error (WASI `EIO`; the guest
    /// is not trapped, though a guest that treats a failed print as fatal may stop), and the
    /// report says the stream was truncated ([`crate::Report::stdout_truncated`]).
    Capture {
        /// The most bytes kept.
        limit: usize,
    },
    /// Handed to the embedder's writer as the guest writes, on the guest's thread (a writer
    /// that blocks holds the guest), and flushed when the guest flushes and at the end of the
    /// run; nothing is kept, so the guest may write any amount. The guest's children that
    /// inherit the stream write into the same writer, through a pipe that a thread of wrt
    /// copies. A write the writer fails makes the guest's write fail with an I/O error (WASI
    /// `EIO`), and every later one too, and the report says the stream was truncated.
    Writer(OutputWriter),
}

impl GuestOutput {
    /// [`GuestOutput::Writer`] of `writer`.
    pub fn writer(writer: impl std::io::Write + Send + 'static) -> Self {
        Self::Writer(OutputWriter::new(writer))
    }
}

/// Where a core module's descriptor 1 or 2 writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Through WASI's own `fd_write` (a captured stream, or one the guest renumbered or closed).
    #[default]
    Wasi,
    /// Straight to wrt's own stdout or stderr ([`crate::GuestOutput::Inherit`]).
    Host,
    /// Nowhere: every write succeeds, as WASI's own does for a discarded stream
    /// ([`crate::GuestOutput::Null`]).
    Discard,
}

/// Where the guest's descriptors 1 and 2 write.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DirectStdio {
    pub(crate) streams: [Stream; 2],
    /// The most bytes a write takes on each stream, once looked at (`wasi::direct_writes`).
    pub(crate) pieces: [Option<usize>; 2],
}

impl DirectStdio {
    pub(crate) fn new(stdout: Stream, stderr: Stream) -> Self {
        Self { streams: [stdout, stderr], pieces: [None; 2] }
    }

    fn index(fd: i32) -> Option<usize> {
        match fd {
            1 => Some(0),
            2 => Some(1),
            _ => None,
        }
    }

    pub(crate) fn stream(self, fd: i32) -> Stream {
        Self::index(fd).map_or(Stream::Wasi, |at| self.streams[at])
    }

    /// Sends `fd`'s writes to WASI's own from now on.
    pub(crate) fn end(&mut self, fd: i32) {
        if let Some(at) = Self::index(fd) {
            self.streams[at] = Stream::Wasi;
        }
    }
}

//! Why talking to a running child failed: reading, writing, waiting, polling, signalling.

use std::io;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::Signal;

use super::SpawnError;
use crate::command::Stream;

/// Why reading a child's stdout or stderr failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The stream was not configured as [`Stdio::Piped`](crate::Stdio::Piped).
    #[error("{stream} of process {pid} is not piped")]
    NotPiped {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
    },
    /// The child wrote more than the stream's output limit; the stream is closed and the
    /// rest of the output is lost.
    #[error("{stream} of process {pid} passed its limit of {limit} bytes")]
    OutputLimit {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
        /// The limit in bytes.
        limit: u64,
    },
    /// The child's timeout passed while waiting for output; the child was terminated.
    #[error("process {pid} timed out after {timeout:?}")]
    TimedOut {
        /// The child's pid.
        pid: u32,
        /// The child's timeout.
        timeout: Duration,
    },
    /// The read failed.
    #[error("failed to read {stream} of process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why writing to a child's stdin failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Stdin was not piped, or has been closed.
    #[error("stdin of process {pid} is not an open pipe")]
    NotPiped {
        /// The child's pid.
        pid: u32,
    },
    /// The child's timeout passed while waiting for the pipe; the child was terminated.
    #[error("process {pid} timed out after {timeout:?}")]
    TimedOut {
        /// The child's pid.
        pid: u32,
        /// The child's timeout.
        timeout: Duration,
    },
    /// The write failed; [`io::ErrorKind::BrokenPipe`] when the child closed its stdin.
    #[error("failed to write stdin of process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why waiting for a child failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// `waitid`, `wait4`, `poll` or `kill` failed.
    #[error("failed to wait for process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why [`Child::poll`](crate::Child::poll) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PollError {
    /// `poll`, `waitid` or `kill` failed.
    #[error("failed to poll process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why signalling a child failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KillError {
    /// `kill(-pgid, signal)` failed (for example `EPERM` after a set-user-ID `execve`).
    #[error("failed to send {signal} to process group {pgid}")]
    Signal {
        /// The child's process group.
        pgid: u32,
        /// The signal.
        signal: Signal,
        /// The error number.
        #[source]
        source: Errno,
    },
}

/// Why [`Child::communicate`](crate::Child::communicate) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommunicateError {
    /// Polling, reading or writing a pipe failed.
    #[error("failed to exchange data with process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Waiting for the child failed.
    #[error(transparent)]
    Wait(#[from] WaitError),
}

/// Why [`Spawner::output`](crate::Spawner::output) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The program was not started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// It was started, but talking to it failed; it has been killed and reaped.
    #[error(transparent)]
    Communicate(#[from] CommunicateError),
}

/// Why setting the window size of a child's pseudo-terminal failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResizeError {
    /// No stream of the child is a [`Stdio::Pty`](crate::Stdio::Pty).
    #[error("process {pid} has no pseudo-terminal")]
    NotPty {
        /// The child's pid.
        pid: u32,
    },
    /// The `TIOCSWINSZ` ioctl failed.
    #[error("failed to resize the pseudo-terminal of process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

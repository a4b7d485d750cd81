//! `std::io` for guests (feature `std`): the [`io::ErrorKind`] of each code and [`WrtError`],
//! the error inside the `io::Error`s of a failed host call.

use std::error::Error;
use std::fmt;
use std::io;
use std::string::String;

use crate::code::ErrorCode;

impl ErrorCode {
    /// The [`io::ErrorKind`] of errors with this code:
    ///
    /// | code | kind |
    /// | --- | --- |
    /// | `DENIED` | [`PermissionDenied`](io::ErrorKind::PermissionDenied) |
    /// | `NOT_FOUND` | [`NotFound`](io::ErrorKind::NotFound) |
    /// | `NOT_EXECUTABLE` | [`PermissionDenied`](io::ErrorKind::PermissionDenied) |
    /// | `SPAWN_FAILED` | [`Other`](io::ErrorKind::Other) |
    /// | `TIMEOUT` | [`TimedOut`](io::ErrorKind::TimedOut) |
    /// | `OUTPUT_LIMIT` | [`FileTooLarge`](io::ErrorKind::FileTooLarge) |
    /// | `TOO_MANY_CHILDREN` | [`ResourceBusy`](io::ErrorKind::ResourceBusy) |
    /// | `BAD_HANDLE` | [`InvalidInput`](io::ErrorKind::InvalidInput) |
    /// | `INVALID_ARGUMENT` | [`InvalidInput`](io::ErrorKind::InvalidInput) |
    /// | `NO_MEMORY` | [`OutOfMemory`](io::ErrorKind::OutOfMemory) |
    /// | `WOULD_BLOCK` | [`WouldBlock`](io::ErrorKind::WouldBlock) |
    /// | `OUT_OF_BOUNDS` | [`InvalidInput`](io::ErrorKind::InvalidInput) |
    /// | `BAD_UTF8` | [`InvalidData`](io::ErrorKind::InvalidData) |
    /// | `NOT_PIPED` | [`BrokenPipe`](io::ErrorKind::BrokenPipe) (there is no pipe to use) |
    /// | `BROKEN_PIPE` | [`BrokenPipe`](io::ErrorKind::BrokenPipe) |
    /// | `IO` | [`Other`](io::ErrorKind::Other) |
    /// | `OUT_OF_RANGE` | [`InvalidInput`](io::ErrorKind::InvalidInput) |
    ///
    /// A code this version does not know (from a newer host) maps to `Other`.
    pub const fn kind(self) -> io::ErrorKind {
        match self {
            Self::Denied | Self::NotExecutable => io::ErrorKind::PermissionDenied,
            Self::NotFound => io::ErrorKind::NotFound,
            Self::SpawnFailed | Self::Io => io::ErrorKind::Other,
            Self::Timeout => io::ErrorKind::TimedOut,
            Self::OutputLimit => io::ErrorKind::FileTooLarge,
            Self::TooManyChildren => io::ErrorKind::ResourceBusy,
            Self::BadHandle | Self::InvalidArgument | Self::OutOfBounds | Self::OutOfRange => {
                io::ErrorKind::InvalidInput
            }
            Self::NoMemory => io::ErrorKind::OutOfMemory,
            Self::WouldBlock => io::ErrorKind::WouldBlock,
            Self::BadUtf8 => io::ErrorKind::InvalidData,
            Self::NotPiped | Self::BrokenPipe => io::ErrorKind::BrokenPipe,
        }
    }

    /// The code of an `io::Error` that holds a [`WrtError`] (as the guest SDK's errors for a
    /// failed host call do), or `None` for any other error.
    pub fn of(err: &io::Error) -> Option<Self> {
        WrtError::from_io(err)?.code()
    }
}

/// A failed `wrt_v1` host call: the error inside the guest SDK's `io::Error`s.
///
/// It holds the raw code, what the SDK was doing, and the host's message (from `last_error`,
/// fetched right after the failure), which for a denied spawn names the rule that denied it and
/// the flag that would allow it. The `io::Error` displays the host's message, or when there is
/// none, what the SDK was doing and what the code means.
#[derive(Debug, Clone)]
pub struct WrtError {
    code: i32,
    context: String,
    message: String,
}

impl WrtError {
    /// The error with code `code`, raised by the guest itself (no host message); `context` says
    /// what it was doing.
    pub fn new(code: ErrorCode, context: String) -> Self {
        Self { code: code.raw(), context, message: String::new() }
    }

    /// The error a host function returned: `code` made positive (possibly unknown to this
    /// version), what the caller was doing, and the host's message (empty for none).
    pub fn from_host(code: i32, context: String, message: String) -> Self {
        Self { code, context, message }
    }

    /// The [`WrtError`] inside `err`, if `err` came from a failed host call.
    pub fn from_io(err: &io::Error) -> Option<&Self> {
        err.get_ref()?.downcast_ref::<Self>()
    }

    /// The code, or `None` if this version does not know it.
    pub fn code(&self) -> Option<ErrorCode> {
        ErrorCode::from_raw(self.code)
    }

    /// The code as the host returned it, made positive.
    pub fn raw_code(&self) -> i32 {
        self.code
    }

    /// The host's message for this error (empty if it gave none).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What the SDK was doing, e.g. ``cannot spawn `ls` ``.
    pub fn context(&self) -> &str {
        &self.context
    }

    fn kind(&self) -> io::ErrorKind {
        self.code().map_or(io::ErrorKind::Other, ErrorCode::kind)
    }
}

impl fmt::Display for WrtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.message.is_empty() {
            return f.write_str(&self.message);
        }
        match self.code() {
            Some(code) => write!(f, "{}: {} ({code})", self.context, code.description()),
            None => write!(f, "{}: unknown wrt_v1 error code {}", self.context, self.code),
        }
    }
}

impl Error for WrtError {}

impl From<WrtError> for io::Error {
    fn from(err: WrtError) -> Self {
        io::Error::new(err.kind(), err)
    }
}

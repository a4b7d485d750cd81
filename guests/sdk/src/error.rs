//! The ABI's error codes and their mapping to `std::io::Error`.

use std::error::Error;
use std::fmt;
use std::io;

use crate::sys;

/// An error code of the `wrt_v1` ABI (the table in `docs/abi.md`). Host functions return it
/// negated.
///
/// Every `io::Error` this crate returns for a failed host call carries a [`WrtError`] with the
/// code; [`ErrorCode::of`] gets it back. The [`io::ErrorKind`] of each code:
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `DENIED` (1): the policy refused the program, an argument, a variable, or the working
    /// directory.
    Denied = 1,
    /// `NOT_FOUND` (2): no such program (on the policy's PATH, or at that path).
    NotFound = 2,
    /// `NOT_EXECUTABLE` (3): the program exists but cannot be executed.
    NotExecutable = 3,
    /// `SPAWN_FAILED` (4): the operating system refused to start it.
    SpawnFailed = 4,
    /// `TIMEOUT` (5): the wait ended before the child did.
    Timeout = 5,
    /// `OUTPUT_LIMIT` (6): the stream passed its output limit.
    OutputLimit = 6,
    /// `TOO_MANY_CHILDREN` (7): the policy's limit of concurrent children is reached.
    TooManyChildren = 7,
    /// `BAD_HANDLE` (8): not a handle (of the right kind: child or buffer), or already released.
    BadHandle = 8,
    /// `INVALID_ARGUMENT` (9): a malformed request, flag, stream, signal or count.
    InvalidArgument = 9,
    /// `NO_MEMORY` (10): the host refused to allocate: too many handles, or the sandbox's memory
    /// limit reached even after collections.
    NoMemory = 10,
    /// `WOULD_BLOCK` (11): a non-blocking call had nothing to do.
    WouldBlock = 11,
    /// `OUT_OF_BOUNDS` (12): a pointer and length outside linear memory, or overflowing 32 bits.
    OutOfBounds = 12,
    /// `BAD_UTF8` (13): a string of the request is not UTF-8.
    BadUtf8 = 13,
    /// `NOT_PIPED` (14): the stream is not piped, or stdin is already closed.
    NotPiped = 14,
    /// `BROKEN_PIPE` (15): the child closed its stdin.
    BrokenPipe = 15,
    /// `IO` (16): another host I/O error.
    Io = 16,
    /// `OUT_OF_RANGE` (17): an offset or range outside a buffer.
    OutOfRange = 17,
}

impl ErrorCode {
    const ALL: [Self; 17] = [
        Self::Denied,
        Self::NotFound,
        Self::NotExecutable,
        Self::SpawnFailed,
        Self::Timeout,
        Self::OutputLimit,
        Self::TooManyChildren,
        Self::BadHandle,
        Self::InvalidArgument,
        Self::NoMemory,
        Self::WouldBlock,
        Self::OutOfBounds,
        Self::BadUtf8,
        Self::NotPiped,
        Self::BrokenPipe,
        Self::Io,
        Self::OutOfRange,
    ];

    /// The code with the number `code` as in the ABI's table (positive: `1` is `DENIED`), or
    /// `None` if this version does not know it.
    pub const fn from_raw(code: i32) -> Option<Self> {
        if code >= 1 && code <= Self::ALL.len() as i32 { Some(Self::ALL[code as usize - 1]) } else { None }
    }

    /// The number of the code as in the ABI's table (positive).
    pub const fn raw(self) -> i32 {
        self as i32
    }

    /// The name of the code in the ABI's table, e.g. `"DENIED"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Denied => "DENIED",
            Self::NotFound => "NOT_FOUND",
            Self::NotExecutable => "NOT_EXECUTABLE",
            Self::SpawnFailed => "SPAWN_FAILED",
            Self::Timeout => "TIMEOUT",
            Self::OutputLimit => "OUTPUT_LIMIT",
            Self::TooManyChildren => "TOO_MANY_CHILDREN",
            Self::BadHandle => "BAD_HANDLE",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::NoMemory => "NO_MEMORY",
            Self::WouldBlock => "WOULD_BLOCK",
            Self::OutOfBounds => "OUT_OF_BOUNDS",
            Self::BadUtf8 => "BAD_UTF8",
            Self::NotPiped => "NOT_PIPED",
            Self::BrokenPipe => "BROKEN_PIPE",
            Self::Io => "IO",
            Self::OutOfRange => "OUT_OF_RANGE",
        }
    }

    /// The [`io::ErrorKind`] of errors with this code (the table above).
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

    /// The code of an error this crate returned for a failed host call, or `None` for any other
    /// error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wrt_guest::{Command, ErrorCode};
    ///
    /// let err = Command::new("rm").arg("-rf").arg("/").spawn().unwrap_err();
    /// assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied));
    /// ```
    pub fn of(err: &io::Error) -> Option<Self> {
        WrtError::from_io(err)?.code()
    }

    /// What the code means, in a few lowercase words.
    fn description(self) -> &'static str {
        match self {
            Self::Denied => "denied by the sandbox's policy",
            Self::NotFound => "program not found",
            Self::NotExecutable => "the program is not executable",
            Self::SpawnFailed => "the host failed to start the program",
            Self::Timeout => "timed out",
            Self::OutputLimit => "the output limit was passed",
            Self::TooManyChildren => "too many children are running",
            Self::BadHandle => "not a live child or buffer handle",
            Self::InvalidArgument => "invalid argument",
            Self::NoMemory => "the host is out of handles or memory",
            Self::WouldBlock => "the operation would block",
            Self::OutOfBounds => "a buffer is outside linear memory",
            Self::BadUtf8 => "a string is not UTF-8",
            Self::NotPiped => "the stream is not piped or already closed",
            Self::BrokenPipe => "the child closed its stdin",
            Self::Io => "host I/O error",
            Self::OutOfRange => "an offset or range is outside the buffer",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed `wrt_v1` host call: the error inside the `io::Error`s of this crate.
///
/// It holds the raw code, what the SDK was doing, and the host's message (from `last_error`,
/// fetched right after the failure), which for a denied spawn names the rule that denied it and
/// the flag that would allow it. The `io::Error` displays the host's message, or when there is
/// none, what the SDK was doing and what the code means.
///
/// # Examples
///
/// ```no_run
/// use wrt_guest::{Command, ErrorCode, WrtError};
///
/// if let Err(err) = Command::new("ls").status() {
///     if let Some(wrt) = WrtError::from_io(&err) {
///         eprintln!("{} ({}): {}", wrt.code().map_or("?", ErrorCode::name), wrt.raw_code(), wrt.message());
///     }
/// }
/// ```
#[derive(Debug, Clone)]
pub struct WrtError {
    code: i32,
    context: String,
    message: String,
}

impl WrtError {
    /// The error with code `code`, built by the SDK itself (no host message).
    pub(crate) fn new(code: ErrorCode, context: String) -> Self {
        Self { code: code.raw(), context, message: String::new() }
    }

    /// The [`WrtError`] inside `err`, if `err` came from a failed host call.
    pub fn from_io(err: &io::Error) -> Option<&Self> {
        err.get_ref()?.downcast_ref::<Self>()
    }

    /// The code, or `None` if this version of the SDK does not know it.
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

/// Turns a host function's result into `Ok(value)` or the `io::Error` for its code, with the
/// host's message. `context` says what the SDK was doing (only built on failure).
pub(crate) fn check(ret: i32, context: impl FnOnce() -> String) -> io::Result<u32> {
    if ret >= 0 {
        return Ok(ret as u32);
    }
    Err(error(ret, context))
}

/// The `io::Error` for the failed result `ret` (negative).
pub(crate) fn error(ret: i32, context: impl FnOnce() -> String) -> io::Error {
    if ret == sys::UNSUPPORTED {
        return io::Error::new(
            io::ErrorKind::Unsupported,
            "wrt_v1 host functions exist only in wasm32 guests of wrt (this is a build for another target)",
        );
    }
    let code = ret.checked_neg().unwrap_or(i32::MAX);
    // The message of WOULD_BLOCK says nothing new, and non-blocking loops see it often.
    let message = if code == ErrorCode::WouldBlock.raw() { String::new() } else { last_error() };
    WrtError { code, context: context(), message }.into()
}

/// The host's message for the last error of this sandbox (empty if there is none).
fn last_error() -> String {
    let mut buf = vec![0; 256];
    let Ok(len) = usize::try_from(sys::last_error(&mut buf)) else { return String::new() };
    if len > buf.len() {
        buf.resize(len, 0);
        let again = usize::try_from(sys::last_error(&mut buf)).unwrap_or(0);
        buf.truncate(again.min(len));
    } else {
        buf.truncate(len);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for (number, code) in (1..).zip(ErrorCode::ALL) {
            assert_eq!(code.raw(), number);
            assert_eq!(ErrorCode::from_raw(number), Some(code));
        }
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(ErrorCode::from_raw(18), None);
        assert_eq!(ErrorCode::from_raw(-1), None);
        assert_eq!(ErrorCode::Denied.name(), "DENIED");
        assert_eq!(ErrorCode::Io.name(), "IO");
        assert_eq!(ErrorCode::OutOfRange.name(), "OUT_OF_RANGE");
        assert_eq!(ErrorCode::OutOfRange.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(ErrorCode::NoMemory.kind(), io::ErrorKind::OutOfMemory);
    }

    #[test]
    fn io_errors_carry_the_code_and_kind() {
        let err: io::Error =
            WrtError { code: 1, context: "cannot spawn `ls`".into(), message: "`ls` is not allowed".into() }.into();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied));
        assert_eq!(err.to_string(), "`ls` is not allowed");

        let err: io::Error = WrtError::new(ErrorCode::NotExecutable, "cannot spawn `x`".into()).into();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), "cannot spawn `x`: the program is not executable (NOT_EXECUTABLE)");

        let err: io::Error = WrtError { code: 99, context: "wait".into(), message: String::new() }.into();
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert_eq!(ErrorCode::of(&err), None);
        assert_eq!(WrtError::from_io(&err).unwrap().raw_code(), 99);
        assert_eq!(err.to_string(), "wait: unknown wrt_v1 error code 99");

        assert_eq!(ErrorCode::of(&io::Error::other("not from the host")), None);
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn host_builds_report_unsupported() {
        let err = check(sys::spawn(b"x"), || "cannot spawn `x`".into()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Unsupported);
        assert_eq!(check(3, String::new).unwrap(), 3);
    }
}

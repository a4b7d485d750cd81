//! The error codes of the guest ABI (docs/abi.md, "Error codes"). Host functions return them
//! negated.

use core::fmt;

/// An error code of the guest ABI `wrt_v1` (the table in docs/abi.md). Host functions return
/// it negated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
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
    /// `OUT_OF_RANGE` (17): an offset or range outside a host buffer.
    OutOfRange = 17,
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub const ALL: [ErrorCode; 17] = [
        ErrorCode::Denied,
        ErrorCode::NotFound,
        ErrorCode::NotExecutable,
        ErrorCode::SpawnFailed,
        ErrorCode::Timeout,
        ErrorCode::OutputLimit,
        ErrorCode::TooManyChildren,
        ErrorCode::BadHandle,
        ErrorCode::InvalidArgument,
        ErrorCode::NoMemory,
        ErrorCode::WouldBlock,
        ErrorCode::OutOfBounds,
        ErrorCode::BadUtf8,
        ErrorCode::NotPiped,
        ErrorCode::BrokenPipe,
        ErrorCode::Io,
        ErrorCode::OutOfRange,
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

    /// The value a host function returns for this error: the code, negated.
    pub const fn to_return(self) -> i32 {
        -(self as i32)
    }

    /// The code a host function returned, if `ret` is an error return.
    pub const fn from_return(ret: i32) -> Option<Self> {
        match ret.checked_neg() {
            Some(code) => Self::from_raw(code),
            None => None,
        }
    }

    /// The code's name as docs/abi.md writes it, e.g. `"DENIED"`.
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

    /// What the code means, in a few lowercase words.
    pub const fn description(self) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_distinct() {
        for (number, code) in (1..).zip(ErrorCode::ALL) {
            assert_eq!(code.raw(), number);
            assert_eq!(ErrorCode::from_raw(number), Some(code));
            assert_eq!(ErrorCode::from_return(code.to_return()), Some(code));
        }
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(ErrorCode::from_raw(18), None);
        assert_eq!(ErrorCode::from_raw(-1), None);
        assert_eq!(ErrorCode::from_return(0), None);
        assert_eq!(ErrorCode::from_return(-18), None);
        assert_eq!(ErrorCode::from_return(i32::MIN), None);
    }
}

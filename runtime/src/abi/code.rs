//! The error codes of the guest ABI (docs/abi.md, "Error codes"). Host functions return them
//! negated.

/// An error code of the guest ABI `wrt_v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The policy refused the program, an argument, a variable, or the working directory.
    Denied = 1,
    /// No such program.
    NotFound = 2,
    /// The program exists but cannot be executed.
    NotExecutable = 3,
    /// The operating system refused to start it.
    SpawnFailed = 4,
    /// The wait ended before the child did.
    Timeout = 5,
    /// The stream passed its output limit.
    OutputLimit = 6,
    /// The policy's limit of concurrent children is reached.
    TooManyChildren = 7,
    /// Not a handle, or already released.
    BadHandle = 8,
    /// A malformed request, flag, stream, signal or count.
    InvalidArgument = 9,
    /// The host refused to allocate.
    NoMemory = 10,
    /// A non-blocking call had nothing to do.
    WouldBlock = 11,
    /// A pointer and length outside linear memory, or overflowing 32 bits.
    OutOfBounds = 12,
    /// A string of the request is not UTF-8.
    BadUtf8 = 13,
    /// The stream is not piped, or stdin is already closed.
    NotPiped = 14,
    /// The child closed its stdin.
    BrokenPipe = 15,
    /// Another host I/O error.
    Io = 16,
    /// An offset or range outside a host buffer.
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

    /// The value a host function returns for this error: the code, negated.
    pub fn to_return(self) -> i32 {
        -(self as i32)
    }

    /// The code a host function returned, if `ret` is an error return.
    pub fn from_return(ret: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.to_return() == ret)
    }

    /// The code's name as docs/abi.md writes it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Denied => "DENIED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::NotExecutable => "NOT_EXECUTABLE",
            ErrorCode::SpawnFailed => "SPAWN_FAILED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::OutputLimit => "OUTPUT_LIMIT",
            ErrorCode::TooManyChildren => "TOO_MANY_CHILDREN",
            ErrorCode::BadHandle => "BAD_HANDLE",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::NoMemory => "NO_MEMORY",
            ErrorCode::WouldBlock => "WOULD_BLOCK",
            ErrorCode::OutOfBounds => "OUT_OF_BOUNDS",
            ErrorCode::BadUtf8 => "BAD_UTF8",
            ErrorCode::NotPiped => "NOT_PIPED",
            ErrorCode::BrokenPipe => "BROKEN_PIPE",
            ErrorCode::Io => "IO",
            ErrorCode::OutOfRange => "OUT_OF_RANGE",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_distinct() {
        for (i, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(code as i32, i as i32 + 1);
            assert_eq!(ErrorCode::from_return(code.to_return()), Some(code));
        }
        assert_eq!(ErrorCode::from_return(0), None);
        assert_eq!(ErrorCode::from_return(-18), None);
    }
}

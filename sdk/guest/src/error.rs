//! Failed host calls as `std::io::Error`s. The codes, their `io::ErrorKind`s and [`WrtError`]
//! are the ABI crate's (`wrt-abi`).

use std::io;

pub use wrt_abi::{ErrorCode, WrtError};

use crate::sys;

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
    WrtError::from_host(code, context(), message).into()
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
        let err: io::Error = WrtError::from_host(1, "cannot spawn `ls`".into(), "`ls` is not allowed".into()).into();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied));
        assert_eq!(err.to_string(), "`ls` is not allowed");

        let err: io::Error = WrtError::new(ErrorCode::NotExecutable, "cannot spawn `x`".into()).into();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), "cannot spawn `x`: the program is not executable (NOT_EXECUTABLE)");

        let err: io::Error = WrtError::from_host(99, "wait".into(), String::new()).into();
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

//! Failed `wrt:process` calls as `std::io::Error`s: the WIT `error` record becomes a
//! [`WrtError`] (the core ABI's error, from `wrt-abi`), whose code is the same [`ErrorCode`].

use std::io;

pub use wrt_abi::{ErrorCode, WrtError};

use crate::sys;

/// The core ABI's code of a WIT error code: the same name, the same place (`denied` is 1).
pub(crate) const fn code(code: sys::ErrorCode) -> ErrorCode {
    use sys::ErrorCode as Wit;
    match code {
        Wit::Denied => ErrorCode::Denied,
        Wit::NotFound => ErrorCode::NotFound,
        Wit::NotExecutable => ErrorCode::NotExecutable,
        Wit::SpawnFailed => ErrorCode::SpawnFailed,
        Wit::Timeout => ErrorCode::Timeout,
        Wit::OutputLimit => ErrorCode::OutputLimit,
        Wit::TooManyChildren => ErrorCode::TooManyChildren,
        Wit::BadHandle => ErrorCode::BadHandle,
        Wit::InvalidArgument => ErrorCode::InvalidArgument,
        Wit::NoMemory => ErrorCode::NoMemory,
        Wit::WouldBlock => ErrorCode::WouldBlock,
        Wit::OutOfBounds => ErrorCode::OutOfBounds,
        Wit::BadUtf8 => ErrorCode::BadUtf8,
        Wit::NotPiped => ErrorCode::NotPiped,
        Wit::BrokenPipe => ErrorCode::BrokenPipe,
        Wit::Io => ErrorCode::Io,
        Wit::OutOfRange => ErrorCode::OutOfRange,
    }
}

/// The `io::Error` of a failed host call: the host's code and message; `context` says what the
/// SDK was doing (shown only when the host gave no message).
pub(crate) fn from_wit(err: sys::Error, context: impl FnOnce() -> String) -> io::Error {
    WrtError::from_host(code(err.code).raw(), context(), err.message).into()
}

/// An error the SDK raises itself, before asking the host.
pub(crate) fn local(code: ErrorCode, context: String) -> io::Error {
    WrtError::new(code, context).into()
}

/// Whether `err` is the WIT error `code`.
pub(crate) fn is(err: &sys::Error, expected: ErrorCode) -> bool {
    code(err.code) == expected
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The WIT's `error-code` cases, in the order of `wit/process.wit`.
    const WIT: [sys::ErrorCode; 17] = {
        use sys::ErrorCode as Wit;
        [
            Wit::Denied,
            Wit::NotFound,
            Wit::NotExecutable,
            Wit::SpawnFailed,
            Wit::Timeout,
            Wit::OutputLimit,
            Wit::TooManyChildren,
            Wit::BadHandle,
            Wit::InvalidArgument,
            Wit::NoMemory,
            Wit::WouldBlock,
            Wit::OutOfBounds,
            Wit::BadUtf8,
            Wit::NotPiped,
            Wit::BrokenPipe,
            Wit::Io,
            Wit::OutOfRange,
        ]
    };

    /// The WIT enum and the core ABI's codes cannot drift apart: same count, same order (the
    /// WIT case at index `i` is code `i + 1`), same names (`not-found` is `NOT_FOUND`). A case
    /// added to the WIT fails to compile in `code` until it is mapped.
    #[test]
    fn the_wit_error_codes_are_the_abi_codes() {
        assert_eq!(WIT.len(), ErrorCode::ALL.len());
        for (wit, abi) in WIT.into_iter().zip(ErrorCode::ALL) {
            assert_eq!(wit as i32 + 1, abi.raw(), "{wit:?} is not in the place of {abi}");
            assert_eq!(format!("{wit:?}"), format!("ErrorCode::{}", camel(abi.name())));
            assert_eq!(code(wit), abi);
        }
        // And the WIT file itself: its cases are the codes' names in kebab case, in order.
        let wit = include_str!("../../../wit/process.wit");
        let body = wit.split_once("enum error-code {").expect("the error-code enum").1;
        let body = body.split_once('}').expect("its end").0;
        let cases: Vec<&str> = body
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("//"))
            .map(|line| line.trim_end_matches(','))
            .collect();
        let names: Vec<String> = ErrorCode::ALL.iter().map(|c| c.name().to_lowercase().replace('_', "-")).collect();
        assert_eq!(cases, names);
    }

    /// `NOT_FOUND` as `NotFound`.
    fn camel(name: &str) -> String {
        name.split('_').map(|word| word[..1].to_owned() + &word[1..].to_lowercase()).collect()
    }

    #[test]
    fn wit_errors_become_io_errors_with_the_code_and_message() {
        let err = sys::Error { code: sys::ErrorCode::Denied, message: "`ls` is not allowed".into() };
        let err = from_wit(err, || "cannot spawn `ls`".into());
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(ErrorCode::of(&err), Some(ErrorCode::Denied));
        assert_eq!(err.to_string(), "`ls` is not allowed");

        let err = from_wit(sys::Error { code: sys::ErrorCode::OutOfRange, message: String::new() }, || "read".into());
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "read: an offset or range is outside the buffer (OUT_OF_RANGE)");
        assert!(is(&sys::Error { code: sys::ErrorCode::Timeout, message: String::new() }, ErrorCode::Timeout));
    }
}

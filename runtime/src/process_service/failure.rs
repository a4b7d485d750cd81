//! How a service call fails without trapping the guest: an error code of `wrt_abi` and the
//! message that explains it.

use wrt_abi::ErrorCode;

/// A failed service call: the guest gets `code` (a negative return of `wrt_v1`, or a WIT
/// `error-code`) and `message` (`last_error`, or the WIT error's message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// What a service call answers: its value or a [`Failure`], inside the trap (`Err` of the
/// outer result) that stops the guest when the sandbox's deadline passes.
pub(crate) type Served<T> = wasmtime::Result<Result<T, Failure>>;

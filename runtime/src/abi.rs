//! The guest ABI `wrt_v1` (docs/abi.md), an adapter: its host functions read a guest's requests
//! from linear memory with every pointer, length and handle checked, have the process service
//! (`process_service`) answer them, and write the answers back (a return code, `last_error`, a
//! status record); plus the host buffers' functions and child stream I/O.

/// The value of `$result`, or an early `Ok` return of its error code with the formatted message
/// recorded as the guest's last error.
macro_rules! try_code {
    ($state:expr, $result:expr, $($msg:tt)+) => {
        match $result {
            Ok(value) => value,
            Err(code) => return Ok($state.fail(code, format!($($msg)+))),
        }
    };
}

/// As `try_code!`, for the steps of a spawn request before it reaches the spawner: the
/// failure is also written to the audit log, with the program's bytes `$program` (a slice).
macro_rules! try_request {
    ($state:expr, $program:expr, $result:expr, $($msg:tt)+) => {
        match $result {
            Ok(value) => value,
            Err(code) => return Ok($state.fail_request(code, $program, format!($($msg)+))),
        }
    };
}

pub(crate) mod buffers;
mod guest_memory;
pub(crate) mod host;
mod last_error;
pub(crate) mod memory;
#[cfg(test)]
mod request;
pub(crate) mod status;

/// The import module name of the ABI.
pub(crate) const MODULE: &str = "wrt_v1";

/// Defines every function of `wrt_v1` in `linker`: the functions on children, `last_error`
/// and the host buffers'.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::Linker<crate::guest_state::GuestState>,
    mode: crate::host_fn::Mode,
) -> wasmtime::Result<()> {
    host::add_to_linker(linker)?;
    linker.func_wrap(MODULE, "last_error", last_error::last_error)?;
    buffers::add_to_linker(linker, mode)
}

//! The process service: a guest's children and what both guest ABIs do with them. It holds the
//! spawn state (spawner, children by handle, drains of captured streams) and answers spawn, run,
//! wait, wait-any, kill, release and resize with typed results: a value, a [`Failure`] (an
//! error code and its message, which the guest gets), or a trap (the sandbox's deadline).
//!
//! The core ABI `wrt_v1` (`abi::host`) and the component bindings `wrt:process`
//! (`component::process`) are two thin adapters over it: each reads its own form of a request
//! (bytes in linear memory, or WIT records checked by the same rules), calls the service, and
//! writes the answer back in its own form (a return code and `last_error`, or a WIT result).

/// The value of `$result`, or an early return of a [`Failure`] with its error code and the
/// formatted message.
macro_rules! tried {
    ($result:expr, $($msg:tt)+) => {
        match $result {
            Ok(value) => value,
            Err(code) => return Ok(Err($crate::process_service::Failure::new(code, format!($($msg)+)))),
        }
    };
}

pub(crate) mod control;
pub(crate) mod drain;
mod failure;
pub(crate) mod handles;
pub(crate) mod io;
pub(crate) mod spawn;
pub(crate) mod spawn_state;
pub(crate) mod wait;

pub(crate) use failure::{Failure, Served};

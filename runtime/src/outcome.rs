//! How a guest run ended. A guest stopping in one of the ways guests do is an outcome, not an
//! error: errors are reserved for failures of wrt itself.

use std::fmt;
use std::time::Duration;

use crate::value::WasmValue;

/// How a guest run ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// `_start` returned (code 0) or the guest called `proc_exit(code)`, in its start function
    /// or later. `code` is the status exactly as the guest passed it (WASI's `u32`, read as
    /// `i32`); every status is an exit, none is a trap. `wrt run` exits with its low 8 bits, as
    /// POSIX `exit` does.
    Exited(i32),
    /// An invoked export ([`crate::Instance::invoke`]) returned these values.
    Returned(Vec<WasmValue>),
    /// The guest trapped: unreachable, out-of-bounds access, stack overflow, a host function
    /// refusing to continue, and so on.
    Trapped(TrapInfo),
    /// The wall-clock timeout passed, while wasm ran or while the guest was blocked in a host
    /// call that stops at the deadline.
    TimedOut(Duration),
    /// The guest used all its fuel.
    OutOfFuel(u64),
    /// The run was cancelled ([`crate::CancelToken::cancel`]).
    Cancelled,
}

/// The exit status of a process whose guest trapped, ran out of fuel or was cancelled: 128 +
/// SIGABRT, as `wasmtime run`.
pub const EXIT_TRAP: u8 = 134;
/// The exit status of a process whose guest timed out, as `timeout(1)`.
pub const EXIT_TIMEOUT: u8 = 124;

impl Outcome {
    /// Whether the guest finished normally with status 0 (or returned from an export).
    pub fn success(&self) -> bool {
        matches!(self, Outcome::Exited(0) | Outcome::Returned(_))
    }

    /// The exit status of a process that ran the guest and ends with it (`wrt run`, a container
    /// of the containerd shim): an exit's low 8 bits, as POSIX `exit`; 0 for returned values;
    /// [`EXIT_TIMEOUT`] for a timeout; [`EXIT_TRAP`] for every other end.
    pub fn exit_status(&self) -> u8 {
        match self {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "POSIX keeps a status's low 8 bits"
            )]
            Outcome::Exited(code) => *code as u8,
            Outcome::Returned(_) => 0,
            Outcome::TimedOut(_) => EXIT_TIMEOUT,
            Outcome::Trapped(_) | Outcome::OutOfFuel(_) | Outcome::Cancelled => EXIT_TRAP,
        }
    }
}

/// Why a guest trapped, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct TrapInfo {
    /// The wasm trap code, if the guest trapped on a wasm instruction. `None` when a host
    /// function stopped the guest with an error.
    pub trap: Option<wasmtime::Trap>,
    /// One line saying what happened.
    pub message: String,
    /// The wasm backtrace, one frame a line, innermost first, if one was captured.
    pub backtrace: Option<String>,
}

impl fmt::Display for TrapInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(backtrace) = &self.backtrace {
            write!(f, "\n{backtrace}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_is_posix_for_exits_and_fixed_for_every_other_end() {
        let trap = TrapInfo { trap: None, message: String::new(), backtrace: None };
        for (outcome, status) in [
            (Outcome::Exited(0), 0),
            (Outcome::Exited(7), 7),
            (Outcome::Exited(256 + 7), 7),
            (Outcome::Exited(-1), 255),
            (Outcome::Returned(Vec::new()), 0),
            (Outcome::TimedOut(Duration::from_secs(1)), EXIT_TIMEOUT),
            (Outcome::Trapped(trap), EXIT_TRAP),
            (Outcome::OutOfFuel(10), EXIT_TRAP),
            (Outcome::Cancelled, EXIT_TRAP),
        ] {
            assert_eq!(outcome.exit_status(), status, "{outcome:?}");
        }
    }
}

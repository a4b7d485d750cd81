//! One error type per public operation; every variant names its subject.
//!
//! The errors are grouped by what the operation works on: `spawn` (starting a program),
//! `sandbox` (confining it), `child` (talking to a running child) and `policy` (building or
//! loading a policy).

use std::path::Path;

use crate::escape::Shown;

mod child;
mod policy;
mod sandbox;
mod spawn;

pub use self::child::{
    CommunicateError, KillError, OutputError, PollError, ReadError, ResizeError, WaitError, WriteError,
};
pub use self::policy::{PolicyError, PolicyFileError, UnknownKey};
pub use self::sandbox::{SandboxUnavailable, ViewUnavailable};
pub use self::spawn::{Denial, InvalidRequest, SpawnError};

fn shown(path: &Path) -> Shown<'_> {
    Shown(path.as_os_str())
}

/// `err` and its sources, joined with `: `: one line with everything each layer knows, for a
/// message that goes where `{:#}` formatting is not available (an audit record, a guest's
/// `last_error`).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

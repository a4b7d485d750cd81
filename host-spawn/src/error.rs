//! One error type per public operation; every variant names its subject.
//!
//! The errors are grouped by what the operation works on: `spawn` (starting a program),
//! `sandbox` (confining it), `child` (talking to a running child) and `policy` (building or
//! loading a policy).

use std::path::Path;

use wrt_text::Shown;

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

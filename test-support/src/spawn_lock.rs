//! The lock of the tests that fork, wait on children, send signals or count open fds (as nix's
//! `FORK_MTX`): each holds it until its children have been waited on, so that what it counts
//! and reaps is its own. One lock per test binary: each links its own copy of this crate.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Held by tests that fork, wait on children, send signals or count open fds, until their
/// children are reaped.
pub static SPAWN_LOCK: Mutex<()> = Mutex::new(());

/// Takes [`SPAWN_LOCK`], also after a test that held it panicked (its failure is its own).
pub fn spawn_lock() -> MutexGuard<'static, ()> {
    SPAWN_LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

//! Wait and wait-any: reap a child, or the first of several.

use std::time::{Duration, Instant};

use wrt_abi::ErrorCode;
use wrt_host_spawn::{Child, ChildOutcome, WaitError};
use wrt_text::error_chain;

use super::spawn_state::{ChildEntry, SharedChild, SpawnState};
use super::{Failure, Served};
use crate::epoch_ticker::earliest;
use crate::stop::Stop;

/// Reaps `entry` if it ended by `deadline` (`None`: wait without limit). Returns whether it
/// has an outcome.
fn wait_entry(entry: &mut ChildEntry, deadline: Option<Instant>) -> Result<bool, WaitError> {
    if entry.outcome.is_some() {
        return Ok(true);
    }
    // Not `Child::wait`, which closes stdin: a wait leaves the child as it is.
    let limit = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
    let outcome = entry.child.lock().wait_timeout(limit)?;
    entry.reaped(outcome);
    Ok(entry.outcome.is_some())
}

/// Waits for the child behind `handle` until `user_deadline` (and never past the sandbox's):
/// its outcome, or a failure (`TIMEOUT` when it is still running).
pub(crate) fn wait(
    spawn: &mut SpawnState,
    stop: &Stop,
    handle: i32,
    user_deadline: Option<Instant>,
) -> Served<ChildOutcome> {
    let deadline = earliest(user_deadline, stop.deadline());
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let waited = wait_entry(entry, deadline);
    stop.check()?;
    let entry = tried!(spawn.children.get_mut(handle), "`{handle}` is not a handle");
    match waited {
        Ok(true) => Ok(Ok(entry.outcome.clone().expect("reaped"))),
        Ok(false) => {
            stop.check()?;
            Ok(Err(Failure::new(ErrorCode::Timeout, format!("child `{handle}` is still running"))))
        }
        Err(err) => Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
    }
}

/// Waits until one of the children behind `handles` has ended, until `user_deadline` (and
/// never past the sandbox's): its index and outcome, or a failure (`TIMEOUT` when none has).
pub(crate) fn wait_any(
    spawn: &mut SpawnState,
    stop: &Stop,
    handles: &[i32],
    user_deadline: Option<Instant>,
) -> Served<(usize, ChildOutcome)> {
    let deadline = earliest(user_deadline, stop.deadline());
    let entries = match spawn.children.get_many_mut(handles) {
        Ok(entries) => entries,
        Err(bad) => return Ok(Err(Failure::new(ErrorCode::BadHandle, format!("`{bad}` is not a handle")))),
    };
    let (indexes, shared): (Vec<usize>, Vec<SharedChild>) =
        entries.into_iter().map(|(index, entry)| (index, entry.child.clone())).unzip();
    let mut guards: Vec<_> = shared.iter().map(SharedChild::lock).collect();
    let mut children: Vec<&mut Child> = guards.iter_mut().map(|guard| &mut **guard).collect();
    let waited = wrt_host_spawn::wait_any(&mut children, deadline.map(|d| d.saturating_duration_since(Instant::now())));
    drop(children);
    drop(guards);
    stop.check()?;
    match waited {
        Ok(Some((position, outcome))) => {
            let index = indexes[position];
            if let Ok(entry) = spawn.children.get_mut(handles[index]) {
                entry.reaped(Some(outcome.clone()));
            }
            Ok(Ok((index, outcome)))
        }
        Ok(None) => {
            stop.check()?;
            Ok(Err(Failure::new(ErrorCode::Timeout, "no child ended before the timeout")))
        }
        Err(err) => Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err)))),
    }
}

//! `wait` and `wait_any`: reap a child, or the first of several, and write its status record.

use std::time::{Duration, Instant};

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_abi::consts::MAX_WAIT_ANY;
use wrt_abi::status::STATUS_LEN;
use wrt_host_spawn::{Child, ChildOutcome, WaitError, error_chain};

use super::super::memory;
use super::super::spawn_state::{ChildEntry, SharedChild};
use super::super::status;
use super::{Result, check_deadline, earliest, until, with_memory};
use crate::state::GuestState;

/// Reaps `entry` if it ended by `deadline` (`None`: wait without limit). Returns whether it
/// has an outcome.
fn wait_entry(entry: &mut ChildEntry, deadline: Option<Instant>) -> std::result::Result<bool, WaitError> {
    if entry.outcome.is_some() {
        return Ok(true);
    }
    // Not `Child::wait`, which closes stdin: a wait leaves the child as it is.
    let limit = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
    let outcome = entry.child.lock().wait_timeout(limit)?;
    entry.reaped(outcome);
    Ok(entry.outcome.is_some())
}

pub(super) fn wait(mut caller: Caller<'_, GuestState>, handle: i32, timeout_ms: i64, status_ptr: i32) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        let status_range = try_code!(
            state,
            memory::range(data.len(), status_ptr, STATUS_LEN as i32),
            "status record at {status_ptr:#x} is outside linear memory"
        );
        match wait_handle(state, handle, until(timeout_ms))? {
            Ok(outcome) => {
                data[status_range].copy_from_slice(&status::encode(&outcome));
                Ok(0)
            }
            Err(ret) => Ok(ret),
        }
    })
}

/// Waits for the child behind `handle` until `user_deadline` (and never past the sandbox's):
/// its outcome, or an error return (`TIMEOUT` when it is still running). Both ABIs wait here.
pub(crate) fn wait_handle(
    state: &mut GuestState,
    handle: i32,
    user_deadline: Option<Instant>,
) -> Result<std::result::Result<ChildOutcome, i32>> {
    let deadline = earliest(user_deadline, state.deadline);
    let entry = try_err!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let waited = wait_entry(entry, deadline);
    check_deadline(state)?;
    let entry = try_err!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    match waited {
        Ok(true) => Ok(Ok(entry.outcome.clone().expect("reaped"))),
        Ok(false) => {
            check_deadline(state)?;
            Ok(Err(state.fail(ErrorCode::Timeout, format!("child `{handle}` is still running"))))
        }
        Err(err) => Ok(Err(state.fail(ErrorCode::Io, error_chain(&err)))),
    }
}

pub(super) fn wait_any(
    mut caller: Caller<'_, GuestState>,
    handles_ptr: i32,
    count: i32,
    timeout_ms: i64,
    status_ptr: i32,
) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if !(1..=MAX_WAIT_ANY).contains(&count) {
            return Ok(state
                .fail(ErrorCode::InvalidArgument, format!("wait_any takes 1 to {MAX_WAIT_ANY} handles, not {count}")));
        }
        let bytes = try_code!(
            state,
            memory::slice(data, handles_ptr, count * 4),
            "handle array {handles_ptr:#x}+{count}×4 is outside linear memory"
        );
        let handles: Vec<i32> = bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let status_range = try_code!(
            state,
            memory::range(data.len(), status_ptr, STATUS_LEN as i32),
            "status record at {status_ptr:#x} is outside linear memory"
        );
        match wait_any_handle(state, &handles, until(timeout_ms))? {
            Ok((index, outcome)) => {
                data[status_range].copy_from_slice(&status::encode(&outcome));
                Ok(index as i32)
            }
            Err(ret) => Ok(ret),
        }
    })
}

/// Waits until one of the children behind `handles` has ended, until `user_deadline` (and
/// never past the sandbox's): its index and outcome, or an error return. Both ABIs wait here.
pub(crate) fn wait_any_handle(
    state: &mut GuestState,
    handles: &[i32],
    user_deadline: Option<Instant>,
) -> Result<std::result::Result<(usize, ChildOutcome), i32>> {
    let deadline = earliest(user_deadline, state.deadline);
    let entries = match state.spawn.children.get_many_mut(handles) {
        Ok(entries) => entries,
        Err(bad) => return Ok(Err(state.fail(ErrorCode::BadHandle, format!("`{bad}` is not a handle")))),
    };
    let (indexes, shared): (Vec<usize>, Vec<SharedChild>) =
        entries.into_iter().map(|(index, entry)| (index, entry.child.clone())).unzip();
    let mut guards: Vec<_> = shared.iter().map(SharedChild::lock).collect();
    let mut children: Vec<&mut Child> = guards.iter_mut().map(|guard| &mut **guard).collect();
    let waited = wrt_host_spawn::wait_any(&mut children, deadline.map(|d| d.saturating_duration_since(Instant::now())));
    drop(children);
    drop(guards);
    check_deadline(state)?;
    match waited {
        Ok(Some((position, outcome))) => {
            let index = indexes[position];
            if let Ok(entry) = state.spawn.children.get_mut(handles[index]) {
                entry.reaped(Some(outcome.clone()));
            }
            Ok(Ok((index, outcome)))
        }
        Ok(None) => {
            check_deadline(state)?;
            Ok(Err(state.fail(ErrorCode::Timeout, "no child ended before the timeout")))
        }
        Err(err) => Ok(Err(state.fail(ErrorCode::Io, error_chain(&err)))),
    }
}

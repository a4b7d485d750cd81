//! `wait` and `wait_any`: reap a child, or the first of several, and write its status record.

use std::time::{Duration, Instant};

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_abi::consts::MAX_WAIT_ANY;
use wrt_abi::status::STATUS_LEN;
use wrt_host_spawn::{Child, WaitError, error_chain};

use super::super::memory;
use super::super::spawn_state::ChildEntry;
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
    let outcome = entry.child.wait_timeout(limit)?;
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
        let user_deadline = until(timeout_ms);
        let deadline = earliest(user_deadline, state.deadline);
        let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
        let waited = wait_entry(entry, deadline);
        check_deadline(state)?;
        let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
        match waited {
            Ok(true) => {
                let record = status::encode(entry.outcome.as_ref().expect("reaped"));
                data[status_range].copy_from_slice(&record);
                Ok(0)
            }
            Ok(false) => {
                check_deadline(state)?;
                Ok(state.fail(ErrorCode::Timeout, format!("child `{handle}` is still running")))
            }
            Err(err) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
        }
    })
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
        let deadline = earliest(until(timeout_ms), state.deadline);
        let entries = match state.spawn.children.get_many_mut(&handles) {
            Ok(entries) => entries,
            Err(bad) => return Ok(state.fail(ErrorCode::BadHandle, format!("`{bad}` is not a handle"))),
        };
        let (indexes, mut children): (Vec<usize>, Vec<&mut Child>) =
            entries.into_iter().map(|(index, entry)| (index, &mut entry.child)).unzip();
        let waited =
            wrt_host_spawn::wait_any(&mut children, deadline.map(|d| d.saturating_duration_since(Instant::now())));
        check_deadline(state)?;
        match waited {
            Ok(Some((position, outcome))) => {
                let index = indexes[position];
                let record = status::encode(&outcome);
                if let Ok(entry) = state.spawn.children.get_mut(handles[index]) {
                    entry.reaped(Some(outcome));
                }
                data[status_range].copy_from_slice(&record);
                Ok(index as i32)
            }
            Ok(None) => {
                check_deadline(state)?;
                Ok(state.fail(ErrorCode::Timeout, "no child ended before the timeout"))
            }
            Err(err) => Ok(state.fail(ErrorCode::Io, error_chain(&err))),
        }
    })
}

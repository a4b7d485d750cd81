//! Collections and allocations of host buffers from inside host functions: the accountant
//! decides, this module calls the collectors (the guest's exported `wrt_gc`, and wasmtime's for
//! `externref` buffers) and enforces the hard limit.

use std::time::Instant;

use wasmtime::{AsContextMut, Caller, TypedFunc};

use super::accountant::Kind;
use super::buffer::{MAX_BUFFER, Storage};
use crate::abi::code::ErrorCode;
use crate::abi::handles::MAX_LIVE_BUFFERS;
use crate::state::GuestState;

/// The export a guest with its own collector provides (docs/abi.md, "Collections").
pub(crate) const GUEST_GC_EXPORT: &str = "wrt_gc";

/// External bytes allowed when the sandbox has no memory limit: 4 GiB.
pub(crate) const DEFAULT_EXTERNAL_LIMIT: u64 = 4 << 30;

/// The guest's collector hook, looked up once per instance. An export of another type is not
/// a collector.
fn guest_gc(caller: &mut Caller<'_, GuestState>) -> Option<TypedFunc<i32, ()>> {
    if let Some(found) = &caller.data().external.guest_gc {
        return found.clone();
    }
    let found = caller
        .get_export(GUEST_GC_EXPORT)
        .and_then(wasmtime::Extern::into_func)
        .and_then(|func| func.typed::<i32, ()>(&caller).ok());
    caller.data_mut().external.guest_gc = Some(found.clone());
    found
}

/// Whether a collection could free anything: the guest has a collector or holds `externref`
/// buffers.
fn can_collect(caller: &mut Caller<'_, GuestState>) -> bool {
    caller.data().external.accountant.ledger.refs() > 0 || guest_gc(caller).is_some()
}

/// Runs a collection of `kind`: wasmtime's collector when the guest holds `externref` buffers,
/// then the guest's own. The guest may release (or even allocate) buffers from its collector;
/// nothing it does there starts another collection.
///
/// # Errors
///
/// A trap in the guest's collector, or the sandbox's deadline passing in it.
pub(crate) fn collect(caller: &mut Caller<'_, GuestState>, kind: Kind) -> wasmtime::Result<()> {
    if caller.data().external.accountant.collecting {
        return Ok(());
    }
    caller.data_mut().external.accountant.collecting = true;
    let start = Instant::now();
    let result = run_collectors(caller, kind);
    let accountant = &mut caller.data_mut().external.accountant;
    accountant.collecting = false;
    accountant.collected(kind, start.elapsed());
    result
}

fn run_collectors(caller: &mut Caller<'_, GuestState>, kind: Kind) -> wasmtime::Result<()> {
    if let Some(gc) = guest_gc(caller) {
        gc.call(caller.as_context_mut(), kind as i32)?;
    }
    if caller.data().external.accountant.ledger.refs() > 0 {
        caller.gc(None)?;
    }
    Ok(())
}

/// Makes room for a buffer of `len` bytes (and, with `handle`, a handle for it): runs the
/// collection the policy asks for, then checks the hard limit, collecting fully (twice at most)
/// while the buffer would not fit. `Ok(Err(ret))` is `-NO_MEMORY` (or `-INVALID_ARGUMENT` for a
/// buffer over 1 GiB), recorded as the last error.
///
/// # Errors
///
/// As [`collect`].
pub(crate) fn reserve(
    caller: &mut Caller<'_, GuestState>,
    len: usize,
    handle: bool,
) -> wasmtime::Result<Result<(), i32>> {
    if len > MAX_BUFFER {
        let message = format!("a buffer of {len} bytes is larger than the 1 GiB maximum");
        return Ok(Err(caller.data_mut().spawn.fail(ErrorCode::InvalidArgument, message)));
    }
    if let Some(kind) = caller.data_mut().external.accountant.before_alloc(len as u64)
        && can_collect(caller)
    {
        collect(caller, kind)?;
    }
    let mut full_collections = 0;
    loop {
        let state = caller.data_mut();
        let live = state.external.accountant.ledger.live();
        let limit = state.external_limit();
        let handles_left = !handle || state.external.buffers.len() < MAX_LIVE_BUFFERS;
        if live.saturating_add(len as u64) <= limit && handles_left {
            return Ok(Ok(()));
        }
        if full_collections == 2 || state.external.accountant.collecting || !can_collect(caller) {
            let what = if handles_left {
                format!("{len} bytes: {live} bytes of buffers are live and the limit is {limit}")
            } else {
                format!("a buffer handle: {MAX_LIVE_BUFFERS} are live")
            };
            let message = format!("cannot allocate {what} (after {full_collections} full collections)");
            return Ok(Err(caller.data_mut().spawn.fail(ErrorCode::NoMemory, message)));
        }
        collect(caller, Kind::Full)?;
        full_collections += 1;
    }
}

/// A new storage of `len` bytes, after [`reserve`]: `Ok(Err(ret))` when there is no room or the
/// host cannot map the memory.
///
/// # Errors
///
/// As [`collect`].
pub(crate) fn allocate(
    caller: &mut Caller<'_, GuestState>,
    len: usize,
    handle: bool,
) -> wasmtime::Result<Result<Storage, i32>> {
    if let Err(ret) = reserve(caller, len, handle)? {
        return Ok(Err(ret));
    }
    Ok(new_storage(caller.data_mut(), len))
}

/// A storage of `len` bytes charged to the guest, without any collection (room was reserved).
pub(crate) fn new_storage(state: &mut GuestState, len: usize) -> Result<Storage, i32> {
    let external = &mut state.external;
    match Storage::new(&external.pool, &external.accountant.ledger, len) {
        Some(storage) => {
            external.accountant.allocated(len as u64);
            Ok(storage)
        }
        None => Err(state.spawn.fail(ErrorCode::NoMemory, format!("the host could not map {len} bytes"))),
    }
}

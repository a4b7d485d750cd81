//! Collections and allocations of host buffers from inside host functions: the accountant
//! decides, this module calls the collectors (the guest's exported `wrt_gc`, and wasmtime's for
//! `externref` buffers) and enforces the hard limit.
//!
//! A collection runs guest code, which may free and reuse any of its memory. So a host function
//! copies what it needs from linear memory *before* any collection can run: the collection the
//! policy asks for runs after the new buffer is filled ([`Room::finish`]), and at the hard
//! limit the caller saves its source bytes before the first full collection. Those saved bytes
//! count against the memory limit like buffers do ([`reserve`]).

use std::time::Instant;

use wasmtime::{AsContextMut, Caller, TypedFunc};

use crate::external::accountant::Kind;
use crate::external::buffer::{BufferView, DEFAULT_EXTERNAL_LIMIT, MAX_BUFFER, Storage};
use crate::external::error::{AllocError, Shortfall};
use crate::guest_state::GuestState;
use crate::host_fn::{Mode, call_wasm};
use wrt_abi::consts::MAX_LIVE_BUFFERS;

/// The export a guest with its own collector provides (docs/abi.md, "Collections").
pub(crate) const GUEST_GC_EXPORT: &str = "wrt_gc";

/// Bytes of linear memory saved before a collection that may come out of the host's fixed
/// overhead (docs/abi.md, "Memory limit") rather than out of the memory limit: 4 MiB. Saved
/// bytes live only for one call, so a call at the limit whose sources fit here still gets its
/// collection.
pub(crate) const SAVE_ALLOWANCE: u64 = 4 << 20;

/// The part of `saved` bytes that counts against the memory limit.
fn charged(saved: u64) -> u64 {
    saved.saturating_sub(SAVE_ALLOWANCE)
}

/// What a caller of [`reserve`] runs once before the first full collection, to copy its sources
/// out of linear memory.
pub(crate) type Save<'a> = &'a mut (dyn FnMut(&mut Caller<'_, GuestState>) + Send);

/// The guest's collector hook, looked up once per instance. An export of another type is not
/// a collector.
fn guest_gc(caller: &mut Caller<'_, GuestState>) -> Option<TypedFunc<i32, ()>> {
    if let Some(found) = &caller.data_mut().external().guest_gc {
        return found.clone();
    }
    let found = caller
        .get_export(GUEST_GC_EXPORT)
        .and_then(wasmtime::Extern::into_func)
        .and_then(|func| func.typed::<i32, ()>(&caller).ok());
    caller.data_mut().external().guest_gc = Some(found.clone());
    found
}

/// Whether a collection could free anything: the guest has a collector or holds `externref`
/// buffers.
fn can_collect(caller: &mut Caller<'_, GuestState>) -> bool {
    caller.data_mut().external().accountant.ledger.refs() > 0 || guest_gc(caller).is_some()
}

/// Runs a collection of `kind`: the guest's own collector, then wasmtime's when the guest holds
/// `externref` buffers. The guest may release (or even allocate) buffers from its collector;
/// nothing it does there starts another collection.
///
/// # Errors
///
/// A trap in the guest's collector, or the sandbox's deadline passing in it.
pub(crate) async fn collect(caller: &mut Caller<'_, GuestState>, kind: Kind) -> wasmtime::Result<()> {
    if caller.data_mut().external().accountant.collecting {
        return Ok(());
    }
    caller.data_mut().external().accountant.collecting = true;
    let start = Instant::now();
    let result = run_collectors(caller, kind).await;
    let accountant = &mut caller.data_mut().external().accountant;
    accountant.collecting = false;
    accountant.collected(kind, start.elapsed());
    result
}

async fn run_collectors(caller: &mut Caller<'_, GuestState>, kind: Kind) -> wasmtime::Result<()> {
    if let Some(gc) = guest_gc(caller) {
        call_wasm(caller.as_context_mut(), &gc, kind as i32).await?;
    }
    if caller.data_mut().external().accountant.ledger.refs() > 0 {
        match caller.data().mode {
            Mode::Sync => caller.gc(None)?,
            Mode::Async => caller.gc_async(None).await?,
        }
    }
    Ok(())
}

/// The most bytes host buffers could take if every buffer were freed: the memory limit less
/// linear memory and tables (which never shrink), or [`DEFAULT_EXTERNAL_LIMIT`].
fn ceiling(state: &GuestState) -> u64 {
    match state.limiter.max_memory() {
        Some(max) => max.saturating_sub(state.limiter.wasm_bytes()),
        None => DEFAULT_EXTERNAL_LIMIT,
    }
}

/// Room made for a new buffer, and the collection the policy asks for once it is filled.
#[must_use = "run `finish` once the new buffer is filled"]
pub(crate) struct Room {
    pending: Option<Kind>,
}

impl Room {
    /// Runs the collection the policy asked for, if any. Call it once the new buffer is filled
    /// and stored, before returning to the guest.
    ///
    /// # Errors
    ///
    /// As [`collect`].
    pub(crate) async fn finish(self, caller: &mut Caller<'_, GuestState>) -> wasmtime::Result<()> {
        match self.pending {
            Some(kind) if can_collect(caller) => collect(caller, kind).await,
            _ => Ok(()),
        }
    }
}

/// Makes room for a buffer of `len` bytes (`None`: a view of existing bytes, which needs no
/// memory) and, with `handle`, a handle for it, within the hard limit: when it does not fit,
/// empty slabs are unmapped, then (at most twice) a full collection runs, with `save` called
/// once before the first so the caller can copy its sources out of linear memory.
///
/// `save_len` is how many bytes `save` copies; they are host memory until the new buffer is
/// filled, so past the first [`SAVE_ALLOWANCE`] bytes (which the fixed overhead covers) they
/// count against the limit like the buffer itself: nothing is saved unless the copy fits the
/// room left now plus the allowance, and the buffer is made only when it fits beside the copy.
/// A request that could not fit even if every buffer were freed (`len` plus the charged part
/// of `save_len` over the limit less linear memory and tables) fails at once, before anything
/// is saved or collected.
/// `Ok(Err(_))` says why the buffer was refused; the ABI layer maps it to the guest's code.
///
/// # Errors
///
/// As [`collect`].
pub(crate) async fn reserve(
    caller: &mut Caller<'_, GuestState>,
    len: Option<usize>,
    handle: bool,
    save_len: u64,
    save: Save<'_>,
) -> wasmtime::Result<Result<Room, AllocError>> {
    if let Some(room) = room_at_once(caller.data_mut(), len, handle) {
        return Ok(Ok(room));
    }
    let reserved = reserve_collecting(caller, len, handle, save_len, save).await?;
    if let Err(err) = &reserved {
        count_refusal(caller.data_mut(), err);
    }
    Ok(reserved)
}

/// The room [`reserve`] finds at its first look, when the buffer and its handle fit as things
/// stand (no empty slab to give back, no full collection to run first; the policy's collection
/// may still be asked for): every buffer call but those at the memory limit. `None` sends the
/// caller to [`reserve`]'s loop. A plain function, inlined into the callers, so that the common
/// case steps through no future of its own.
#[inline]
fn room_at_once(state: &mut GuestState, len: Option<usize>, handle: bool) -> Option<Room> {
    if len.is_some_and(|len| len > MAX_BUFFER) {
        return None;
    }
    let room = state.buffer_room();
    let external = state.external();
    let needed = len.map_or(0, |len| external.growth_for(len));
    if needed > room || (handle && !external.buffers.has_room(MAX_LIVE_BUFFERS)) {
        return None;
    }
    let pending = len.and_then(|len| external.accountant.before_alloc(len as u64));
    Some(Room { pending })
}

/// Counts a buffer refused for want of memory ([`crate::Stats::memory_refusals`]).
fn count_refusal(state: &mut GuestState, err: &AllocError) {
    if let AllocError::NoRoom { shortfall, .. } = err
        && shortfall.is_memory()
    {
        state.limiter.refusals += 1;
    }
}

/// [`reserve`], without counting its refusals.
async fn reserve_collecting(
    caller: &mut Caller<'_, GuestState>,
    len: Option<usize>,
    handle: bool,
    save_len: u64,
    save: Save<'_>,
) -> wasmtime::Result<Result<Room, AllocError>> {
    let bytes = len.unwrap_or(0);
    if bytes > MAX_BUFFER {
        return Ok(Err(AllocError::TooLarge { bytes }));
    }
    let pending = match len {
        Some(len) => caller.data_mut().external().accountant.before_alloc(len as u64),
        None => None,
    };
    let mut full_collections = 0;
    let mut trimmed = false;
    // Bytes saved from linear memory, held until the new buffer is filled.
    let mut saved = 0u64;
    loop {
        let state = caller.data_mut();
        let needed = len.map_or(0, |len| state.external().growth_for(len));
        let room = state.buffer_room();
        let handles_left = !handle || state.external().buffers.has_room(MAX_LIVE_BUFFERS);
        if needed.saturating_add(charged(saved)) <= room && handles_left {
            let pending = if full_collections > 0 { None } else { pending };
            return Ok(Ok(Room { pending }));
        }
        if !trimmed {
            state.external().trim();
            trimmed = true;
            continue;
        }
        let live = state.external().accountant.ledger.live();
        let footprint = state.external().pool.footprint();
        let refuse = |shortfall| Ok(Err(AllocError::NoRoom { shortfall, full_collections }));
        let collectable = full_collections < 2 && !state.external().accountant.collecting;
        if !handles_left {
            if !collectable || !can_collect(caller) {
                return refuse(Shortfall::Handles { max: MAX_LIVE_BUFFERS });
            }
        } else {
            // Even with every buffer freed, the buffer and its saved sources must fit.
            let ceiling = ceiling(state);
            if (bytes as u64).saturating_add(charged(save_len)) > ceiling {
                return refuse(Shortfall::OverCeiling { bytes, save_len, ceiling });
            }
            if full_collections == 0 && charged(save_len) > room {
                return refuse(Shortfall::SaveDoesNotFit { bytes, live, footprint, save_len, room });
            }
            if !collectable || !can_collect(caller) {
                return refuse(Shortfall::Full { bytes, live, footprint, room });
            }
        }
        if full_collections == 0 {
            save(caller);
            saved = save_len;
        }
        collect(caller, Kind::Full).await?;
        full_collections += 1;
        trimmed = false;
    }
}

/// [`reserve`], then a new storage of `len` bytes, placed for a copy from address `source`
/// ([`new_buffer`]).
///
/// # Errors
///
/// As [`collect`].
pub(crate) async fn allocate(
    caller: &mut Caller<'_, GuestState>,
    len: usize,
    source: Option<usize>,
    handle: bool,
    save_len: u64,
    save: Save<'_>,
) -> wasmtime::Result<Result<(BufferView, Room), AllocError>> {
    let room = match room_at_once(caller.data_mut(), Some(len), handle) {
        Some(room) => room,
        None => match reserve(caller, Some(len), handle, save_len, save).await? {
            Ok(room) => room,
            Err(ret) => return Ok(Err(ret)),
        },
    };
    Ok(new_buffer(caller.data_mut(), len, source).map(|view| (view, room)))
}

/// A new buffer of `len` bytes charged to the guest, without any collection (room was
/// reserved): in a storage the guest released, when one of its size class is kept, or in a new
/// one. Its bytes are not initialised; they start at the same offset in a cache line as address
/// `source`, which they are about to be copied from, where the block has room
/// (`Block::start_for`).
///
/// # Errors
///
/// [`AllocError::MapFailed`] when the host cannot map the bytes.
pub(crate) fn new_buffer(state: &mut GuestState, len: usize, source: Option<usize>) -> Result<BufferView, AllocError> {
    let external = state.external();
    let view = match external.spares.take(len, source) {
        Some(view) => view,
        None => match Storage::new(&external.pool, &external.accountant.ledger, len, source) {
            Some(storage) => BufferView::new(storage),
            None => return Err(AllocError::MapFailed { len }),
        },
    };
    external.accountant.allocated(len as u64);
    Ok(view)
}

/// A storage of `len` bytes for a component's buffer. The component model does not let the
/// host call into a running component, so the policy's collections are not run here but made
/// due ([`take_due`]); at the limit the buffer is refused and a full collection made due, and
/// the guest retries after collecting. Room is also made by giving back empty slabs.
///
/// # Errors
///
/// [`AllocError::TooLarge`] past 1 GiB, [`AllocError::NoRoom`] when the bytes or a handle do
/// not fit, [`AllocError::MapFailed`] when the host cannot map them.
pub(crate) fn allocate_uncollected(
    state: &mut GuestState,
    len: usize,
    source: Option<usize>,
) -> Result<BufferView, AllocError> {
    if len > MAX_BUFFER {
        return Err(AllocError::TooLarge { bytes: len });
    }
    settle_pulled(state);
    if let Some(kind) = state.external().accountant.before_alloc(len as u64) {
        make_due(state, kind);
    }
    if !state.external().buffers.has_room(MAX_LIVE_BUFFERS) {
        make_due(state, Kind::Full);
        return Err(AllocError::NoRoom {
            shortfall: Shortfall::Handles { max: MAX_LIVE_BUFFERS },
            full_collections: 0,
        });
    }
    if state.external().growth_for(len) > state.buffer_room() {
        state.external().trim();
    }
    let room = state.buffer_room();
    if state.external().growth_for(len) > room {
        make_due(state, Kind::Full);
        let (live, footprint) = (state.external().accountant.ledger.live(), state.external().pool.footprint());
        let shortfall = Shortfall::Full { bytes: len, live, footprint, room };
        let err = AllocError::NoRoom { shortfall, full_collections: 0 };
        count_refusal(state, &err);
        return Err(err);
    }
    new_buffer(state, len, source)
}

/// Makes a collection of `kind` due (a full one covers a young one).
fn make_due(state: &mut GuestState, kind: Kind) {
    let due = &mut state.external().due;
    if *due != Some(Kind::Full) {
        *due = Some(kind);
    }
}

/// The collection due for a component, which it runs now: it counts as running until the
/// component's next buffer call.
pub(crate) fn take_due(state: &mut GuestState) -> Option<Kind> {
    settle_pulled(state);
    // No collection is ever due for a guest that has taken no buffer.
    let external = state.external.as_deref_mut()?;
    let kind = external.due.take()?;
    external.accountant.collecting = true;
    external.pulled = Some((kind, Instant::now()));
    Some(kind)
}

/// Records the collection a component pulled as finished: at its next buffer call, or when the
/// run ends.
pub(crate) fn settle_pulled(state: &mut GuestState) {
    if let Some(external) = state.external.as_deref_mut()
        && let Some((kind, since)) = external.pulled.take()
    {
        let accountant = &mut external.accountant;
        accountant.collecting = false;
        accountant.collected(kind, since.elapsed());
    }
}

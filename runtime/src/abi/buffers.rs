//! The host-buffer functions of `wrt_v1` (docs/abi.md, "Host buffers"): buffers by handle, by
//! `externref`, and read from or written to children. Like every ABI function they check each
//! pointer, length, offset and handle, and answer a guest mistake with an error code.

use std::ops::Range;

use wasmtime::{Caller, ExternRef, GcHeapOutOfMemory, Linker, Memory, Rooted};

use super::guest_memory::guest_memory;
use super::host::{NONBLOCK, check_read_args, read_child, write_child};
use super::memory;
use crate::collector::{self, Room};
use crate::external::buffer::{BufferView, MAX_BUFFER, RefBuffer, concat_source};
use crate::external::error::AllocError;
use crate::guest_state::GuestState;
use crate::host_fn::{Mode, define};
use wrt_abi::ErrorCode;

type Result<T> = wasmtime::Result<T>;
/// A buffer as wasm holds it: an `externref`, null on error.
type Ref = Option<Rooted<ExternRef>>;

use wrt_abi::consts::{CONCAT_PART_LEN as PART_LEN, MAX_CONCAT_PARTS as MAX_PARTS, MAX_READ_BUFFER as MAX_READ};
/// The most bytes one `read_buffer` takes from the child: 1 MiB (also the size of its scratch).
const MAX_CHUNK: u32 = 1 << 20;

pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: Mode) -> Result<()> {
    let m = super::MODULE;
    // These may run the guest's collector.
    define!(linker, mode, m, "buffer_from", buffer_from, (ptr: i32, len: i32))?;
    define!(linker, mode, m, "buffer_alloc", buffer_alloc, (len: i32))?;
    define!(linker, mode, m, "buffer_slice", buffer_slice, (buf: i32, start: i32, end: i32))?;
    define!(linker, mode, m, "buffer_concat", buffer_concat, (parts_ptr: i32, count: i32))?;
    define!(linker, mode, m, "read_buffer", read_buffer, (handle: i32, stream: i32, max_len: i32, flags: i32))?;
    define!(linker, mode, m, "ref_from", ref_from, (ptr: i32, len: i32))?;
    define!(linker, mode, m, "ref_alloc", ref_alloc, (len: i32))?;
    // These never do.
    linker.func_wrap(m, "buffer_len", buffer_len)?;
    linker.func_wrap(m, "buffer_read", buffer_read)?;
    linker.func_wrap(m, "buffer_write", buffer_write)?;
    linker.func_wrap(m, "buffer_release", buffer_release)?;
    linker.func_wrap(m, "write_buffer", write_buffer)?;
    linker.func_wrap(m, "ref_len", ref_len)?;
    linker.func_wrap(m, "ref_read", ref_read)?;
    linker.func_wrap(m, "ref_write", ref_write)?;
    linker.func_wrap(m, "ref_copy", ref_copy)?;
    Ok(())
}

/// A guest `i32` offset or length, read as unsigned.
fn unsigned(value: i32) -> usize {
    value as u32 as usize
}

/// The buffer behind `handle`.
fn view_of(state: &mut GuestState, handle: i32) -> std::result::Result<BufferView, i32> {
    match state.external().buffers.get(handle) {
        Ok(view) => Ok(view.clone()),
        Err(code) => Err(state.fail(code, format!("`{handle}` is not a buffer handle"))),
    }
}

/// The buffer an `externref` holds.
fn view_of_ref(
    caller: &mut Caller<'_, GuestState>,
    buf: Option<&Rooted<ExternRef>>,
) -> std::result::Result<BufferView, i32> {
    let view = buf
        .and_then(|r| r.data(&*caller).ok().flatten())
        .and_then(|data| data.downcast_ref::<RefBuffer>())
        .map(|b| b.view.clone());
    view.ok_or_else(|| caller.data_mut().fail(ErrorCode::BadHandle, "the reference is null or not a wrt buffer"))
}

/// The guest's memory and the range `ptr..ptr+len` of it.
fn memory_range(
    caller: &mut Caller<'_, GuestState>,
    ptr: i32,
    len: i32,
) -> std::result::Result<(Memory, Range<usize>), i32> {
    let memory = guest_memory(caller)?;
    let (data, state) = memory.data_and_store_mut(&mut *caller);
    match memory::range(data.len(), ptr, len) {
        Ok(range) => Ok((memory, range)),
        Err(code) => Err(state.fail(code, format!("bytes {ptr:#x}+{len:#x} are outside linear memory"))),
    }
}

/// A new buffer holding a copy of `ptr..ptr+len`, and the collection to finish with. The bytes
/// are copied before any guest code runs: at the hard limit they are saved before the first
/// collection (which may free and reuse them), otherwise the policy's collection waits for
/// [`Room::finish`].
async fn new_from_memory(
    caller: &mut Caller<'_, GuestState>,
    ptr: i32,
    len: i32,
    handle: bool,
) -> Result<std::result::Result<(BufferView, Room), i32>> {
    let (memory, range) = match memory_range(caller, ptr, len) {
        Ok(found) => found,
        Err(ret) => return Ok(Err(ret)),
    };
    let mut saved: Option<Vec<u8>> = None;
    let mut save = |caller: &mut Caller<'_, GuestState>| saved = Some(memory.data(&*caller)[range.clone()].to_vec());
    let source = Some((memory.data_ptr(&*caller) as usize).wrapping_add(range.start));
    let (view, room) =
        match collector::allocate(caller, range.len(), source, handle, range.len() as u64, &mut save).await? {
            Ok(allocated) => allocated,
            Err(err) => return Ok(Err(refused(caller.data_mut(), &err))),
        };
    match &saved {
        Some(bytes) => view.write(0, bytes),
        // No guest code ran since the range was checked, and linear memory never shrinks.
        None => view.write(0, &memory.data(&*caller)[range]),
    }
    Ok(Ok((view, room)))
}

/// A new buffer of `len` zero bytes, and the collection to finish with.
async fn new_zeroed(
    caller: &mut Caller<'_, GuestState>,
    len: i32,
    handle: bool,
) -> Result<std::result::Result<(BufferView, Room), i32>> {
    match collector::allocate(caller, unsigned(len), None, handle, 0, &mut |_| {}).await? {
        Ok((view, room)) => {
            view.zero();
            Ok(Ok((view, room)))
        }
        Err(err) => Ok(Err(refused(caller.data_mut(), &err))),
    }
}

/// Stores a new buffer under a handle, then runs the collection its allocation asked for.
async fn insert_new(
    caller: &mut Caller<'_, GuestState>,
    made: std::result::Result<(BufferView, Room), i32>,
) -> Result<i32> {
    let (view, room) = match made {
        Ok(made) => made,
        Err(ret) => return Ok(ret),
    };
    let handle = insert(caller.data_mut(), view);
    room.finish(caller).await?;
    Ok(handle)
}

/// Records why a buffer was refused and returns its code: `INVALID_ARGUMENT` for a buffer over
/// the 1 GiB maximum, `NO_MEMORY` otherwise.
fn refused(state: &mut GuestState, err: &AllocError) -> i32 {
    state.fail(err.code(), err.to_string())
}

/// Stores `view` under a new handle.
fn insert(state: &mut GuestState, view: BufferView) -> i32 {
    match state.external().buffers.insert(view) {
        Ok(handle) => handle,
        Err(code) => state.fail(code, "too many buffer handles"),
    }
}

async fn buffer_from(mut caller: Caller<'_, GuestState>, ptr: i32, len: i32) -> Result<i32> {
    let made = new_from_memory(&mut caller, ptr, len, true).await?;
    insert_new(&mut caller, made).await
}

async fn buffer_alloc(mut caller: Caller<'_, GuestState>, len: i32) -> Result<i32> {
    let made = new_zeroed(&mut caller, len, true).await?;
    insert_new(&mut caller, made).await
}

fn buffer_len(mut caller: Caller<'_, GuestState>, buf: i32) -> Result<i32> {
    Ok(view_of(caller.data_mut(), buf).map_or_else(|ret| ret, |view| view.len() as i32))
}

/// Copies `view[offset..]` into `ptr..ptr+len` (as much as fits): `buffer_read`, `ref_read`.
fn read_view(caller: &mut Caller<'_, GuestState>, view: &BufferView, offset: i32, ptr: i32, len: i32) -> i32 {
    let (memory, range) = match memory_range(caller, ptr, len) {
        Ok(found) => found,
        Err(ret) => return ret,
    };
    let (data, state) = memory.data_and_store_mut(&mut *caller);
    let offset = unsigned(offset);
    if offset > view.len() {
        return state.fail(ErrorCode::OutOfRange, format!("offset {offset} is past the buffer's {} bytes", view.len()));
    }
    let n = range.len().min(view.len() - offset);
    view.read(offset, &mut data[range.start..range.start + n]);
    n as i32
}

/// Copies `ptr..ptr+len` into `view` at `offset`: `buffer_write`, `ref_write`.
fn write_view(caller: &mut Caller<'_, GuestState>, view: &BufferView, offset: i32, ptr: i32, len: i32) -> i32 {
    let (memory, range) = match memory_range(caller, ptr, len) {
        Ok(found) => found,
        Err(ret) => return ret,
    };
    let (data, state) = memory.data_and_store_mut(&mut *caller);
    let offset = unsigned(offset);
    if !view.contains(offset, range.len()) {
        let message = format!("{} bytes at offset {offset} do not fit the buffer's {} bytes", range.len(), view.len());
        return state.fail(ErrorCode::OutOfRange, message);
    }
    view.write(offset, &data[range.clone()]);
    range.len() as i32
}

fn buffer_read(mut caller: Caller<'_, GuestState>, buf: i32, offset: i32, ptr: i32, len: i32) -> Result<i32> {
    Ok(match view_of(caller.data_mut(), buf) {
        Ok(view) => read_view(&mut caller, &view, offset, ptr, len),
        Err(ret) => ret,
    })
}

fn buffer_write(mut caller: Caller<'_, GuestState>, buf: i32, offset: i32, ptr: i32, len: i32) -> Result<i32> {
    Ok(match view_of(caller.data_mut(), buf) {
        Ok(view) => write_view(&mut caller, &view, offset, ptr, len),
        Err(ret) => ret,
    })
}

async fn buffer_slice(mut caller: Caller<'_, GuestState>, buf: i32, start: i32, end: i32) -> Result<i32> {
    let view = match view_of(caller.data_mut(), buf) {
        Ok(view) => view,
        Err(ret) => return Ok(ret),
    };
    let (start, end) = (unsigned(start), unsigned(end));
    let Some(slice) = view.slice(start, end) else {
        let message = format!("slice {start}..{end} is not inside the buffer's {} bytes", view.len());
        return Ok(caller.data_mut().fail(ErrorCode::OutOfRange, message));
    };
    // A slice needs no memory, only a handle: at the handle limit, collections may free some.
    let room = match collector::reserve(&mut caller, None, true, 0, &mut |_| {}).await? {
        Ok(room) => room,
        Err(err) => return Ok(refused(caller.data_mut(), &err)),
    };
    let handle = insert(caller.data_mut(), slice);
    room.finish(&mut caller).await?;
    Ok(handle)
}

/// One part of `buffer_concat`.
enum Part {
    Buffer(BufferView),
    Memory(Range<usize>),
}

/// The linear memory that the parts of one `buffer_concat` name: the union of their ranges, so
/// that parts naming the same bytes are saved once before a collection.
struct Sources {
    /// Disjoint ranges of linear memory, in order, each with its offset in `saved`: made when
    /// the sources are saved (at the hard limit only), so that a call that saves nothing
    /// allocates nothing for them.
    spans: Vec<(Range<usize>, usize)>,
    /// How many bytes the union holds.
    len: usize,
    /// The spans' bytes, once saved.
    saved: Option<Vec<u8>>,
}

/// The ranges of linear memory that `parts` name, not empty, in order.
fn memory_ranges(parts: &[Part]) -> impl Iterator<Item = &Range<usize>> {
    parts.iter().filter_map(|part| match part {
        Part::Memory(range) if !range.is_empty() => Some(range),
        _ => None,
    })
}

impl Sources {
    fn new(parts: &[Part]) -> Self {
        Self { spans: Vec::new(), len: Self::union_len(parts), saved: None }
    }

    /// How many bytes of linear memory `parts` name, each counted once. Parts that already lie
    /// in order without overlapping (a guest that concatenates its own pieces in order) are
    /// summed in one pass; any others are merged ([`Sources::spans_of`]).
    fn union_len(parts: &[Part]) -> usize {
        let mut end = 0;
        let mut sum = 0;
        for range in memory_ranges(parts) {
            if range.start < end {
                return Self::spans_of(parts).iter().map(|(span, _)| span.len()).sum();
            }
            sum += range.len();
            end = range.end;
        }
        sum
    }

    /// The union of the ranges of linear memory that `parts` name, as disjoint ranges in order,
    /// each with its offset in the saved bytes.
    fn spans_of(parts: &[Part]) -> Vec<(Range<usize>, usize)> {
        let mut ranges: Vec<Range<usize>> = memory_ranges(parts).cloned().collect();
        ranges.sort_unstable_by_key(|range| range.start);
        let mut spans: Vec<(Range<usize>, usize)> = Vec::new();
        let mut len = 0;
        for range in ranges {
            match spans.last_mut() {
                Some((last, _)) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => spans.push((range, 0)),
            }
        }
        for (range, offset) in &mut spans {
            *offset = len;
            len += range.len();
        }
        spans
    }

    /// Copies every span of `parts`' linear memory out of `data`.
    fn save(&mut self, parts: &[Part], data: &[u8]) {
        self.spans = Self::spans_of(parts);
        let mut saved = Vec::with_capacity(self.len);
        for (range, _) in &self.spans {
            saved.extend_from_slice(&data[range.clone()]);
        }
        self.saved = Some(saved);
    }

    /// The bytes of `range` (inside one span): saved, or still in `data`.
    fn bytes<'a>(&'a self, data: &'a [u8], range: &Range<usize>) -> &'a [u8] {
        let Some(saved) = self.saved.as_ref().filter(|_| !range.is_empty()) else {
            return &data[range.clone()];
        };
        let i = self.spans.partition_point(|(span, _)| span.start <= range.start) - 1;
        let (span, offset) = &self.spans[i];
        let at = offset + (range.start - span.start);
        &saved[at..at + range.len()]
    }
}

async fn buffer_concat(mut caller: Caller<'_, GuestState>, parts_ptr: i32, count: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let count = count as u32;
    if count > MAX_PARTS {
        return Ok(state.fail(ErrorCode::InvalidArgument, format!("{count} parts: at most {MAX_PARTS}")));
    }
    let table = try_code!(
        state,
        memory::slice(data, parts_ptr, (count * PART_LEN) as i32),
        "{count} parts at {parts_ptr:#x} are outside linear memory"
    );
    let mut parts = Vec::with_capacity(count as usize);
    let mut total = 0usize;
    for (i, raw) in table.chunks_exact(PART_LEN as usize).enumerate() {
        let field = |at: usize| i32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
        let (handle, ptr, len) = (field(0), field(4), field(8));
        let part = if handle == 0 {
            Part::Memory(try_code!(
                state,
                memory::range(data.len(), ptr, len),
                "part {i}: bytes {ptr:#x}+{len:#x} are outside linear memory"
            ))
        } else if ptr != 0 || len != 0 {
            return Ok(state.fail(ErrorCode::InvalidArgument, format!("part {i}: reserved fields are not 0")));
        } else {
            match state.external().buffers.get(handle) {
                Ok(view) => Part::Buffer(view.clone()),
                Err(code) => return Ok(state.fail(code, format!("part {i}: `{handle}` is not a buffer handle"))),
            }
        };
        total = total.saturating_add(match &part {
            Part::Buffer(view) => view.len(),
            Part::Memory(range) => range.len(),
        });
        parts.push(part);
    }
    if total > MAX_BUFFER {
        return Ok(state.fail(ErrorCode::InvalidArgument, format!("the parts add up to {total} bytes, over 1 GiB")));
    }
    // The parts' bytes are copied before any guest code runs: views are shared (a release in the
    // guest's collector cannot free them), and the linear memory the parts name is saved, once
    // however many parts name it, before a collection at the hard limit.
    let base = data.as_ptr() as usize;
    let source = concat_source(parts.iter().map(|part| match part {
        Part::Buffer(view) => (view.addr(), view.len()),
        Part::Memory(range) => (base.wrapping_add(range.start), range.len()),
    }));
    let mut sources = Sources::new(&parts);
    let save_len = sources.len as u64;
    let mut save = |caller: &mut Caller<'_, GuestState>| sources.save(&parts, memory.data(&*caller));
    let (view, room) = match collector::allocate(&mut caller, total, source, true, save_len, &mut save).await? {
        Ok(allocated) => allocated,
        Err(err) => return Ok(refused(caller.data_mut(), &err)),
    };
    let data = memory.data(&caller);
    let mut at = 0;
    for part in &parts {
        let len = match part {
            Part::Buffer(src) => {
                view.copy_from(at, src);
                src.len()
            }
            Part::Memory(range) => {
                view.write(at, sources.bytes(data, range));
                range.len()
            }
        };
        at += len;
    }
    drop(sources);
    insert_new(&mut caller, Ok((view, room))).await
}

fn buffer_release(mut caller: Caller<'_, GuestState>, buf: i32) -> Result<i32> {
    let state = caller.data_mut();
    let external = state.external();
    match external.buffers.remove(buf) {
        Ok(view) => {
            external.spares.keep(view);
            Ok(0)
        }
        Err(code) => Ok(state.fail(code, format!("`{buf}` is not a buffer handle"))),
    }
}

async fn read_buffer(
    mut caller: Caller<'_, GuestState>,
    handle: i32,
    stream: i32,
    max_len: i32,
    flags: i32,
) -> Result<i32> {
    let state = caller.data_mut();
    if let Err(ret) = check_read_args(state, stream, flags) {
        return Ok(ret);
    }
    let max_len = max_len as u32;
    if !(1..=MAX_READ).contains(&max_len) {
        let message = format!("max_len {max_len} is not between 1 and {MAX_READ}");
        return Ok(state.fail(ErrorCode::InvalidArgument, message));
    }
    if state.spawn.children.get_mut(handle).is_err() {
        return Ok(state.fail(ErrorCode::BadHandle, format!("`{handle}` is not a handle")));
    }
    // Make room first, so that bytes taken from the child always become a buffer.
    let chunk = max_len.min(MAX_CHUNK) as usize;
    let room = match collector::reserve(&mut caller, Some(chunk), true, 0, &mut |_| {}).await? {
        Ok(room) => room,
        Err(err) => return Ok(refused(caller.data_mut(), &err)),
    };
    let state = caller.data_mut();
    let mut scratch = std::mem::take(&mut state.external().scratch);
    if scratch.len() < chunk {
        scratch.resize(chunk, 0);
    }
    let read = read_child(state, handle, stream, flags, &mut scratch[..chunk]);
    let made = match read {
        Ok(n) if n > 0 => {
            let n = n as usize;
            match collector::new_buffer(state, n, Some(scratch.as_ptr() as usize)) {
                Ok(view) => {
                    view.write(0, &scratch[..n]);
                    Ok((view, room))
                }
                Err(err) => Err(refused(state, &err)),
            }
        }
        Ok(n) => {
            state.external().scratch = scratch;
            return Ok(n);
        }
        Err(err) => {
            state.external().scratch = scratch;
            return Err(err);
        }
    };
    state.external().scratch = scratch;
    insert_new(&mut caller, made).await
}

fn write_buffer(mut caller: Caller<'_, GuestState>, handle: i32, buf: i32, offset: i32, flags: i32) -> Result<i32> {
    let state = caller.data_mut();
    if flags & !NONBLOCK != 0 {
        return Ok(state.fail(ErrorCode::InvalidArgument, format!("unknown write flags {flags:#x}")));
    }
    let view = match view_of(state, buf) {
        Ok(view) => view,
        Err(ret) => return Ok(ret),
    };
    let offset = unsigned(offset);
    if offset > view.len() {
        let message = format!("offset {offset} is past the buffer's {} bytes", view.len());
        return Ok(state.fail(ErrorCode::OutOfRange, message));
    }
    if state.spawn.children.get_mut(handle).is_err() {
        return Ok(state.fail(ErrorCode::BadHandle, format!("`{handle}` is not a handle")));
    }
    if offset == view.len() {
        return Ok(0);
    }
    // The closure reaches the child's pipe and the spawn state, never a buffer.
    view.with_bytes(offset, |bytes| write_child(state, handle, flags, bytes))
}

/// Wraps `view` in a new `externref`, or records `NO_MEMORY` when wasmtime's GC heap is full.
fn new_ref(caller: &mut Caller<'_, GuestState>, view: BufferView) -> Result<Ref> {
    let ledger = std::sync::Arc::clone(&caller.data_mut().external().accountant.ledger);
    match ExternRef::new(&mut *caller, RefBuffer::new(view, &ledger)) {
        Ok(r) => Ok(Some(r)),
        Err(err) if err.is::<GcHeapOutOfMemory<RefBuffer>>() => {
            caller.data_mut().fail(ErrorCode::NoMemory, "wasmtime's GC heap is full");
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// Wraps a new buffer in an `externref` (rooted for this host call), then runs the collection
/// its allocation asked for.
async fn new_ref_finished(
    caller: &mut Caller<'_, GuestState>,
    made: std::result::Result<(BufferView, Room), i32>,
) -> Result<Ref> {
    let Ok((view, room)) = made else {
        return Ok(None);
    };
    let r = new_ref(caller, view)?;
    room.finish(caller).await?;
    Ok(r)
}

async fn ref_from(mut caller: Caller<'_, GuestState>, ptr: i32, len: i32) -> Result<Ref> {
    let made = new_from_memory(&mut caller, ptr, len, false).await?;
    new_ref_finished(&mut caller, made).await
}

async fn ref_alloc(mut caller: Caller<'_, GuestState>, len: i32) -> Result<Ref> {
    let made = new_zeroed(&mut caller, len, false).await?;
    new_ref_finished(&mut caller, made).await
}

fn ref_len(mut caller: Caller<'_, GuestState>, buf: Ref) -> Result<i32> {
    Ok(view_of_ref(&mut caller, buf.as_ref()).map_or_else(|ret| ret, |view| view.len() as i32))
}

fn ref_read(mut caller: Caller<'_, GuestState>, buf: Ref, offset: i32, ptr: i32, len: i32) -> Result<i32> {
    Ok(match view_of_ref(&mut caller, buf.as_ref()) {
        Ok(view) => read_view(&mut caller, &view, offset, ptr, len),
        Err(ret) => ret,
    })
}

fn ref_write(mut caller: Caller<'_, GuestState>, buf: Ref, offset: i32, ptr: i32, len: i32) -> Result<i32> {
    Ok(match view_of_ref(&mut caller, buf.as_ref()) {
        Ok(view) => write_view(&mut caller, &view, offset, ptr, len),
        Err(ret) => ret,
    })
}

fn ref_copy(mut caller: Caller<'_, GuestState>, dst: Ref, offset: i32, src: Ref) -> Result<i32> {
    let dst = match view_of_ref(&mut caller, dst.as_ref()) {
        Ok(view) => view,
        Err(ret) => return Ok(ret),
    };
    let src = match view_of_ref(&mut caller, src.as_ref()) {
        Ok(view) => view,
        Err(ret) => return Ok(ret),
    };
    let offset = unsigned(offset);
    if !dst.contains(offset, src.len()) {
        let message = format!("{} bytes at offset {offset} do not fit the buffer's {} bytes", src.len(), dst.len());
        return Ok(caller.data_mut().fail(ErrorCode::OutOfRange, message));
    }
    dst.copy_from(offset, &src);
    Ok(src.len() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(ranges: &[Range<usize>]) -> Vec<Part> {
        ranges.iter().cloned().map(Part::Memory).collect()
    }

    #[test]
    fn sources_count_each_byte_of_linear_memory_once() {
        // In order, apart or touching: summed in one pass.
        assert_eq!(Sources::new(&memory(&[0..10, 20..25, 25..30])).len, 20);
        // Out of order, overlapping, nested, repeated, empty: merged.
        assert_eq!(Sources::new(&memory(&[20..25, 0..10])).len, 15);
        assert_eq!(Sources::new(&memory(&[0..10, 5..15])).len, 15);
        assert_eq!(Sources::new(&memory(&[0..100, 10..20, 30..40])).len, 100);
        assert_eq!(Sources::new(&memory(&[0..8, 0..8, 0..8])).len, 8);
        assert_eq!(Sources::new(&memory(&[4..4, 0..3, 2..2])).len, 3);
        assert_eq!(Sources::new(&[]).len, 0);
    }

    #[test]
    fn saved_sources_give_each_range_its_own_bytes() {
        let data: Vec<u8> = (0..64).collect();
        for ranges in [vec![0..10, 20..25, 25..30], vec![20..25, 0..10, 5..15, 22..24]] {
            let parts = memory(&ranges);
            let mut sources = Sources::new(&parts);
            assert!(sources.spans.is_empty(), "nothing is laid out before a save");
            sources.save(&parts, &data);
            assert_eq!(sources.saved.as_ref().map(Vec::len), Some(sources.len));
            let moved = vec![0xff; data.len()];
            for range in &ranges {
                assert_eq!(sources.bytes(&moved, range), &data[range.clone()], "{range:?} of {ranges:?}");
            }
        }
    }
}

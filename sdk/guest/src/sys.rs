//! The `wrt_v1` imports (docs/abi.md) and thin safe wrappers around them: the only `unsafe` code
//! of the crate.
//!
//! A wrapper lends Rust slices to the host as (pointer, length) pairs for the duration of one
//! call and returns the host's raw `i32` (`>= 0` success, `-code` failure); [`crate::error`]
//! turns failures into `io::Error`s. Outside wasm32 the imports are stubs that return
//! [`UNSUPPORTED`], so the crate builds (and its pure logic is tested) on the host.

use std::mem::MaybeUninit;

use wrt_abi::consts::NONBLOCKING;
use wrt_abi::status::{RUN_STATUS_LEN, STATUS_LEN, run_lengths};

/// What the host-side stubs return; no `wrt_v1` host returns it (its codes are small).
pub(crate) const UNSUPPORTED: i32 = i32::MIN;

cfg_select! {
    target_arch = "wasm32" => {
        // The host functions. The Rust names carry a `wrt_` prefix; `link_name` is the name of
        // the import.
        #[link(wasm_import_module = "wrt_v1")]
        unsafe extern "C" {
            #[link_name = "spawn"]
            fn wrt_spawn(req_ptr: i32, req_len: i32) -> i32;
            #[link_name = "write"]
            fn wrt_write(handle: i32, ptr: i32, len: i32, flags: i32) -> i32;
            #[link_name = "close_stdin"]
            fn wrt_close_stdin(handle: i32) -> i32;
            #[link_name = "read"]
            fn wrt_read(handle: i32, stream: i32, ptr: i32, len: i32, flags: i32) -> i32;
            #[link_name = "poll"]
            fn wrt_poll(handle: i32, interest: i32, timeout_ms: i64) -> i32;
            #[link_name = "wait"]
            fn wrt_wait(handle: i32, timeout_ms: i64, status_ptr: i32) -> i32;
            #[link_name = "wait_any"]
            fn wrt_wait_any(handles_ptr: i32, count: i32, timeout_ms: i64, status_ptr: i32) -> i32;
            #[link_name = "kill"]
            fn wrt_kill(handle: i32, signal: i32) -> i32;
            #[link_name = "pty_resize"]
            fn wrt_pty_resize(handle: i32, rows: i32, cols: i32) -> i32;
            #[link_name = "release"]
            fn wrt_release(handle: i32) -> i32;
            #[link_name = "run"]
            fn wrt_run(req_ptr: i32, req_len: i32, io_ptr: i32, status_ptr: i32) -> i32;
            #[link_name = "last_error"]
            fn wrt_last_error(ptr: i32, len: i32) -> i32;
            #[link_name = "buffer_from"]
            fn wrt_buffer_from(ptr: i32, len: i32) -> i32;
            #[link_name = "buffer_alloc"]
            fn wrt_buffer_alloc(len: i32) -> i32;
            #[link_name = "buffer_len"]
            fn wrt_buffer_len(buf: i32) -> i32;
            #[link_name = "buffer_read"]
            fn wrt_buffer_read(buf: i32, offset: i32, ptr: i32, len: i32) -> i32;
            #[link_name = "buffer_write"]
            fn wrt_buffer_write(buf: i32, offset: i32, ptr: i32, len: i32) -> i32;
            #[link_name = "buffer_slice"]
            fn wrt_buffer_slice(buf: i32, start: i32, end: i32) -> i32;
            #[link_name = "buffer_concat"]
            fn wrt_buffer_concat(parts_ptr: i32, count: i32) -> i32;
            #[link_name = "buffer_release"]
            fn wrt_buffer_release(buf: i32) -> i32;
            #[link_name = "read_buffer"]
            fn wrt_read_buffer(handle: i32, stream: i32, max_len: i32, flags: i32) -> i32;
            #[link_name = "write_buffer"]
            fn wrt_write_buffer(handle: i32, buf: i32, offset: i32, flags: i32) -> i32;
        }
    }
    _ => {
        // Stubs with the imports' signatures, so the wrappers below compile unchanged. They
        // touch no memory; `unsafe` only mirrors the imports.
        unsafe fn wrt_spawn(_: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_write(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_close_stdin(_: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_read(_: i32, _: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_poll(_: i32, _: i32, _: i64) -> i32 { UNSUPPORTED }
        unsafe fn wrt_wait(_: i32, _: i64, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_wait_any(_: i32, _: i32, _: i64, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_kill(_: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_pty_resize(_: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_release(_: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_run(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_last_error(_: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_from(_: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_alloc(_: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_len(_: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_read(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_write(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_slice(_: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_concat(_: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_buffer_release(_: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_read_buffer(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
        unsafe fn wrt_write_buffer(_: i32, _: i32, _: i32, _: i32) -> i32 { UNSUPPORTED }
    }
}

/// A linear-memory address as the ABI passes it: an `i32` read by the host as `u32`.
///
/// On wasm32 addresses fit in 32 bits; on other targets only the stubs see the value.
fn addr<T>(ptr: *const T) -> i32 {
    ptr.addr() as i32
}

/// A length as the ABI passes it (read by the host as `u32`).
fn len(len: usize) -> i32 {
    len as i32
}

/// A length for `read` and `write`, whose `i32` results must stay non-negative.
fn io_len(len: usize) -> i32 {
    len.min(i32::MAX as usize) as i32
}

/// `spawn`: starts the encoded request; returns a handle.
pub(crate) fn spawn(request: &[u8]) -> i32 {
    // SAFETY: the host only reads `request.len()` bytes at `request.as_ptr()`, which `request`
    // borrows for the whole call.
    unsafe { wrt_spawn(addr(request.as_ptr()), len(request.len())) }
}

/// `write`: writes `buf` (or its first `i32::MAX` bytes) to the child's stdin.
pub(crate) fn write(handle: i32, buf: &[u8], nonblocking: bool) -> i32 {
    let flags = if nonblocking { NONBLOCKING } else { 0 };
    // SAFETY: the host only reads at most `buf.len()` bytes at `buf.as_ptr()`, borrowed for the call.
    unsafe { wrt_write(handle, addr(buf.as_ptr()), io_len(buf.len()), flags) }
}

/// `close_stdin`.
pub(crate) fn close_stdin(handle: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_close_stdin(handle) }
}

/// `read`: reads from `stream` (1 stdout, 2 stderr) into `buf`.
pub(crate) fn read(handle: i32, stream: i32, buf: &mut [u8], nonblocking: bool) -> i32 {
    let flags = if nonblocking { NONBLOCKING } else { 0 };
    // SAFETY: the host writes at most `buf.len()` bytes at `buf.as_mut_ptr()`, which `buf`
    // borrows exclusively for the call; any byte values are valid `u8`s.
    unsafe { wrt_read(handle, stream, addr(buf.as_mut_ptr()), io_len(buf.len()), flags) }
}

/// `poll`: the ready subset of `interest`, 0 after the timeout.
pub(crate) fn poll(handle: i32, interest: u32, timeout_ms: i64) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_poll(handle, interest as i32, timeout_ms) }
}

/// `wait`: on success the status record is in `status`.
pub(crate) fn wait(handle: i32, timeout_ms: i64, status: &mut [u8; STATUS_LEN]) -> i32 {
    // SAFETY: the host writes exactly `STATUS_LEN` bytes at `status`, which is borrowed
    // exclusively for the call and is that long.
    unsafe { wrt_wait(handle, timeout_ms, addr(status.as_mut_ptr())) }
}

/// `wait_any`: on success (an index) the status record of that child is in `status`.
pub(crate) fn wait_any(handles: &[i32], timeout_ms: i64, status: &mut [u8; STATUS_LEN]) -> i32 {
    // SAFETY: the host reads `handles.len()` `i32`s at `handles.as_ptr()` and writes
    // `STATUS_LEN` bytes at `status`; both are borrowed for the call (`status` exclusively).
    unsafe { wrt_wait_any(addr(handles.as_ptr()), len(handles.len()), timeout_ms, addr(status.as_mut_ptr())) }
}

/// `kill`: sends `signal` to the child's process group.
pub(crate) fn kill(handle: i32, signal: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_kill(handle, signal) }
}

/// `pty_resize`: sets the window size of the child's pseudo-terminal.
pub(crate) fn pty_resize(handle: i32, rows: i32, cols: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_pty_resize(handle, rows, cols) }
}

/// `release`: frees the handle, killing a child still running.
pub(crate) fn release(handle: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_release(handle) }
}

/// `run`: the one-shot form. Captured output is appended to `stdout` and `stderr`, up to their
/// spare capacity (the host writes into it directly, without initialising the rest).
pub(crate) fn run(
    request: &[u8],
    stdin: &[u8],
    stdout: &mut Vec<u8>,
    stderr: &mut Vec<u8>,
    status: &mut [u8; RUN_STATUS_LEN],
) -> i32 {
    let out_spare: &mut [MaybeUninit<u8>] = stdout.spare_capacity_mut();
    let err_spare: &mut [MaybeUninit<u8>] = stderr.spare_capacity_mut();
    let (out_cap, err_cap) = (out_spare.len(), err_spare.len());
    let io: [i32; 6] = [
        addr(stdin.as_ptr()),
        len(stdin.len()),
        addr(out_spare.as_mut_ptr()),
        len(out_cap),
        addr(err_spare.as_mut_ptr()),
        len(err_cap),
    ];
    // SAFETY: the host reads the request, the six words of `io` and `stdin.len()` bytes of
    // `stdin`, and writes at most `out_cap` bytes into `stdout`'s spare capacity, at most
    // `err_cap` into `stderr`'s, and `RUN_STATUS_LEN` bytes into `status`. All of it is borrowed
    // for the call, the written ranges exclusively; `MaybeUninit<u8>` accepts any bytes.
    let ret =
        unsafe { wrt_run(addr(request.as_ptr()), len(request.len()), addr(io.as_ptr()), addr(status.as_mut_ptr())) };
    if ret == 0 {
        let (out_len, err_len) = run_lengths(status);
        let out_len = (out_len as usize).min(out_cap);
        let err_len = (err_len as usize).min(err_cap);
        // SAFETY: the host initialised the first `out_len` bytes of the spare capacity (the run
        // status record says how many it wrote; the count is clamped to the capacity).
        unsafe { stdout.set_len(stdout.len() + out_len) };
        // SAFETY: as for `stdout`, with the stderr count.
        unsafe { stderr.set_len(stderr.len() + err_len) };
    }
    ret
}

/// `last_error`: copies the message of the last error into `buf` (truncated) and returns its
/// full length.
pub(crate) fn last_error(buf: &mut [u8]) -> i32 {
    // SAFETY: the host writes at most `buf.len()` bytes at `buf.as_mut_ptr()`, borrowed
    // exclusively for the call.
    unsafe { wrt_last_error(addr(buf.as_mut_ptr()), len(buf.len())) }
}

/// `buffer_from`: a new host buffer holding a copy of `bytes`; returns its handle.
pub(crate) fn buffer_from(bytes: &[u8]) -> i32 {
    // SAFETY: the host only reads `bytes.len()` bytes at `bytes.as_ptr()`, borrowed for the call.
    unsafe { wrt_buffer_from(addr(bytes.as_ptr()), len(bytes.len())) }
}

/// `buffer_alloc`: a new host buffer of `size` zero bytes; returns its handle.
pub(crate) fn buffer_alloc(size: usize) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_buffer_alloc(len(size)) }
}

/// `buffer_len`: the length of the host buffer `buf`.
pub(crate) fn buffer_len(buf: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_buffer_len(buf) }
}

/// `buffer_read`: copies bytes of `buf` from `offset` into `dst` (as many as both have);
/// returns the count.
pub(crate) fn buffer_read(buf: i32, offset: u32, dst: &mut [u8]) -> i32 {
    // SAFETY: the host writes at most `dst.len()` bytes (clamped to `i32::MAX`) at
    // `dst.as_mut_ptr()`, which `dst` borrows exclusively for the call; any bytes are valid `u8`s.
    unsafe { wrt_buffer_read(buf, offset as i32, addr(dst.as_mut_ptr()), io_len(dst.len())) }
}

/// `buffer_write`: copies `src` into `buf` at `offset`, all of it or nothing. `src` must be
/// shorter than 2 GiB (the caller checks; a buffer is at most 1 GiB anyway).
pub(crate) fn buffer_write(buf: i32, offset: u32, src: &[u8]) -> i32 {
    // SAFETY: the host only reads `src.len()` bytes at `src.as_ptr()`, borrowed for the call.
    unsafe { wrt_buffer_write(buf, offset as i32, addr(src.as_ptr()), len(src.len())) }
}

/// `buffer_slice`: a new handle viewing `start..end` of `buf` (sharing its bytes).
pub(crate) fn buffer_slice(buf: i32, start: u32, end: u32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_buffer_slice(buf, start as i32, end as i32) }
}

/// The largest `count` of `buffer_concat`.
pub(crate) const MAX_CONCAT_PARTS: usize = wrt_abi::consts::MAX_CONCAT_PARTS as usize;

/// One part of a `buffer_concat`: bytes of linear memory, or a host buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ConcatPart<'a> {
    /// Bytes in linear memory, borrowed until the call returns.
    Linear(&'a [u8]),
    /// A host buffer's handle.
    Host(i32),
}

impl ConcatPart<'_> {
    /// The part's 12-byte record (docs/abi.md, `buffer_concat`) as three little-endian words:
    /// `[handle, ptr, len]`, with handle 0 for linear memory and zero reserved fields otherwise.
    pub(crate) fn encode(&self) -> [i32; 3] {
        match *self {
            Self::Linear(bytes) => [0, addr(bytes.as_ptr()), len(bytes.len())],
            Self::Host(handle) => [handle, 0, 0],
        }
    }
}

/// `buffer_concat`: a new host buffer holding the parts `records` describe ([`ConcatPart::encode`])
/// one after another (at most [`MAX_CONCAT_PARTS`]). The caller keeps every linear part it
/// encoded borrowed until this returns.
pub(crate) fn buffer_concat(records: &[[i32; 3]]) -> i32 {
    // `[i32; 3]` is 12 bytes, and wasm32 is little-endian: the array is the ABI's part records.
    // SAFETY: the host reads the `records.len()` records at `records.as_ptr()` and, for each
    // linear part, the bytes it points at; `records` lives until the call returns and the caller
    // borrows each linear range for the call.
    unsafe { wrt_buffer_concat(addr(records.as_ptr()), len(records.len())) }
}

/// `buffer_release`: frees the host buffer's handle.
pub(crate) fn buffer_release(buf: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { wrt_buffer_release(buf) }
}

/// `read_buffer`: reads up to `max_len` bytes (1 to 16 MiB) of `stream` into a new host buffer;
/// returns its handle, or 0 at end of file.
pub(crate) fn read_buffer(handle: i32, stream: i32, max_len: usize, nonblocking: bool) -> i32 {
    let flags = if nonblocking { NONBLOCKING } else { 0 };
    // SAFETY: no memory is passed.
    unsafe { wrt_read_buffer(handle, stream, io_len(max_len), flags) }
}

/// `write_buffer`: writes bytes of `buf` from `offset` to the child's stdin; returns the count.
pub(crate) fn write_buffer(handle: i32, buf: i32, offset: u32, nonblocking: bool) -> i32 {
    let flags = if nonblocking { NONBLOCKING } else { 0 };
    // SAFETY: no memory is passed.
    unsafe { wrt_write_buffer(handle, buf, offset as i32, flags) }
}

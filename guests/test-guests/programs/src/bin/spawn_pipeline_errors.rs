//! A hostile guest's pipelines through the raw `wrt_v1` ABI: a source that is no handle, a buffer
//! handle, a released child, a stdout that is not piped, taken already or at its end, modes on the
//! wrong stream, a missing or extra source handle, and a stage the policy denies (the source keeps
//! its stdout). Needs `printf` and `cat`; `ls` must be denied.
#![allow(unsafe_code, reason = "calls the raw `wrt_v1` imports, with bad arguments on purpose")]

use wrt_guest::ErrorCode;

#[link(wasm_import_module = "wrt_v1")]
unsafe extern "C" {
    #[link_name = "spawn"]
    fn raw_spawn(req_ptr: i32, req_len: i32) -> i32;
    #[link_name = "read"]
    fn raw_read(handle: i32, stream: i32, ptr: i32, len: i32, flags: i32) -> i32;
    #[link_name = "wait"]
    fn raw_wait(handle: i32, timeout_ms: i64, status_ptr: i32) -> i32;
    #[link_name = "release"]
    fn raw_release(handle: i32) -> i32;
    #[link_name = "buffer_from"]
    fn raw_buffer_from(ptr: i32, len: i32) -> i32;
    #[link_name = "last_error"]
    fn raw_last_error(ptr: i32, len: i32) -> i32;
}

fn addr<T>(ptr: *const T) -> i32 {
    ptr.addr() as i32
}

/// A request for `program` with `args` and the stdio mode bytes, followed by `tail` (the
/// source handle of stdin mode 3).
fn request(program: &[u8], args: &[&[u8]], stdio: [u8; 3], tail: Option<u32>) -> Vec<u8> {
    programs::raw_request(program, args, stdio, tail)
}

fn spawn(req: &[u8]) -> i32 {
    // SAFETY: the host only reads `req`, borrowed for the call.
    unsafe { raw_spawn(addr(req.as_ptr()), req.len() as i32) }
}

fn read_all(handle: i32, stream: i32) -> Result<Vec<u8>, i32> {
    let mut out = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        // SAFETY: the host writes at most `buf.len()` bytes into `buf`, borrowed for the call.
        let n = unsafe { raw_read(handle, stream, addr(buf.as_mut_ptr()), buf.len() as i32, 0) };
        match n {
            0 => return Ok(out),
            n if n > 0 => out.extend_from_slice(&buf[..n as usize]),
            err => return Err(err),
        }
    }
}

fn wait(handle: i32) {
    let mut status = [0u8; 48];
    // SAFETY: the host writes the 48-byte status into `status`, borrowed for the call.
    let ret = unsafe { raw_wait(handle, -1, addr(status.as_mut_ptr())) };
    assert_eq!(ret, 0, "wait {handle}");
}

fn release(handle: i32) -> i32 {
    // SAFETY: no memory is passed.
    unsafe { raw_release(handle) }
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: the host writes at most `buf.len()` bytes into `buf`, borrowed for the call.
    let len = unsafe { raw_last_error(addr(buf.as_mut_ptr()), buf.len() as i32) };
    buf.truncate(len.max(0) as usize);
    String::from_utf8_lossy(&buf).into_owned()
}

#[track_caller]
fn expect_code(ret: i32, code: ErrorCode, what: &str, message: &str) {
    assert_eq!(ret, -code.raw(), "{what}: expected -{} ({code}), got {ret}", code.raw());
    let error = last_error();
    assert!(error.contains(message), "{what}: {error:?} does not say {message:?}");
    println!("{what}: {error}");
}

/// `printf TEXT` with stdout piped: a source.
fn source(text: &[u8]) -> i32 {
    let handle = spawn(&request(b"printf", &[text], [0, 1, 0], None));
    assert!(handle > 0, "spawn printf: {handle} {}", last_error());
    handle
}

/// `cat` with stdin from `from` and stdout piped.
fn cat_from(from: u32) -> i32 {
    spawn(&request(b"cat", &[], [3, 1, 0], Some(from)))
}

fn main() {
    // The feature probe: a host without pipelines rejects mode 3 as malformed
    // (INVALID_ARGUMENT); this one looks the handle up, and 0 is never one.
    expect_code(cat_from(0), ErrorCode::BadHandle, "source 0", "is not a handle");
    expect_code(cat_from(999), ErrorCode::BadHandle, "never issued", "is not a handle");
    expect_code(cat_from(u32::MAX), ErrorCode::BadHandle, "u32::MAX", "is not a handle");
    let bytes = [7u8; 100];
    // SAFETY: the host only reads `bytes`, borrowed for the call.
    let buffer = unsafe { raw_buffer_from(addr(bytes.as_ptr()), bytes.len() as i32) };
    assert!(buffer > 0, "buffer_from: {buffer}");
    expect_code(cat_from(buffer as u32), ErrorCode::BadHandle, "a buffer handle", "is a buffer handle");

    let released = source(b"gone");
    wait(released);
    assert_eq!(release(released), 0);
    expect_code(cat_from(released as u32), ErrorCode::BadHandle, "released", "was released");

    let null = spawn(&request(b"printf", &[b"x"], [0, 0, 0], None));
    assert!(null > 0);
    expect_code(cat_from(null as u32), ErrorCode::NotPiped, "stdout null", "not piped");

    // Taken once: the second stage gets it, a second taker does not.
    let first = source(b"once");
    let second = cat_from(first as u32);
    assert!(second > 0, "{}", last_error());
    expect_code(cat_from(first as u32), ErrorCode::NotPiped, "taken twice", "already taken");
    assert_eq!(read_all(first, 1), Err(-ErrorCode::NotPiped.raw()), "the source's stdout is gone");
    assert_eq!(read_all(second, 1).expect("read cat"), b"once");
    wait(second);

    // Read to its end by the guest: nothing left to hand over.
    let drained = source(b"all");
    assert_eq!(read_all(drained, 1).expect("read printf"), b"all");
    expect_code(cat_from(drained as u32), ErrorCode::NotPiped, "at end of file", "closed");

    // Modes on the wrong stream, a missing or an extra handle: malformed.
    let live = source(b"kept");
    let invalid = ErrorCode::InvalidArgument;
    expect_code(spawn(&request(b"cat", &[], [1, 3, 0], Some(live as u32))), invalid, "3 for stdout", "malformed");
    expect_code(spawn(&request(b"cat", &[], [1, 1, 3], Some(live as u32))), invalid, "3 for stderr", "malformed");
    expect_code(spawn(&request(b"cat", &[], [4, 1, 0], None)), invalid, "4 for stdin", "malformed");
    expect_code(spawn(&request(b"cat", &[], [0, 4, 0], None)), invalid, "4 for stdout", "malformed");
    expect_code(spawn(&request(b"cat", &[], [3, 1, 0], None)), invalid, "3 without a handle", "malformed");
    expect_code(spawn(&request(b"cat", &[], [0, 1, 0], Some(live as u32))), invalid, "a handle without 3", "malformed");

    // A stage the policy denies: the source keeps its stdout.
    let denied = spawn(&request(b"ls", &[], [3, 1, 0], Some(live as u32)));
    expect_code(denied, ErrorCode::Denied, "a denied stage", "ls");
    assert_eq!(read_all(live, 1).expect("the source's stdout is back"), b"kept");

    // Stderr merged into stdout: stdout has both, stderr is not piped.
    let merged = spawn(&request(b"cat", &[b"/nonexistent-wrt"], [0, 1, 4], None));
    assert!(merged > 0, "{}", last_error());
    let both = read_all(merged, 1).expect("read merged");
    assert!(String::from_utf8_lossy(&both).contains("nonexistent-wrt"), "{both:?}");
    assert_eq!(read_all(merged, 2), Err(-ErrorCode::NotPiped.raw()));
    wait(merged);

    println!("pipeline errors ok");
}

//! The raw `wrt_v1` ABI answers guest mistakes with its error codes and never traps: bad
//! pointers (OUT_OF_BOUNDS), malformed requests (INVALID_ARGUMENT, BAD_UTF8), bad handles
//! (BAD_HANDLE), double close (NOT_PIPED), bad streams, signals and counts, and `last_error`'s
//! truncation. Needs `true` and `cat`.
#![allow(unsafe_code, reason = "calls the raw `wrt_v1` imports, with bad arguments on purpose")]
use std::ffi::OsStr;
use std::os::wasi::ffi::OsStrExt;

use wrt_guest::{Command, ErrorCode, Stdio};

#[link(wasm_import_module = "wrt_v1")]
unsafe extern "C" {
    #[link_name = "spawn"]
    fn raw_spawn(req_ptr: i32, req_len: i32) -> i32;
    #[link_name = "write"]
    fn raw_write(handle: i32, ptr: i32, len: i32, flags: i32) -> i32;
    #[link_name = "close_stdin"]
    fn raw_close_stdin(handle: i32) -> i32;
    #[link_name = "read"]
    fn raw_read(handle: i32, stream: i32, ptr: i32, len: i32, flags: i32) -> i32;
    #[link_name = "poll"]
    fn raw_poll(handle: i32, interest: i32, timeout_ms: i64) -> i32;
    #[link_name = "wait"]
    fn raw_wait(handle: i32, timeout_ms: i64, status_ptr: i32) -> i32;
    #[link_name = "wait_any"]
    fn raw_wait_any(handles_ptr: i32, count: i32, timeout_ms: i64, status_ptr: i32) -> i32;
    #[link_name = "kill"]
    fn raw_kill(handle: i32, signal: i32) -> i32;
    #[link_name = "release"]
    fn raw_release(handle: i32) -> i32;
    #[link_name = "run"]
    fn raw_run(req_ptr: i32, req_len: i32, io_ptr: i32, status_ptr: i32) -> i32;
    #[link_name = "last_error"]
    fn raw_last_error(ptr: i32, len: i32) -> i32;
}

/// An address far outside linear memory (a guest this small never grows to 3 GiB).
const FAR: i32 = 0xC000_0000_u32 as i32;

fn addr<T>(ptr: *const T) -> i32 {
    ptr.addr() as i32
}

/// A request for `program` with `args`, everything else default; `stdio` piped, inherit or null.
fn request(program: &[u8], args: &[&[u8]], stdio: [u8; 3]) -> Vec<u8> {
    programs::raw_request(program, args, stdio, None)
}

fn spawn(req: &[u8]) -> i32 {
    // SAFETY: the host only reads `req`, borrowed for the call.
    unsafe { raw_spawn(addr(req.as_ptr()), req.len() as i32) }
}

#[track_caller]
fn expect_code(ret: i32, code: ErrorCode, what: &str) {
    assert_eq!(ret, -code.raw(), "{what}: expected -{} ({code}), got {ret}", code.raw());
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: the host writes at most `buf.len()` bytes into `buf`, borrowed for the call.
    let len = unsafe { raw_last_error(addr(buf.as_mut_ptr()), buf.len() as i32) };
    buf.truncate(len.max(0) as usize);
    String::from_utf8_lossy(&buf).into_owned()
}

fn requests() {
    let good = request(b"true", &[], [0, 0, 0]);
    expect_code(unsafe_spawn_at(FAR, good.len() as i32), ErrorCode::OutOfBounds, "request outside memory");
    expect_code(unsafe_spawn_at(addr(good.as_ptr()), -1), ErrorCode::OutOfBounds, "length overflowing 32 bits");

    let mut wrong_version = good.clone();
    wrong_version[0] = 2;
    expect_code(spawn(&wrong_version), ErrorCode::InvalidArgument, "version 2");
    let mut trailing = good.clone();
    trailing.push(0);
    expect_code(spawn(&trailing), ErrorCode::InvalidArgument, "a byte left over");
    expect_code(spawn(&good[..good.len() - 1]), ErrorCode::InvalidArgument, "a byte short");
    expect_code(spawn(&[]), ErrorCode::InvalidArgument, "empty request");
    let mut flags = good.clone();
    let flags_at = flags.len() - 17;
    flags[flags_at] = 1;
    expect_code(spawn(&flags), ErrorCode::InvalidArgument, "non-zero flags");
    expect_code(spawn(&request(b"true", &[], [3, 0, 0])), ErrorCode::InvalidArgument, "stdio mode 3");
    let mut huge_argc = request(b"true", &[], [0, 0, 0]);
    huge_argc[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_code(spawn(&huge_argc), ErrorCode::InvalidArgument, "argc larger than the bytes left");
    expect_code(spawn(&request(b"", &[], [0, 0, 0])), ErrorCode::InvalidArgument, "empty program");
    expect_code(spawn(&request(b"tr\0ue", &[], [0, 0, 0])), ErrorCode::InvalidArgument, "NUL in the program");
    expect_code(spawn(&request(b"true", &[b"a\0b"], [0, 0, 0])), ErrorCode::InvalidArgument, "NUL in an argument");
    expect_code(spawn(&request(b"true", &[b"\xff"], [0, 0, 0])), ErrorCode::BadUtf8, "argument not UTF-8");
    let mut big = request(b"true", &[&vec![b'x'; 1 << 20]], [0, 0, 0]);
    expect_code(spawn(&big), ErrorCode::InvalidArgument, "request over 1 MiB");
    big.clear();

    // Through the SDK: the same codes, as io::Errors.
    let err = Command::new(OsStr::from_bytes(b"tr\xffue")).spawn().expect_err("not UTF-8");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::BadUtf8), "{err}");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let err = Command::new("").spawn().expect_err("empty program");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::InvalidArgument), "{err}");
    let err = Command::new("definitely-not-a-program-wrt").spawn().expect_err("not found");
    assert!(matches!(ErrorCode::of(&err), Some(ErrorCode::NotFound | ErrorCode::Denied)), "{err}");
    println!("not found: {err}");
}

fn unsafe_spawn_at(ptr: i32, len: i32) -> i32 {
    // SAFETY: the host checks the range and touches nothing outside linear memory.
    unsafe { raw_spawn(ptr, len) }
}

// Safe wrappers of the imports `handles` calls. The host bounds-checks every pointer and length
// against linear memory and writes only inside the range it is given; the callers pass ranges
// in buffers they own and borrow for the call, or ranges outside memory, which the host
// rejects without touching anything.

fn wait(handle: i32, timeout_ms: i64, status_ptr: i32) -> i32 {
    // SAFETY: see above; `status_ptr` is a 56-byte buffer of the caller's, or outside memory.
    unsafe { raw_wait(handle, timeout_ms, status_ptr) }
}

fn wait_any(handles_ptr: i32, count: i32, timeout_ms: i64, status_ptr: i32) -> i32 {
    // SAFETY: see above; the host only reads the handles and writes one status.
    unsafe { raw_wait_any(handles_ptr, count, timeout_ms, status_ptr) }
}

fn read(handle: i32, stream: i32, ptr: i32, len: i32, flags: i32) -> i32 {
    // SAFETY: see above; the host writes at most `len` bytes at `ptr`.
    unsafe { raw_read(handle, stream, ptr, len, flags) }
}

fn write(handle: i32, ptr: i32, len: i32, flags: i32) -> i32 {
    // SAFETY: see above; the host only reads `len` bytes at `ptr`.
    unsafe { raw_write(handle, ptr, len, flags) }
}

fn close_stdin(handle: i32) -> i32 {
    // SAFETY: takes no pointer.
    unsafe { raw_close_stdin(handle) }
}

fn poll(handle: i32, interest: i32, timeout_ms: i64) -> i32 {
    // SAFETY: takes no pointer.
    unsafe { raw_poll(handle, interest, timeout_ms) }
}

fn kill(handle: i32, signal: i32) -> i32 {
    // SAFETY: takes no pointer.
    unsafe { raw_kill(handle, signal) }
}

fn release(handle: i32) -> i32 {
    // SAFETY: takes no pointer.
    unsafe { raw_release(handle) }
}

fn run(req_ptr: i32, req_len: i32, io_ptr: i32, status_ptr: i32) -> i32 {
    // SAFETY: see above; the host reads the request and the io block, and writes into the
    // output buffers the io block names and the status.
    unsafe { raw_run(req_ptr, req_len, io_ptr, status_ptr) }
}

fn handles() {
    let mut status = [0u8; 56];
    let status_ptr = addr(status.as_mut_ptr());
    let mut buf = [0u8; 16];
    let buf_ptr = addr(buf.as_mut_ptr());
    for bad in [0, -1, 12345] {
        expect_code(wait(bad, 0, status_ptr), ErrorCode::BadHandle, "wait on a bad handle");
        expect_code(read(bad, 1, buf_ptr, 16, 1), ErrorCode::BadHandle, "read");
        expect_code(write(bad, buf_ptr, 16, 1), ErrorCode::BadHandle, "write");
        expect_code(close_stdin(bad), ErrorCode::BadHandle, "close_stdin");
        expect_code(poll(bad, 15, 0), ErrorCode::BadHandle, "poll");
        expect_code(kill(bad, 9), ErrorCode::BadHandle, "kill");
        expect_code(release(bad), ErrorCode::BadHandle, "release");
    }

    // `cat` with stdin and stdout piped, stderr null.
    let handle = spawn(&request(b"cat", &[], [1, 1, 0]));
    assert!(handle > 0, "spawn cat: {handle} {}", last_error());
    expect_code(read(handle, 2, buf_ptr, 16, 1), ErrorCode::NotPiped, "read stderr (null)");
    expect_code(read(handle, 3, buf_ptr, 16, 1), ErrorCode::InvalidArgument, "read stream 3");
    expect_code(read(handle, 0, buf_ptr, 16, 1), ErrorCode::InvalidArgument, "read stream 0");
    expect_code(read(handle, 1, buf_ptr, 16, 1), ErrorCode::WouldBlock, "read with nothing there");
    expect_code(read(handle, 1, FAR, 16, 0), ErrorCode::OutOfBounds, "read into nowhere");
    expect_code(write(handle, FAR, 16, 0), ErrorCode::OutOfBounds, "write from nowhere");
    expect_code(wait(handle, 0, FAR), ErrorCode::OutOfBounds, "status outside memory");
    expect_code(wait(handle, 0, status_ptr), ErrorCode::Timeout, "wait on a running child");
    expect_code(kill(handle, 0), ErrorCode::InvalidArgument, "signal 0");
    expect_code(kill(handle, 32), ErrorCode::InvalidArgument, "signal 32");
    let handles = [handle];
    let handles_ptr = addr(handles.as_ptr());
    expect_code(wait_any(handles_ptr, 0, 0, status_ptr), ErrorCode::InvalidArgument, "wait_any of none");
    expect_code(wait_any(handles_ptr, 1025, 0, status_ptr), ErrorCode::InvalidArgument, "1025 handles");
    expect_code(wait_any(FAR, 1, 0, status_ptr), ErrorCode::OutOfBounds, "handles outside memory");
    expect_code(wait_any(handles_ptr, 1, 0, status_ptr), ErrorCode::Timeout, "wait_any on a running child");
    let with_bad = [handle, 12345];
    expect_code(
        wait_any(addr(with_bad.as_ptr()), 2, -1, status_ptr),
        ErrorCode::BadHandle,
        "a bad handle among good ones, before waiting",
    );

    assert_eq!(write(handle, addr(b"ping".as_ptr()), 4, 0), 4, "write: {}", last_error());
    assert_eq!(close_stdin(handle), 0);
    expect_code(close_stdin(handle), ErrorCode::NotPiped, "close_stdin twice");
    expect_code(write(handle, buf_ptr, 1, 0), ErrorCode::NotPiped, "write after close");
    let mut got = Vec::new();
    loop {
        let n = read(handle, 1, buf_ptr, 16, 0);
        assert!(n >= 0, "read: {n} {}", last_error());
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n as usize]);
    }
    assert_eq!(got, b"ping");
    assert_eq!(wait(handle, -1, status_ptr), 0, "wait: {}", last_error());
    assert_eq!(&status[..8], &[1, 0, 0, 0, 0, 0, 0, 0], "exited with 0");
    assert_eq!(wait(handle, 0, status_ptr), 0, "the status stays readable");
    assert_eq!(kill(handle, 9), 0, "killing an ended child");
    assert_eq!(release(handle), 0);
    expect_code(release(handle), ErrorCode::BadHandle, "release twice");
    expect_code(wait(handle, 0, status_ptr), ErrorCode::BadHandle, "wait after release");

    // Handles are never reused.
    let next = spawn(&request(b"true", &[], [0, 0, 0]));
    assert!(next > handle, "handle {next} after {handle}");
    assert_eq!(release(next), 0);

    // `run` with a bad io block or buffers, then a good one.
    let req = request(b"cat", &[], [0, 0, 0]);
    let (req_ptr, req_len) = (addr(req.as_ptr()), req.len() as i32);
    expect_code(run(req_ptr, req_len, FAR, status_ptr), ErrorCode::OutOfBounds, "run: io block");
    let mut out = [0u8; 8];
    let io = [addr(b"stdin bytes".as_ptr()), 11, addr(out.as_mut_ptr()), 8, FAR, 16];
    expect_code(run(req_ptr, req_len, addr(io.as_ptr()), status_ptr), ErrorCode::OutOfBounds, "run: stderr");
    let io = [addr(b"stdin bytes".as_ptr()), 11, addr(out.as_mut_ptr()), 8, buf_ptr, 16];
    assert_eq!(run(req_ptr, req_len, addr(io.as_ptr()), status_ptr), 0, "run: {}", last_error());
    assert_eq!(&out, b"stdin by", "captured up to the buffer's capacity");
    assert_eq!(u32::from_le_bytes(status[8..12].try_into().unwrap()) & 0b110, 0b010, "stdout truncated");
    assert_eq!(u32::from_le_bytes(status[48..52].try_into().unwrap()), 8, "bytes written to stdout");
    assert_eq!(u32::from_le_bytes(status[52..56].try_into().unwrap()), 0, "bytes written to stderr");
}

fn last_error_truncates() {
    let err = Command::new("true").stdin(Stdio::null()).current_dir("relative").spawn().expect_err("relative cwd");
    println!("relative cwd: {err}");
    let full = last_error();
    assert!(!full.is_empty());
    let mut buf = [0xAAu8; 8];
    // SAFETY: the host writes at most 3 bytes into `buf`.
    let len = unsafe { raw_last_error(addr(buf.as_mut_ptr()), 3) };
    assert_eq!(len as usize, full.len(), "last_error returns the full length");
    assert_eq!(&buf[..3], &full.as_bytes()[..3]);
    assert_eq!(buf[3], 0xAA, "nothing written past the given length");
    // SAFETY: out of bounds: the host checks and touches nothing.
    expect_code(unsafe { raw_last_error(FAR, 8) }, ErrorCode::OutOfBounds, "last_error into nowhere");
}

fn main() {
    requests();
    handles();
    last_error_truncates();
    println!("abi ok");
}

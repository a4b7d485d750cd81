//! `write`, `close_stdin`, `read` and `poll`: a child's pipes, blocking or not, never past the
//! sandbox's deadline (`process_service::io`), answered in the core ABI's form.

use wasmtime::Caller;
use wrt_abi::ErrorCode;
use wrt_abi::consts::{INTEREST_ALL, INTEREST_EXITED, INTEREST_STDERR, INTEREST_STDIN, INTEREST_STDOUT};
use wrt_host_spawn::Interest;

use super::super::guest_memory::with_memory;
use super::super::memory;
use super::{NONBLOCK, Result};
use crate::epoch_ticker::until;
use crate::guest_state::GuestState;
use crate::process_service::{self, Served};

/// The return value of a read or write the service answered: the count, `WOULD_BLOCK`, or an
/// error code with its message recorded as the last error.
fn count_or_code(state: &mut GuestState, served: Served<Option<usize>>) -> Result<i32> {
    Ok(match served? {
        Ok(Some(n)) => i32::try_from(n).unwrap_or(i32::MAX),
        Ok(None) => ErrorCode::WouldBlock.to_return(),
        Err(failure) => state.fail_with(failure),
    })
}

pub(super) fn write(mut caller: Caller<'_, GuestState>, handle: i32, ptr: i32, len: i32, flags: i32) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if flags & !NONBLOCK != 0 {
            return Ok(state.fail(ErrorCode::InvalidArgument, format!("unknown write flags {flags:#x}")));
        }
        let bytes =
            try_code!(state, memory::slice(data, ptr, len), "write buffer {ptr:#x}+{len:#x} is outside linear memory");
        write_child(state, handle, flags, bytes)
    })
}

/// Writes `bytes` to the stdin of the child behind `handle` (`flags` checked by the caller):
/// the count written, or an error return.
pub(in crate::abi) fn write_child(state: &mut GuestState, handle: i32, flags: i32, bytes: &[u8]) -> Result<i32> {
    let nonblock = flags & NONBLOCK != 0;
    let served = process_service::io::write_child(&mut state.spawn, &state.stop, handle, nonblock, bytes);
    count_or_code(state, served)
}

pub(super) fn close_stdin(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    let state = caller.data_mut();
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let mut child = entry.child.lock();
    if !child.has_stdin() || entry.taken[0] {
        drop(child);
        return Ok(state.fail(ErrorCode::NotPiped, "stdin is not piped, taken, or already closed"));
    }
    child.close_stdin();
    Ok(0)
}

pub(super) fn read(
    mut caller: Caller<'_, GuestState>,
    handle: i32,
    stream: i32,
    ptr: i32,
    len: i32,
    flags: i32,
) -> Result<i32> {
    with_memory(&mut caller, |data, state| {
        if let Err(ret) = check_read_args(state, stream, flags) {
            return Ok(ret);
        }
        let buf = try_code!(
            state,
            memory::slice_mut(data, ptr, len),
            "read buffer {ptr:#x}+{len:#x} is outside linear memory"
        );
        read_child(state, handle, stream, flags, buf)
    })
}

/// Checks the stream and flags of a read.
pub(in crate::abi) fn check_read_args(state: &mut GuestState, stream: i32, flags: i32) -> std::result::Result<(), i32> {
    if flags & !NONBLOCK != 0 || !(1..=2).contains(&stream) {
        return Err(state.fail(ErrorCode::InvalidArgument, format!("bad stream {stream} or flags {flags:#x}")));
    }
    Ok(())
}

/// Reads from `stream` of the child behind `handle` into `buf` (stream and flags checked by the
/// caller): the count read (0 at end of file), or an error return.
pub(in crate::abi) fn read_child(
    state: &mut GuestState,
    handle: i32,
    stream: i32,
    flags: i32,
    buf: &mut [u8],
) -> Result<i32> {
    let nonblock = flags & NONBLOCK != 0;
    let served = process_service::io::read_child(&mut state.spawn, &state.stop, handle, stream, nonblock, buf);
    count_or_code(state, served)
}

pub(super) fn poll(mut caller: Caller<'_, GuestState>, handle: i32, interest: i32, timeout_ms: i64) -> Result<i32> {
    let state = caller.data_mut();
    if interest as u32 & !INTEREST_ALL != 0 || interest == 0 {
        return Ok(state.fail(ErrorCode::InvalidArgument, format!("bad poll interest {interest:#x}")));
    }
    let wanted = Interest {
        stdin: interest as u32 & INTEREST_STDIN != 0,
        stdout: interest as u32 & INTEREST_STDOUT != 0,
        stderr: interest as u32 & INTEREST_STDERR != 0,
        exit: interest as u32 & INTEREST_EXITED != 0,
    };
    let ready = match process_service::io::poll(&mut state.spawn, &state.stop, handle, wanted, until(timeout_ms))? {
        Ok(ready) => ready,
        Err(failure) => return Ok(state.fail_with(failure)),
    };
    let bit = |set: bool, bit: u32| if set { bit } else { 0 };
    let bits = bit(ready.stdin, INTEREST_STDIN)
        | bit(ready.stdout, INTEREST_STDOUT)
        | bit(ready.stderr, INTEREST_STDERR)
        | bit(ready.exit, INTEREST_EXITED);
    Ok(bits as i32)
}

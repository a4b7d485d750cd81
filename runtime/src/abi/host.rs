//! The host functions of `wrt_v1`. Each one checks every pointer, length, handle and flag the
//! guest passes, and answers a guest mistake with an error code: never a panic, never a trap.
//! The only traps are the sandbox's own deadline passing while the guest waits.

use std::time::{Duration, Instant};

use wasmtime::{Caller, Linker, Memory};
use wrt_host_spawn::{Child, Command, Interest, ReadError, Signal, Stdio, WaitError, WriteError, error_chain};

use super::memory;
use super::spawn_state::{ChildEntry, SpawnState};
use super::status;
use crate::deadline::DeadlineExceeded;
use crate::state::GuestState;
use wrt_abi::ErrorCode;
use wrt_abi::consts::{MAX_LIVE_HANDLES, MAX_WAIT_ANY};
use wrt_abi::request::{self, SpawnRequest, StdioMode};
use wrt_abi::status::{RUN_STATUS_LEN, STATUS_LEN};

/// Non-blocking flag of `write` and `read`.
pub(super) const NONBLOCK: i32 = wrt_abi::consts::NONBLOCKING;

type Result<T> = wasmtime::Result<T>;

/// Defines every function of `wrt_v1` in `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> Result<()> {
    let m = super::MODULE;
    linker.func_wrap(m, "spawn", spawn)?;
    linker.func_wrap(m, "write", write)?;
    linker.func_wrap(m, "close_stdin", close_stdin)?;
    linker.func_wrap(m, "read", read)?;
    linker.func_wrap(m, "poll", poll)?;
    linker.func_wrap(m, "wait", wait)?;
    linker.func_wrap(m, "wait_any", wait_any)?;
    linker.func_wrap(m, "kill", kill)?;
    linker.func_wrap(m, "release", release)?;
    linker.func_wrap(m, "run", run)?;
    linker.func_wrap(m, "last_error", last_error)?;
    super::buffers::add_to_linker(linker)?;
    Ok(())
}

/// The guest's exported memory, or an `OUT_OF_BOUNDS` return when it has none.
pub(super) fn guest_memory(caller: &mut Caller<'_, GuestState>) -> std::result::Result<Memory, i32> {
    match caller.get_export("memory").and_then(|e| e.into_memory()) {
        Some(memory) => Ok(memory),
        None => Err(caller.data_mut().spawn.fail(ErrorCode::OutOfBounds, "the guest exports no `memory`")),
    }
}

/// Fails with the sandbox timeout once its deadline has passed.
fn check_deadline(state: &GuestState) -> Result<()> {
    match state.deadline {
        Some(deadline) if Instant::now() >= deadline => Err(DeadlineExceeded.into()),
        _ => Ok(()),
    }
}

/// A guest timeout in milliseconds (negative: none) as an instant; one too far away to
/// represent is no limit.
fn until(timeout_ms: i64) -> Option<Instant> {
    let ms = u64::try_from(timeout_ms).ok()?;
    Instant::now().checked_add(Duration::from_millis(ms))
}

/// The earlier of two optional instants.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn to_command(request: &SpawnRequest, state: &GuestState, all_piped: bool) -> Command {
    let mut command = Command::new(&request.program);
    command.args(&request.args);
    for (name, value) in &request.env {
        command.env(name, value);
    }
    if let Some(cwd) = &request.cwd {
        command.cwd(cwd);
    }
    // "Inherit" means the sandbox's own stream: a child may write where the guest writes, but
    // never around a stream the embedder captured or discarded.
    let [inherit_in, inherit_out, inherit_err] = state.spawn.inherit;
    let modes = if all_piped { [StdioMode::Piped; 3] } else { request.stdio };
    let stdio = |mode, inherit_ok: bool| match mode {
        StdioMode::Piped => Stdio::Piped,
        StdioMode::Inherit if inherit_ok => Stdio::Inherit,
        StdioMode::Inherit | StdioMode::Null => Stdio::Null,
    };
    command.stdin(stdio(modes[0], inherit_in));
    command.stdout(stdio(modes[1], inherit_out));
    command.stderr(stdio(modes[2], inherit_err));
    // A child never outlives the sandbox's deadline: its own timeout ends no later.
    let requested = request.timeout_ms.map(Duration::from_millis);
    let remaining = state.deadline.map(|d| d.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
    if let Some(timeout) = [requested, remaining].into_iter().flatten().min() {
        command.timeout(timeout);
    }
    // When the sandbox's deadline is what ends the child, it ends at once: no kill grace that
    // would keep a blocked `run` past the deadline.
    if remaining.is_some_and(|r| requested.is_none_or(|q| r <= q)) {
        command.kill_grace(Duration::ZERO);
    }
    if let Some(limit) = request.output_limit {
        command.output_limit(limit);
    }
    command
}

fn spawn(mut caller: Caller<'_, GuestState>, req_ptr: i32, req_len: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let bytes = try_request!(
        state,
        &[],
        memory::slice(data, req_ptr, req_len),
        "spawn request {req_ptr:#x}+{req_len:#x} is outside linear memory"
    );
    let request = try_request!(state, request::program_bytes(bytes), request::decode(bytes), "malformed spawn request");
    // Every check that can refuse the spawn comes before the program starts: the handle here,
    // then the policy, the concurrency limit and the descriptor budget in the spawner.
    if !state.spawn.children.has_room(MAX_LIVE_HANDLES) {
        let message = format!(
            "cannot spawn `{}`: {MAX_LIVE_HANDLES} handles are live, or every handle was used; release one first",
            request.program
        );
        return Ok(state.spawn.fail(ErrorCode::NoMemory, message));
    }
    let command = to_command(&request, state, false);
    match state.spawn.spawner.spawn(&command) {
        Ok(child) => {
            state.spawn.spawns += 1;
            let handle =
                try_code!(state, state.spawn.children.insert(ChildEntry { child, outcome: None }), "too many handles");
            Ok(handle)
        }
        Err(err) => Ok(state.spawn.spawn_failed(&request.program, &err)),
    }
}

/// Why a blocking operation on a child stopped without a result.
enum Blocked<E> {
    /// The operation failed.
    Op(E),
    /// Waiting for the pipe failed.
    Poll(wrt_host_spawn::PollError),
    /// The sandbox's deadline passed: the guest is stopped, and its children with it.
    Deadline,
}

/// Repeats the non-blocking `op` until it does something, sleeping in `Child::poll` on
/// `interest` between tries (which also drives the child's own timeout), or until the
/// sandbox's `deadline`. Never waits past the deadline, whatever the child's kill grace.
fn block_on<T, E>(
    child: &mut Child,
    interest: Interest,
    deadline: Option<Instant>,
    mut op: impl FnMut(&mut Child) -> std::result::Result<Option<T>, E>,
) -> std::result::Result<T, Blocked<E>> {
    loop {
        if let Some(done) = op(child).map_err(Blocked::Op)? {
            return Ok(done);
        }
        let remaining = match deadline {
            Some(deadline) if Instant::now() >= deadline => return Err(Blocked::Deadline),
            Some(deadline) => Some(deadline.saturating_duration_since(Instant::now())),
            None => None,
        };
        child.poll(interest, remaining).map_err(Blocked::Poll)?;
    }
}

fn write_error(err: &WriteError) -> ErrorCode {
    match err {
        WriteError::NotPiped { .. } => ErrorCode::NotPiped,
        WriteError::TimedOut { .. } => ErrorCode::Timeout,
        WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => ErrorCode::BrokenPipe,
        _ => ErrorCode::Io,
    }
}

fn read_error(err: &ReadError) -> ErrorCode {
    match err {
        ReadError::NotPiped { .. } => ErrorCode::NotPiped,
        ReadError::OutputLimit { .. } => ErrorCode::OutputLimit,
        ReadError::TimedOut { .. } => ErrorCode::Timeout,
        _ => ErrorCode::Io,
    }
}

fn write(mut caller: Caller<'_, GuestState>, handle: i32, ptr: i32, len: i32, flags: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    if flags & !NONBLOCK != 0 {
        return Ok(state.spawn.fail(ErrorCode::InvalidArgument, format!("unknown write flags {flags:#x}")));
    }
    let bytes =
        try_code!(state, memory::slice(data, ptr, len), "write buffer {ptr:#x}+{len:#x} is outside linear memory");
    write_child(&mut state.spawn, state.deadline, handle, flags, bytes)
}

/// Writes `bytes` to the stdin of the child behind `handle` (`flags` checked by the caller):
/// the count written, or an error return.
pub(super) fn write_child(
    spawn: &mut SpawnState,
    deadline: Option<Instant>,
    handle: i32,
    flags: i32,
    bytes: &[u8],
) -> Result<i32> {
    let entry = match spawn.children.get_mut(handle) {
        Ok(entry) => entry,
        Err(code) => return Ok(spawn.fail(code, format!("`{handle}` is not a handle"))),
    };
    let stdin = Interest { stdin: true, ..Interest::default() };
    let result = if flags & NONBLOCK != 0 {
        match entry.child.try_write_stdin(bytes) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(ErrorCode::WouldBlock.to_return()),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child, stdin, deadline, |child| child.try_write_stdin(bytes))
    };
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Err(DeadlineExceeded.into());
    }
    match result {
        Ok(n) => Ok(i32::try_from(n).unwrap_or(i32::MAX)),
        Err(Blocked::Op(err)) => Ok(spawn.fail(write_error(&err), error_chain(&err))),
        Err(Blocked::Poll(err)) => Ok(spawn.fail(ErrorCode::Io, error_chain(&err))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

fn close_stdin(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    let state = caller.data_mut();
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if !entry.child.has_stdin() {
        return Ok(state.spawn.fail(ErrorCode::NotPiped, "stdin is not piped or already closed"));
    }
    entry.child.close_stdin();
    Ok(0)
}

fn read(mut caller: Caller<'_, GuestState>, handle: i32, stream: i32, ptr: i32, len: i32, flags: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    if let Err(ret) = check_read_args(state, stream, flags) {
        return Ok(ret);
    }
    let buf =
        try_code!(state, memory::slice_mut(data, ptr, len), "read buffer {ptr:#x}+{len:#x} is outside linear memory");
    read_child(state, handle, stream, flags, buf)
}

/// Checks the stream and flags of a read.
pub(super) fn check_read_args(state: &mut GuestState, stream: i32, flags: i32) -> std::result::Result<(), i32> {
    if flags & !NONBLOCK != 0 || !(1..=2).contains(&stream) {
        return Err(state.spawn.fail(ErrorCode::InvalidArgument, format!("bad stream {stream} or flags {flags:#x}")));
    }
    Ok(())
}

/// Reads from `stream` of the child behind `handle` into `buf` (stream and flags checked by the
/// caller): the count read (0 at end of file), or an error return.
pub(super) fn read_child(state: &mut GuestState, handle: i32, stream: i32, flags: i32, buf: &mut [u8]) -> Result<i32> {
    // At most i32::MAX bytes, so the count fits the return value.
    let buf_len = buf.len().min(i32::MAX as usize);
    let buf = &mut buf[..buf_len];
    let deadline = state.deadline;
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let interest = Interest { stdout: stream == 1, stderr: stream == 2, ..Interest::default() };
    let try_read = |child: &mut Child, buf: &mut [u8]| match stream {
        1 => child.try_read_stdout(buf),
        _ => child.try_read_stderr(buf),
    };
    let result = if flags & NONBLOCK != 0 {
        match try_read(&mut entry.child, buf) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => return Ok(ErrorCode::WouldBlock.to_return()),
            Err(err) => Err(Blocked::Op(err)),
        }
    } else {
        block_on(&mut entry.child, interest, deadline, |child| try_read(child, buf))
    };
    // Issue 10 §7: what a call saw after the deadline (an end of file, because the child's own
    // timeout ended it) never reaches the guest; the guest stops with the timeout.
    check_deadline(state)?;
    match result {
        Ok(n) => Ok(i32::try_from(n).unwrap_or(i32::MAX)),
        Err(Blocked::Op(err)) => Ok(state.spawn.fail(read_error(&err), error_chain(&err))),
        Err(Blocked::Poll(err)) => Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
        Err(Blocked::Deadline) => Err(DeadlineExceeded.into()),
    }
}

fn poll(mut caller: Caller<'_, GuestState>, handle: i32, interest: i32, timeout_ms: i64) -> Result<i32> {
    let state = caller.data_mut();
    if interest & !0xf != 0 || interest == 0 {
        return Ok(state.spawn.fail(ErrorCode::InvalidArgument, format!("bad poll interest {interest:#x}")));
    }
    let user_deadline = until(timeout_ms);
    let deadline = earliest(user_deadline, state.deadline);
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    let wanted = Interest {
        stdin: interest & 1 != 0,
        stdout: interest & 2 != 0,
        stderr: interest & 4 != 0,
        exit: interest & 8 != 0,
    };
    let ready = if entry.outcome.is_some() {
        // Reaped already: the exit is ready, and the pipes may still hold output.
        let streams = Interest { exit: false, ..wanted };
        let mut ready = if streams.is_empty() {
            Interest::default()
        } else {
            match entry.child.poll(streams, Some(Duration::ZERO)) {
                Ok(ready) => ready,
                Err(err) => return Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
            }
        };
        ready.exit = wanted.exit;
        ready
    } else {
        match entry.child.poll(wanted, deadline.map(|d| d.saturating_duration_since(Instant::now()))) {
            Ok(ready) => ready,
            Err(err) => return Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
        }
    };
    let bits = i32::from(ready.stdin)
        | i32::from(ready.stdout) << 1
        | i32::from(ready.stderr) << 2
        | i32::from(ready.exit) << 3;
    check_deadline(state)?;
    Ok(bits)
}

/// Reaps `entry` if it ended by `deadline` (`None`: wait without limit). Returns whether it
/// has an outcome.
fn wait_entry(entry: &mut ChildEntry, deadline: Option<Instant>) -> std::result::Result<bool, WaitError> {
    if entry.outcome.is_some() {
        return Ok(true);
    }
    // Not `Child::wait`, which closes stdin: a wait leaves the child as it is.
    let limit = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
    let outcome = entry.child.wait_timeout(limit)?;
    entry.outcome = outcome;
    Ok(entry.outcome.is_some())
}

fn wait(mut caller: Caller<'_, GuestState>, handle: i32, timeout_ms: i64, status_ptr: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
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
            Ok(state.spawn.fail(ErrorCode::Timeout, format!("child `{handle}` is still running")))
        }
        Err(err) => Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
    }
}

fn wait_any(
    mut caller: Caller<'_, GuestState>,
    handles_ptr: i32,
    count: i32,
    timeout_ms: i64,
    status_ptr: i32,
) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    if !(1..=MAX_WAIT_ANY).contains(&count) {
        return Ok(state
            .spawn
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
        Err(bad) => return Ok(state.spawn.fail(ErrorCode::BadHandle, format!("`{bad}` is not a handle"))),
    };
    let (indexes, mut children): (Vec<usize>, Vec<&mut Child>) =
        entries.into_iter().map(|(index, entry)| (index, &mut entry.child)).unzip();
    let waited = wrt_host_spawn::wait_any(&mut children, deadline.map(|d| d.saturating_duration_since(Instant::now())));
    check_deadline(state)?;
    match waited {
        Ok(Some((position, outcome))) => {
            let index = indexes[position];
            let record = status::encode(&outcome);
            if let Ok(entry) = state.spawn.children.get_mut(handles[index]) {
                entry.outcome = Some(outcome);
            }
            data[status_range].copy_from_slice(&record);
            Ok(index as i32)
        }
        Ok(None) => {
            check_deadline(state)?;
            Ok(state.spawn.fail(ErrorCode::Timeout, "no child ended before the timeout"))
        }
        Err(err) => Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
    }
}

fn kill(mut caller: Caller<'_, GuestState>, handle: i32, signal: i32) -> Result<i32> {
    let state = caller.data_mut();
    let signal = match Signal::try_from(signal) {
        Ok(signal) if (1..=31).contains(&(signal as i32)) => signal,
        _ => {
            return Ok(state
                .spawn
                .fail(ErrorCode::InvalidArgument, format!("`{signal}` is not a signal number from 1 to 31")));
        }
    };
    let entry = try_code!(state, state.spawn.children.get_mut(handle), "`{handle}` is not a handle");
    if entry.outcome.is_some() {
        return Ok(0);
    }
    match entry.child.kill(signal) {
        Ok(()) => Ok(0),
        Err(err) => Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
    }
}

fn release(mut caller: Caller<'_, GuestState>, handle: i32) -> Result<i32> {
    let state = caller.data_mut();
    let mut entry = try_code!(state, state.spawn.children.remove(handle), "`{handle}` is not a handle");
    if entry.outcome.is_none() {
        let _ = entry.child.kill(Signal::SIGKILL);
        let _ = entry.child.wait();
    }
    Ok(0)
}

fn run(mut caller: Caller<'_, GuestState>, req_ptr: i32, req_len: i32, io_ptr: i32, status_ptr: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    // For the audit record of a request that fails before the spawner sees it.
    let program = memory::slice(data, req_ptr, req_len).map(|b| request::program_bytes(b).to_vec()).unwrap_or_default();
    let io = try_request!(
        state,
        &program,
        memory::slice(data, io_ptr, 24),
        "io record at {io_ptr:#x} is outside linear memory"
    );
    let field = |i: usize| i32::from_le_bytes([io[i * 4], io[i * 4 + 1], io[i * 4 + 2], io[i * 4 + 3]]);
    let [stdin_ptr, stdin_len, stdout_ptr, stdout_cap, stderr_ptr, stderr_cap] = std::array::from_fn(field);
    let stdin = try_request!(
        state,
        &program,
        memory::slice(data, stdin_ptr, stdin_len),
        "stdin buffer {stdin_ptr:#x}+{stdin_len:#x} is outside linear memory"
    );
    let stdout_range = try_request!(
        state,
        &program,
        memory::range(data.len(), stdout_ptr, stdout_cap),
        "stdout buffer {stdout_ptr:#x}+{stdout_cap:#x} is outside linear memory"
    );
    let stderr_range = try_request!(
        state,
        &program,
        memory::range(data.len(), stderr_ptr, stderr_cap),
        "stderr buffer {stderr_ptr:#x}+{stderr_cap:#x} is outside linear memory"
    );
    let status_range = try_request!(
        state,
        &program,
        memory::range(data.len(), status_ptr, RUN_STATUS_LEN as i32),
        "status record at {status_ptr:#x} is outside linear memory"
    );
    let bytes = try_request!(
        state,
        &program,
        memory::slice(data, req_ptr, req_len),
        "spawn request {req_ptr:#x}+{req_len:#x} is outside linear memory"
    );
    let request = try_request!(state, &program, request::decode(bytes), "malformed spawn request");
    let mut command = to_command(&request, state, true);
    // Keep no more output than fits the guest's buffers (or the requested limit), nor more
    // than the memory limit leaves room for (half for each stream): the host holds the output
    // until the child has ended.
    let room = (stdout_range.len().max(stderr_range.len()) as u64).min(state.buffer_room() / 2).max(1);
    command.output_limit(request.output_limit.map_or(room, |limit| limit.min(room)));
    let output = match state.spawn.spawner.output(&command, Some(stdin)) {
        Ok(output) => output,
        Err(wrt_host_spawn::OutputError::Spawn(err)) => return Ok(state.spawn.spawn_failed(&request.program, &err)),
        Err(err) => return Ok(state.spawn.fail(ErrorCode::Io, error_chain(&err))),
    };
    state.spawn.spawns += 1;
    let mut outcome = output.outcome;
    let stdout_len = output.stdout.len().min(stdout_range.len());
    let stderr_len = output.stderr.len().min(stderr_range.len());
    outcome.truncated.stdout |= output.stdout.len() > stdout_len;
    outcome.truncated.stderr |= output.stderr.len() > stderr_len;
    data[stdout_range.start..stdout_range.start + stdout_len].copy_from_slice(&output.stdout[..stdout_len]);
    data[stderr_range.start..stderr_range.start + stderr_len].copy_from_slice(&output.stderr[..stderr_len]);
    data[status_range].copy_from_slice(&status::encode_run(&outcome, stdout_len as u32, stderr_len as u32));
    check_deadline(state)?;
    Ok(0)
}

fn last_error(mut caller: Caller<'_, GuestState>, ptr: i32, len: i32) -> Result<i32> {
    let memory = match guest_memory(&mut caller) {
        Ok(memory) => memory,
        Err(ret) => return Ok(ret),
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let message = state.spawn.last_error.as_bytes();
    let buf = match memory::slice_mut(data, ptr, len) {
        Ok(buf) => buf,
        Err(code) => return Ok(code.to_return()),
    };
    let n = message.len().min(buf.len());
    buf[..n].copy_from_slice(&message[..n]);
    Ok(i32::try_from(message.len()).unwrap_or(i32::MAX))
}

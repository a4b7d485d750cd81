//! Spawn and run: a checked spawn request becomes a host-spawn `Command`, started under the
//! sandbox's policy.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use wrt_abi::ErrorCode;
use wrt_abi::consts::{FIRST_BUFFER_HANDLE, MAX_LIVE_HANDLES};
use wrt_abi::request::{SpawnRequest, StdioMode};
use wrt_host_spawn::{ChildStdout, Command, Stdio};
use wrt_text::error_chain;

use super::drain::Drain;
use super::spawn_state::{ChildEntry, SpawnState};
use super::{Failure, Served};
use crate::stop::Stop;

/// The command of a request. A stream the child inherits while the guest's own is captured
/// goes into the same capture, through a pipe and a drain thread.
///
/// # Errors
///
/// No pipe or thread could be made for such a stream.
fn to_command(
    request: &SpawnRequest,
    spawn: &mut SpawnState,
    stop: &Stop,
    all_piped: bool,
) -> std::io::Result<(Command, Vec<Drain>)> {
    let mut command = Command::new(&request.program);
    command.args(&request.args);
    for (name, value) in &request.env {
        command.env(name, value);
    }
    if let Some(cwd) = &request.cwd {
        command.cwd(cwd);
    }
    // "Inherit" means the sandbox's own stream: a child may write where the guest writes (into
    // the same capture when the embedder captures it), but never around a stream the embedder
    // discarded.
    let [inherit_in, inherit_out, inherit_err] = spawn.inherit;
    let modes = if all_piped { [StdioMode::Piped; 3] } else { request.stdio };
    // `ChildStdout` (stdin only) is connected by `spawn`, which owns the source's pipe; here,
    // and in `run`, which pipes every stream, it is null.
    let stdio = |mode, inherit_ok: bool| match mode {
        StdioMode::Piped => Stdio::Piped,
        StdioMode::Inherit if inherit_ok => Stdio::Inherit,
        StdioMode::Stdout => Stdio::MergeWithStdout,
        StdioMode::Pty => Stdio::Pty,
        StdioMode::Inherit | StdioMode::Null | StdioMode::ChildStdout => Stdio::Null,
    };
    let [mut stdout, mut stderr] = [stdio(modes[1], inherit_out), stdio(modes[2], inherit_err)];
    let mut drains = Vec::new();
    for (mode, inherit, capture, target) in [
        (modes[1], inherit_out, &spawn.captures[0], &mut stdout),
        (modes[2], inherit_err, &spawn.captures[1], &mut stderr),
    ] {
        if let (StdioMode::Inherit, false, Some(capture)) = (mode, inherit, capture) {
            let (write, drain) = spawn.drains.pipe_into(capture)?;
            *target = Stdio::File(write);
            drains.push(drain);
        }
    }
    command.stdin(stdio(modes[0], inherit_in));
    command.stdout(stdout);
    command.stderr(stderr);
    // A child never outlives the sandbox's deadline: its own timeout ends no later.
    let requested = request.timeout_ms.map(Duration::from_millis);
    let remaining = stop.deadline().map(|d| d.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
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
    if let Some((rows, cols)) = request.pty_size {
        let default = |n: u16, d: u16| if n == 0 { d } else { n };
        command.pty_size(default(rows, 24), default(cols, 80));
    }
    Ok((command, drains))
}

/// Starts a checked request under the sandbox's policy: the new child's handle.
pub(crate) fn spawn(spawn: &mut SpawnState, stop: &Stop, request: &SpawnRequest) -> Served<i32> {
    // A cancelled run starts nothing more: its children were killed when it was cancelled.
    stop.check()?;
    // Every check that can refuse the spawn comes before the program starts: the handle here,
    // then the policy, the concurrency limit and the descriptor budget in the spawner.
    if !spawn.children.has_room(MAX_LIVE_HANDLES) {
        let reason = format!("{MAX_LIVE_HANDLES} handles are live, or every handle was used; release one first");
        // The request fails either way; a failed audit write cannot make it fail harder.
        if let Ok(spawner) = spawn.spawner() {
            let _ = spawner.audit_refused(request.program.as_bytes(), &reason);
        }
        let message = format!("cannot spawn `{}`: {reason}", request.program);
        return Ok(Err(Failure::new(ErrorCode::NoMemory, message)));
    }
    let (mut command, drains) = match to_command(request, spawn, stop, false) {
        Ok(made) => made,
        Err(err) => return Ok(Err(Failure::new(ErrorCode::Io, format!("cannot capture the child's output: {err}")))),
    };
    // A pipeline stage: stdin is another child's stdout pipe. The command gets a copy of
    // its descriptor; the source gives up its own only once the spawn succeeded, so a
    // refused stage leaves the source's stdout readable as before.
    let source = match request.stdin_child {
        None => None,
        Some(raw) => match take_source(spawn, raw) {
            Ok((handle, stdout, copy)) => {
                command.stdin(copy);
                Some((handle, stdout))
            }
            Err((code, message)) => {
                return Ok(Err(spawn.refuse_request(code, request.program.as_bytes(), message)));
            }
        },
    };
    let spawner = match spawn.spawner() {
        Ok(spawner) => spawner,
        Err(failure) => return Ok(Err(failure)),
    };
    let spawned = spawner.spawn(&command);
    drop(command);
    if let Some((handle, stdout)) = source
        && spawned.is_err()
        && let Ok(entry) = spawn.children.get_mut(handle)
    {
        // Cannot fail: the source's stdout was taken just above. Were it to, the pipe
        // closes and the source sees a reader gone, as after a consumed stage.
        let _ = entry.child.lock().put_back_stdout(stdout);
    }
    match spawned {
        Ok(child) => {
            spawn.spawns += 1;
            let handle = tried!(spawn.children.insert(ChildEntry::new(child, drains)), "too many handles");
            Ok(Ok(handle))
        }
        Err(err) => Ok(Err(spawn.spawn_failure(&request.program, &err))),
    }
}

/// Takes the stdout pipe of the guest's child `raw` for a pipeline stage: the child's handle,
/// the pipe, and a copy of its descriptor for the new child's stdin.
fn take_source(spawn: &mut SpawnState, raw: u32) -> Result<(i32, ChildStdout, Stdio), (ErrorCode, String)> {
    let children = &mut spawn.children;
    let handle = i32::try_from(raw).ok().filter(|&h| h > 0 && h < FIRST_BUFFER_HANDLE);
    let Some(handle) = handle else {
        let what = if raw >= FIRST_BUFFER_HANDLE as u32 && raw <= i32::MAX as u32 {
            "is a buffer handle, not a child"
        } else {
            "is not a handle"
        };
        return Err((ErrorCode::BadHandle, format!("pipeline source `{raw}` {what}")));
    };
    let Ok(entry) = children.get_mut(handle) else {
        let what = if children.was_issued(handle) { "was released" } else { "is not a handle" };
        return Err((ErrorCode::BadHandle, format!("pipeline source `{handle}` {what}")));
    };
    let not_piped = || {
        (
            ErrorCode::NotPiped,
            format!("the stdout of pipeline source `{handle}` is not piped, already taken, or closed"),
        )
    };
    let taken = entry.child.lock().take_stdout();
    let stdout = match taken {
        Ok(Some(stdout)) => stdout,
        Ok(None) => return Err(not_piped()),
        Err(err) => return Err((ErrorCode::Io, format!("cannot take the stdout of `{handle}`: {err}"))),
    };
    match stdout.as_fd().try_clone_to_owned() {
        Ok(copy) => Ok((handle, stdout, Stdio::from(copy))),
        Err(err) => {
            let _ = entry.child.lock().put_back_stdout(stdout);
            let emfile = err.raw_os_error() == Some(nix::errno::Errno::EMFILE as i32);
            let code = if emfile { ErrorCode::NoMemory } else { ErrorCode::Io };
            Err((code, format!("cannot copy the stdout of `{handle}`: {err}")))
        }
    }
}

/// What [`run`] collected.
pub(crate) struct RunOutput {
    pub(crate) outcome: wrt_host_spawn::ChildOutcome,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Runs a checked request to its end with every stream piped: writes `stdin`, closes it, and
/// keeps at most `caps` bytes of stdout and stderr (the rest is dropped and flagged as
/// truncated).
pub(crate) fn run(
    spawn: &mut SpawnState,
    stop: &Stop,
    buffer_room: u64,
    request: &SpawnRequest,
    stdin: &[u8],
    caps: [usize; 2],
) -> Served<RunOutput> {
    stop.check()?;
    let (mut command, _) = match to_command(request, spawn, stop, true) {
        Ok(made) => made,
        Err(err) => return Ok(Err(Failure::new(ErrorCode::Io, format!("cannot capture the child's output: {err}")))),
    };
    // Keep no more output than fits the guest's buffers (or the requested limit), nor more
    // than the memory limit leaves room for (half for each stream): the host holds the output
    // until the child has ended.
    let room = (caps[0].max(caps[1]) as u64).min(buffer_room / 2).max(1);
    command.output_limit(request.output_limit.map_or(room, |limit| limit.min(room)));
    let spawner = match spawn.spawner() {
        Ok(spawner) => spawner,
        Err(failure) => return Ok(Err(failure)),
    };
    let output = match spawner.output(&command, Some(stdin)) {
        Ok(output) => output,
        Err(wrt_host_spawn::OutputError::Spawn(err)) => {
            return Ok(Err(spawn.spawn_failure(&request.program, &err)));
        }
        Err(err) => {
            // Started, then killed and reaped: it counts, and the end of the guest sweeps
            // whatever it left (see `SpawnState::end_children`).
            spawn.spawns += 1;
            return Ok(Err(Failure::new(ErrorCode::Io, error_chain(&err))));
        }
    };
    spawn.spawns += 1;
    let (mut stdout, mut stderr, mut outcome) = (output.stdout, output.stderr, output.outcome);
    outcome.truncated.stdout |= stdout.len() > caps[0];
    outcome.truncated.stderr |= stderr.len() > caps[1];
    stdout.truncate(caps[0]);
    stderr.truncate(caps[1]);
    spawn.stream_bytes += (stdin.len() + stdout.len() + stderr.len()) as u64;
    stop.check()?;
    Ok(Ok(RunOutput { outcome, stdout, stderr }))
}

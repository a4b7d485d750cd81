//! The `wasi:io` streams and pollables of `wrt:process` children: stdin as an output-stream,
//! stdout and stderr as input-streams, and a pollable for the exit. Each works through the same
//! child as the core ABI's handle (shared with it), so the output limit and the child's own
//! timeout hold, and none waits past the sandbox's deadline: a read or write past it stops the
//! guest with the timeout.
//!
//! Readiness is found by polling the child without blocking, with a sleep between tries that
//! grows from 50 µs to 5 ms while nothing happens: the child's pipes stay with the child (the
//! output limit closes them), so there is no descriptor of wrt's own to hand to the async
//! reactor. A stream that is busy never sleeps.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use wasmtime::component::Resource;
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::{
    DynInputStream, DynOutputStream, DynPollable, InputStream, OutputStream, Pollable, StreamError, StreamResult,
    subscribe,
};
use wrt_abi::ErrorCode;
use wrt_host_spawn::{Child, Interest, ReadError, WriteError};

use super::wit::bindings::wrt::process::process::OutputSource;
use super::wit::bindings::wrt::process::types::Error;
use super::wit::wit_fail;
use crate::epoch_ticker::DeadlineExceeded;
use crate::guest_state::GuestState;
use crate::process_service::spawn_state::SharedChild;
use crate::stop::StopCell;

/// The most bytes one read returns, and one write accepts.
const CHUNK: usize = 64 << 10;
/// The first and the longest sleep between readiness checks.
const FIRST_NAP: Duration = Duration::from_micros(50);
const LONGEST_NAP: Duration = Duration::from_millis(5);

/// Waits until `ready` says so, or the sandbox's deadline passed, checking with growing naps.
async fn wait_until(deadline: &StopCell, mut ready: impl FnMut() -> bool) {
    let mut nap = FIRST_NAP;
    loop {
        if ready() || deadline.passed() {
            return;
        }
        let sleep = match deadline.get() {
            Some(at) => nap.min(at.saturating_duration_since(std::time::Instant::now())),
            None => nap,
        };
        tokio::time::sleep(sleep).await;
        nap = (nap * 2).min(LONGEST_NAP);
    }
}

/// Whether `wanted` is ready on `child` now; an error is ready (the next operation reports it).
fn ready_now(child: &SharedChild, wanted: Interest) -> bool {
    match child.lock().poll(wanted, Some(Duration::ZERO)) {
        Ok(ready) => !ready.is_empty(),
        Err(_) => true,
    }
}

/// What a stream needs of the guest's state.
fn parts(state: &mut GuestState) -> (StopCell, Arc<AtomicU64>) {
    (state.stop_cell.clone(), Arc::clone(state.spawn.shared_stream_bytes.get_or_insert_default()))
}

/// Marks stream `index` (0 stdin, 1 stdout, 2 stderr) of `handle` taken, and returns its child.
fn take(state: &mut GuestState, handle: i32, index: usize, name: &str) -> Result<SharedChild, Error> {
    let entry = match state.spawn.children.get_mut(handle) {
        Ok(entry) => entry,
        Err(code) => return Err(wit_fail(code, format!("`{handle}` is not a handle"))),
    };
    let open = {
        let mut child = entry.child.lock();
        let interest = Interest { stdin: index == 0, stdout: index == 1, stderr: index == 2, exit: false };
        // A stream that was never piped is refused now, not at the first read.
        match index {
            0 => child.has_stdin(),
            _ => child.poll(interest, Some(Duration::ZERO)).is_ok() && is_piped(&mut child, index),
        }
    };
    if entry.taken[index] || !open {
        let message = format!("the {name} of `{handle}` is not piped, already taken, or closed");
        return Err(wit_fail(ErrorCode::NotPiped, message));
    }
    entry.taken[index] = true;
    Ok(entry.child.clone())
}

/// Whether output stream `index` of `child` is piped (a read of nothing does not say
/// `NotPiped`).
fn is_piped(child: &mut Child, index: usize) -> bool {
    let read = match index {
        1 => child.try_read_stdout(&mut []),
        _ => child.try_read_stderr(&mut []),
    };
    !matches!(read, Err(ReadError::NotPiped { .. }))
}

/// `take-stdout` and `take-stderr`.
pub(crate) fn take_output(
    state: &mut GuestState,
    handle: i32,
    source: OutputSource,
) -> wasmtime::Result<Result<Resource<DynInputStream>, Error>> {
    let (index, name) = match source {
        OutputSource::Stdout => (1, "stdout"),
        OutputSource::Stderr => (2, "stderr"),
    };
    let child = match take(state, handle, index, name) {
        Ok(child) => child,
        Err(err) => return Ok(Err(err)),
    };
    let (deadline, bytes) = parts(state);
    let stream: DynInputStream = Box::new(ChildOutput { child, source, deadline, bytes });
    Ok(Ok(state.ctx().table.push(stream)?))
}

/// `take-stdin`.
pub(crate) fn take_stdin(
    state: &mut GuestState,
    handle: i32,
) -> wasmtime::Result<Result<Resource<DynOutputStream>, Error>> {
    let child = match take(state, handle, 0, "stdin") {
        Ok(child) => child,
        Err(err) => return Ok(Err(err)),
    };
    let (deadline, bytes) = parts(state);
    let stream: DynOutputStream = Box::new(ChildInput { child, deadline, bytes, pending: Vec::new(), failed: None });
    Ok(Ok(state.ctx().table.push(stream)?))
}

/// `subscribe`: a pollable ready once the child has ended.
pub(crate) fn subscribe_exit(state: &mut GuestState, handle: i32) -> wasmtime::Result<Resource<DynPollable>> {
    // A released handle cannot reach here (the resource holds it); a handle without an entry
    // would be a broken invariant, answered with a pollable that is ready at once.
    let child = state.spawn.children.get(handle).ok().map(|entry| entry.child.clone());
    let deadline = state.stop_cell.clone();
    let table = state.ctx().table;
    let exit = table.push(ChildExit { child, deadline })?;
    subscribe(table, exit)
}

/// A child's stdout or stderr.
struct ChildOutput {
    child: SharedChild,
    source: OutputSource,
    deadline: StopCell,
    bytes: Arc<AtomicU64>,
}

impl InputStream for ChildOutput {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if self.deadline.passed() {
            return Err(StreamError::Trap(DeadlineExceeded.into()));
        }
        let mut buf = vec![0; size.min(CHUNK)];
        let read = {
            let mut child = self.child.lock();
            match self.source {
                OutputSource::Stdout => child.try_read_stdout(&mut buf),
                OutputSource::Stderr => child.try_read_stderr(&mut buf),
            }
        };
        match read {
            Ok(Some(0)) | Err(ReadError::NotPiped { .. }) => Err(StreamError::Closed),
            Ok(Some(n)) => {
                buf.truncate(n);
                self.bytes.fetch_add(n as u64, Ordering::Relaxed);
                Ok(Bytes::from(buf))
            }
            Ok(None) => Ok(Bytes::new()),
            Err(err) => Err(StreamError::LastOperationFailed(err.into())),
        }
    }
}

#[async_trait::async_trait]
impl Pollable for ChildOutput {
    async fn ready(&mut self) {
        let wanted = match self.source {
            OutputSource::Stdout => Interest { stdout: true, ..Interest::default() },
            OutputSource::Stderr => Interest { stderr: true, ..Interest::default() },
        };
        let child = self.child.clone();
        wait_until(&self.deadline, || ready_now(&child, wanted)).await;
    }
}

/// A child's stdin. Bytes the pipe has no room for wait in `pending` (at most one chunk), and
/// go out as it drains. Dropping the stream closes the pipe.
struct ChildInput {
    child: SharedChild,
    deadline: StopCell,
    bytes: Arc<AtomicU64>,
    pending: Vec<u8>,
    /// A write that failed, reported by the next call.
    failed: Option<WriteError>,
}

impl ChildInput {
    /// Writes what is pending, without blocking.
    fn push(&mut self) -> StreamResult<()> {
        if self.deadline.passed() {
            return Err(StreamError::Trap(DeadlineExceeded.into()));
        }
        if let Some(err) = self.failed.take() {
            return Err(match err {
                WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => StreamError::Closed,
                err => StreamError::LastOperationFailed(err.into()),
            });
        }
        while !self.pending.is_empty() {
            let written = self.child.lock().try_write_stdin(&self.pending);
            match written {
                Ok(Some(n)) if n > 0 => {
                    self.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    self.pending.drain(..n);
                }
                Ok(_) => break,
                Err(err) => {
                    self.pending.clear();
                    self.failed = Some(err);
                    return self.push();
                }
            }
        }
        Ok(())
    }
}

impl OutputStream for ChildInput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push()?;
        if bytes.len() > CHUNK.saturating_sub(self.pending.len()) {
            return Err(StreamError::Trap(wasmtime::format_err!("write of more bytes than check-write permitted")));
        }
        self.pending.extend_from_slice(&bytes);
        self.push()
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.push()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.push()?;
        Ok(if self.pending.is_empty() { CHUNK } else { 0 })
    }
}

#[async_trait::async_trait]
impl Pollable for ChildInput {
    async fn ready(&mut self) {
        let child = self.child.clone();
        let stdin = Interest { stdin: true, ..Interest::default() };
        loop {
            if self.push().is_err() || self.pending.is_empty() || self.deadline.passed() {
                return;
            }
            wait_until(&self.deadline, || ready_now(&child, stdin)).await;
        }
    }
}

impl Drop for ChildInput {
    fn drop(&mut self) {
        self.child.lock().close_stdin();
    }
}

/// Ready once the child has ended (or at the sandbox's deadline).
struct ChildExit {
    child: Option<SharedChild>,
    deadline: StopCell,
}

#[async_trait::async_trait]
impl Pollable for ChildExit {
    async fn ready(&mut self) {
        let Some(child) = self.child.clone() else { return };
        let exit = Interest { exit: true, ..Interest::default() };
        wait_until(&self.deadline, || ready_now(&child, exit)).await;
    }
}

//! WASI calls that block outside wasm, made to stop at the guest's deadline: reads of the
//! inherited stdin (a pipe or terminal with no writer activity) and clock sleeps in
//! `poll_oneoff`. The epoch callback cannot stop them, since no wasm runs while they wait.
//!
//! - Stdin: the guest's stream becomes ready at the deadline, and a read past the deadline stops
//!   the guest (the stream traps with [`DeadlineExceeded`]).
//! - `poll_oneoff`: relative clock subscriptions that would wake after the deadline are
//!   shortened to it for the call (and restored in guest memory afterwards); a poll that
//!   returns past the deadline stops the guest.
//!
//! - Stdout and stderr: a write to an inherited pipe or socket waits for room with `poll`, at
//!   most until the deadline, and writes no more than fits without blocking (one page), so a
//!   reader that stops reading cannot hold the guest past it. This is a component's path, and a
//!   core module's in a process whose `SIGURG` handler is not wrt's; otherwise a core module
//!   writes to wrt's streams directly (`wasi::direct_writes`), interrupted at the deadline.
//!
//! Files need nothing here: WASI runs their calls on the guest's thread, which the ticker
//! interrupts from the deadline on (`epoch_ticker`), so a FIFO's open that waits for the other end
//! or a character device that blocks ends there; WASI reads files at an offset, which fails on
//! a FIFO at once (`ESPIPE`).
//!
//! Limits: a `poll_oneoff` that waits only on absolute-time clocks still waits for them (the
//! guest stops when it returns).

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use wasmtime::{Caller, Linker, Val};
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use super::{limits, original};
use crate::epoch_ticker::DeadlineExceeded;
use crate::guest_state::GuestState;
use crate::host_fn::{Mode, define};
use crate::stop::StopCell;

/// Size of a WASI preview 1 `subscription`, and offsets in it.
const SUBSCRIPTION: u64 = 48;
const TAG: u64 = 8;
const CLOCK_TIMEOUT: u64 = 24;
const CLOCK_FLAGS: u64 = 40;
const TAG_CLOCK: u8 = 0;
const ABSTIME: u16 = 1;
/// Past the deadline by this much when a shortened sleep wakes.
const MARGIN: Duration = Duration::from_millis(1);

/// Wraps WASI's `poll_oneoff` in `linker`, which already holds the WASI functions.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>, mode: Mode) -> wasmtime::Result<()> {
    original::shadow(
        linker,
        "poll_oneoff",
        |linker| define!(linker, mode, original::WASI, "poll_oneoff", poll_oneoff, (a: i32, b: i32, c: i32, d: i32)),
    )
}

async fn poll_oneoff(
    mut caller: Caller<'_, GuestState>,
    subscriptions: i32,
    events: i32,
    count: i32,
    event_count: i32,
) -> wasmtime::Result<i32> {
    if let Some(errno) = limits::check_subscriptions(count) {
        return Ok(errno);
    }
    let args = [subscriptions, events, count, event_count].map(Val::I32);
    let Some(deadline) = caller.data().stop.deadline() else {
        let errno = original::call(&mut caller, "poll_oneoff", &args).await?;
        // A run cancelled while it slept stops when the sleep returns.
        caller.data().stop.check()?;
        return Ok(errno);
    };
    let Some(remaining) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
        return Err(DeadlineExceeded.into());
    };
    let limit = u64::try_from((remaining + MARGIN).as_nanos()).unwrap_or(u64::MAX);
    let shortened = shorten_sleeps(&mut caller, subscriptions, count, limit);
    let result = original::call(&mut caller, "poll_oneoff", &args).await;
    restore(&mut caller, &shortened);
    let errno = result?;
    caller.data().stop.check()?;
    Ok(errno)
}

/// Shortens every relative clock subscription longer than `limit` nanoseconds to `limit`, and
/// returns where and what the timeouts were. Leaves memory alone when the subscriptions are out
/// of bounds (WASI's `poll_oneoff` then reports the fault).
fn shorten_sleeps(
    caller: &mut Caller<'_, GuestState>,
    subscriptions: i32,
    count: i32,
    limit: u64,
) -> Vec<(usize, u64)> {
    let mut shortened = Vec::new();
    let Some(wasmtime::Extern::Memory(memory)) = caller.get_export("memory") else {
        return shortened;
    };
    let data = memory.data_mut(&mut *caller);
    let start = u64::from(subscriptions.cast_unsigned());
    let Some(end) = u64::from(count.cast_unsigned()).checked_mul(SUBSCRIPTION).and_then(|len| start.checked_add(len))
    else {
        return shortened;
    };
    if usize::try_from(end).map_or(true, |end| end > data.len()) {
        return shortened;
    }
    for at in (start..end).step_by(SUBSCRIPTION as usize) {
        let at = at as usize;
        let flags = u16::from_le_bytes([data[at + CLOCK_FLAGS as usize], data[at + CLOCK_FLAGS as usize + 1]]);
        if data[at + TAG as usize] != TAG_CLOCK || flags & ABSTIME != 0 {
            continue;
        }
        let field = at + CLOCK_TIMEOUT as usize;
        let timeout = u64::from_le_bytes(data[field..field + 8].try_into().expect("8 bytes"));
        if timeout > limit {
            data[field..field + 8].copy_from_slice(&limit.to_le_bytes());
            shortened.push((field, timeout));
        }
    }
    shortened
}

/// Puts back the timeouts [`shorten_sleeps`] changed.
fn restore(caller: &mut Caller<'_, GuestState>, shortened: &[(usize, u64)]) {
    if shortened.is_empty() {
        return;
    }
    let Some(wasmtime::Extern::Memory(memory)) = caller.get_export("memory") else { return };
    let data = memory.data_mut(&mut *caller);
    for &(field, timeout) in shortened {
        if let Some(bytes) = data.get_mut(field..field + 8) {
            bytes.copy_from_slice(&timeout.to_le_bytes());
        }
    }
}

/// The host's stdin, for a guest with a deadline.
pub(crate) struct DeadlineStdin<S> {
    pub(crate) inner: S,
    pub(crate) deadline: StopCell,
}

impl<S: IsTerminal> IsTerminal for DeadlineStdin<S> {
    fn is_terminal(&self) -> bool {
        self.inner.is_terminal()
    }
}

impl<S: StdinStream> StdinStream for DeadlineStdin<S> {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncRead + Send + Sync> {
        self.inner.async_stream()
    }

    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(DeadlineInput { inner: self.inner.p2_stream(), deadline: self.deadline.clone() })
    }
}

struct DeadlineInput {
    inner: Box<dyn InputStream>,
    deadline: StopCell,
}

#[async_trait::async_trait]
impl InputStream for DeadlineInput {
    fn read(&mut self, size: usize) -> StreamResult<bytes::Bytes> {
        if self.deadline.passed() {
            return Err(StreamError::Trap(DeadlineExceeded.into()));
        }
        self.inner.read(size)
    }
}

#[async_trait::async_trait]
impl Pollable for DeadlineInput {
    async fn ready(&mut self) {
        match self.deadline.get() {
            Some(deadline) => {
                let _ = tokio::time::timeout_at(deadline.into(), self.inner.ready()).await;
            }
            None => self.inner.ready().await,
        }
    }
}

/// The host's stdout or stderr, for a guest with a deadline.
pub(crate) struct DeadlineStdout<S> {
    /// A handle to the stream (`std::io::stdout` or `std::io::stderr`).
    pub(crate) handle: fn() -> S,
    pub(crate) deadline: StopCell,
}

/// A write that fits a pipe with room for anything: Linux reports a pipe writable when one page
/// is free, and a write of at most a page then never blocks.
const PIPE_CHUNK: usize = 4096;

impl<S: IsTerminal> IsTerminal for DeadlineStdout<S> {
    fn is_terminal(&self) -> bool {
        (self.handle)().is_terminal()
    }
}

impl<S> StdoutStream for DeadlineStdout<S>
where
    S: StdoutStream + AsFd + Send + Sync + 'static,
{
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        (self.handle)().async_stream()
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        // What the descriptor is, is looked up at the first write: WASI makes the streams of a
        // guest's stdio when it first touches any descriptor, and most guests never write to
        // stderr, so an `fstat` per run would be a cost for nothing.
        Box::new(LazyStream { handle: self.handle, deadline: self.deadline.clone(), inner: None })
    }
}

/// The stream of [`DeadlineStdout`], made at its first use: a [`DeadlineWriter`] for a pipe or
/// socket (only those can fill up and block a writer for good), the plain stream otherwise.
struct LazyStream<S> {
    handle: fn() -> S,
    deadline: StopCell,
    inner: Option<Box<dyn OutputStream>>,
}

impl<S> LazyStream<S>
where
    S: StdoutStream + AsFd + Send + Sync + 'static,
{
    fn inner(&mut self) -> &mut dyn OutputStream {
        use nix::sys::stat::{SFlag, fstat};
        let (handle, deadline) = (self.handle, &self.deadline);
        &mut **self.inner.get_or_insert_with(|| {
            let out = handle();
            let kind = fstat(out.as_fd()).map(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT);
            match kind {
                Ok(kind) if kind == SFlag::S_IFIFO || kind == SFlag::S_IFSOCK => {
                    Box::new(DeadlineWriter { out, deadline: deadline.clone() })
                }
                _ => out.p2_stream(),
            }
        })
    }
}

#[async_trait::async_trait]
impl<S> OutputStream for LazyStream<S>
where
    S: StdoutStream + AsFd + Send + Sync + 'static,
{
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.inner().write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner().flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner().check_write()
    }
}

#[async_trait::async_trait]
impl<S> Pollable for LazyStream<S>
where
    S: StdoutStream + AsFd + Send + Sync + 'static,
{
    async fn ready(&mut self) {
        self.inner().ready().await;
    }
}

/// Writes to a pipe or socket without ever blocking past the deadline.
struct DeadlineWriter<S> {
    out: S,
    deadline: StopCell,
}

impl<S: AsFd> DeadlineWriter<S> {
    /// Whether the descriptor has room now, or becomes writable within `timeout`.
    fn writable(&self, timeout: PollTimeout) -> bool {
        let mut fds = [PollFd::new(self.out.as_fd(), PollFlags::POLLOUT)];
        // An error or hang-up makes the next write report it.
        poll(&mut fds, timeout).map_or(true, |ready| ready > 0)
    }
}

#[async_trait::async_trait]
impl<S: AsFd + Send + Sync + 'static> OutputStream for DeadlineWriter<S> {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        if self.deadline.passed() {
            return Err(StreamError::Trap(DeadlineExceeded.into()));
        }
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match nix::unistd::write(self.out.as_fd(), rest) {
                Ok(n) => rest = &rest[n..],
                // Past the deadline, the ticker interrupts this thread until the guest stops.
                Err(nix::errno::Errno::EINTR) if self.deadline.passed() => {
                    return Err(StreamError::Trap(DeadlineExceeded.into()));
                }
                Err(nix::errno::Errno::EINTR) => {}
                Err(nix::errno::Errno::EPIPE) => return Err(StreamError::Closed),
                Err(errno) => return Err(StreamError::LastOperationFailed(std::io::Error::from(errno).into())),
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        // Every write went straight to the descriptor: nothing is buffered.
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        if self.deadline.passed() {
            return Err(StreamError::Trap(DeadlineExceeded.into()));
        }
        Ok(if self.writable(PollTimeout::ZERO) { PIPE_CHUNK } else { 0 })
    }
}

#[async_trait::async_trait]
impl<S: AsFd + Send + Sync + 'static> Pollable for DeadlineWriter<S> {
    async fn ready(&mut self) {
        // Blocks this guest's thread, as the synchronous WASI bindings do for every call.
        let timeout = match self.deadline.get() {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now()) + MARGIN;
                PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX)
            }
            None => PollTimeout::NONE,
        };
        self.writable(timeout);
    }
}

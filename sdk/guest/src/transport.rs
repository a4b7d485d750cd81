//! The `wrt_v1` transport of the shared API (`sdk/core/`): each host call the shared
//! [`Command`], [`Child`](crate::Child) and [`wait_any`](crate::wait_any) make, over the safe
//! wrappers of [`sys`], with the request bytes of [`Request`] and the status records of
//! `wrt-abi`. `wrt-process` has a transport with the same functions over `wrt:process`.

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use wrt_abi::ErrorCode;
use wrt_abi::status::{RUN_STATUS_LEN, STATUS_LEN, StatusRecord};

use crate::command::Command;
use crate::error::check;
use crate::handle::Handle;
use crate::request::Request;
use crate::status::{ExitStatus, Output};
use crate::stdio::Stdio;
use crate::sys;

/// A child as the host knows it: its handle, shared by the [`Child`](crate::Child), its pipes
/// and a pipeline's [`Stdio`], and released when the last of them is dropped.
pub(crate) type ChildHandle = Arc<Handle>;

/// The child's number: its handle (the ABI does not tell the guest the process id).
pub(crate) fn id(child: &ChildHandle) -> u32 {
    child.raw() as u32
}

/// `spawn`: starts `cmd` with these streams.
pub(crate) fn spawn(cmd: &Command, stdin: &Stdio, stdout: &Stdio, stderr: &Stdio) -> io::Result<ChildHandle> {
    let request = request(cmd, stdin.clone(), stdout.clone(), stderr.clone()).encode()?;
    let handle = check(sys::spawn(&request), || cmd.context("spawn"))?;
    Ok(Arc::new(Handle::new(handle as i32)))
}

/// `run`: every stream piped, stdin written from `input`, up to `capture` bytes of each output
/// stream captured into buffers of that size in linear memory.
pub(crate) fn run(cmd: &Command, input: &[u8], capture: u64) -> io::Result<Output> {
    let request = request(cmd, Stdio::piped(), Stdio::piped(), Stdio::piped()).encode()?;
    let capacity = usize::try_from(capture).unwrap_or(usize::MAX);
    let buffer = || {
        let mut buffer = Vec::new();
        buffer.try_reserve_exact(capacity).map(|()| buffer).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "cannot allocate {capacity} bytes to capture the output of `{}` (lower its output_limit)",
                    cmd.program.display()
                ),
            )
        })
    };
    let (mut stdout, mut stderr) = (buffer()?, buffer()?);
    let mut status = [0; RUN_STATUS_LEN];
    let ret = sys::run(&request, input, &mut stdout, &mut stderr, &mut status);
    check(ret, || cmd.context("run"))?;
    stdout.shrink_to_fit();
    stderr.shrink_to_fit();
    Ok(Output { status: from_record(&status), stdout, stderr })
}

/// `wait`: the status, or `None` once `timeout` has passed (`None`: no limit).
pub(crate) fn wait(child: &ChildHandle, timeout: Option<Duration>) -> io::Result<Option<ExitStatus>> {
    let mut record = [0; STATUS_LEN];
    let ret = sys::wait(child.raw(), timeout_ms(timeout), &mut record);
    if ret == -ErrorCode::Timeout.raw() {
        return Ok(None);
    }
    check(ret, || format!("cannot wait for child {}", id(child)))?;
    Ok(Some(from_record(&record)))
}

/// `wait` with a timeout of 0.
pub(crate) fn try_wait(child: &ChildHandle) -> io::Result<Option<ExitStatus>> {
    wait(child, Some(Duration::ZERO))
}

/// `kill`: the host checks the signal number.
pub(crate) fn signal(child: &ChildHandle, signal: i32) -> io::Result<()> {
    check(sys::kill(child.raw(), signal), || format!("cannot send signal {signal} to child {}", id(child))).map(drop)
}

/// `pty_resize`.
pub(crate) fn pty_resize(child: &ChildHandle, rows: u16, cols: u16) -> io::Result<()> {
    let ret = sys::pty_resize(child.raw(), i32::from(rows), i32::from(cols));
    check(ret, || format!("cannot resize the terminal of child {}", id(child))).map(drop)
}

/// `wait_any`: the index (unchecked) and status of the first child to end, or `None` once
/// `timeout` has passed.
pub(crate) fn wait_any(
    children: &[&ChildHandle],
    timeout: Option<Duration>,
) -> io::Result<Option<(usize, ExitStatus)>> {
    let handles: Vec<i32> = children.iter().map(|child| child.raw()).collect();
    let mut record = [0; STATUS_LEN];
    let ret = sys::wait_any(&handles, timeout_ms(timeout), &mut record);
    if ret == -ErrorCode::Timeout.raw() {
        return Ok(None);
    }
    let index = check(ret, || format!("cannot wait for any of {} children", handles.len()))? as usize;
    Ok(Some((index, from_record(&record))))
}

/// The spawn request of `cmd` with these streams.
pub(crate) fn request(cmd: &Command, stdin: Stdio, stdout: Stdio, stderr: Stdio) -> Request<'_> {
    Request {
        program: &cmd.program,
        args: cmd.args.iter().map(OsString::as_os_str).collect(),
        env: cmd.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())).collect(),
        cwd: cmd.cwd.as_deref().unwrap_or_default(),
        stdin,
        stdout,
        stderr,
        timeout_ms: cmd.timeout_ms().unwrap_or(0),
        output_limit: cmd.output_limit.unwrap_or(0),
        pty_size: cmd.pty_size.unwrap_or((0, 0)),
    }
}

/// `timeout` as the ABI's `timeout_ms`: rounded up to whole milliseconds, `-1` for none.
pub(crate) fn timeout_ms(timeout: Option<Duration>) -> i64 {
    match timeout {
        None => -1,
        Some(timeout) => i64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX),
    }
}

/// Decodes a status record (the first [`STATUS_LEN`] bytes of `record`).
pub(crate) fn from_record(record: &[u8]) -> ExitStatus {
    ExitStatus::from(StatusRecord::decode(record.first_chunk().expect("a status record")))
}

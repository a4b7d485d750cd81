//! The `wrt:process` transport of the shared API (`sdk/core/`): each host call the
//! shared [`Command`], [`Child`](crate::Child) and [`wait_any`](crate::wait_any) make, over the
//! bindings of [`sys`]. `wrt-guest` has a transport with the same functions over `wrt_v1`.

#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use wrt_abi::request::StdioMode;
use wrt_abi::status::{EXITED, FLAG_STDERR_TRUNCATED, FLAG_STDOUT_TRUNCATED, FLAG_TIMED_OUT, SIGNALED, StatusRecord};

use crate::command::Command;
use crate::error::{ErrorCode, from_wit, is, local};
use crate::status::{ExitStatus, Output};
use crate::stdio::Stdio;
use crate::sys;

/// A child as the host knows it: its `child` resource, shared by the [`Child`](crate::Child),
/// its pipes and a pipeline's [`Stdio`], and dropped (which kills a child still running) with
/// the last of them.
pub(crate) type ChildHandle = Rc<sys::Child>;

/// The child's number: its process id on the host.
pub(crate) fn id(child: &ChildHandle) -> u32 {
    child.id()
}

/// `spawn`, or the source child's `pipe-into` when stdin is another child's stdout.
pub(crate) fn spawn(cmd: &Command, stdin: &Stdio, stdout: &Stdio, stderr: &Stdio) -> io::Result<ChildHandle> {
    let wit = to_wit(cmd, stdin, stdout, stderr)?;
    let spawned = match stdin.source() {
        Some(source) => source.pipe_into(&wit),
        None => sys::wrt::process::process::spawn(&wit),
    };
    spawned.map(Rc::new).map_err(|e| from_wit(e, || cmd.context("spawn")))
}

/// `run`: every stream piped, stdin written from `input`, up to `capture` bytes of each output
/// stream captured by the host.
pub(crate) fn run(cmd: &Command, input: &[u8], capture: u64) -> io::Result<Output> {
    let piped = Stdio::piped();
    let wit = to_wit(cmd, &piped, &piped, &piped)?;
    let capture = u32::try_from(capture).unwrap_or(u32::MAX);
    let output =
        sys::wrt::process::process::run(&wit, input, capture).map_err(|e| from_wit(e, || cmd.context("run")))?;
    Ok(Output { status: from_wit_status(&output.status), stdout: output.stdout, stderr: output.stderr })
}

/// `child.wait`: the status, or `None` once `timeout` has passed (`None`: no limit).
pub(crate) fn wait(child: &ChildHandle, timeout: Option<Duration>) -> io::Result<Option<ExitStatus>> {
    match child.wait(timeout_ms(timeout)) {
        Ok(status) => Ok(Some(from_wit_status(&status))),
        Err(err) if is(&err, ErrorCode::Timeout) => Ok(None),
        Err(err) => Err(from_wit(err, || format!("cannot wait for child {}", id(child)))),
    }
}

/// `child.try-wait`.
pub(crate) fn try_wait(child: &ChildHandle) -> io::Result<Option<ExitStatus>> {
    match child.try_wait() {
        Ok(status) => Ok(status.as_ref().map(from_wit_status)),
        Err(err) => Err(from_wit(err, || format!("cannot wait for child {}", id(child)))),
    }
}

/// `child.kill`. The WIT takes a `u8`: numbers it cannot carry are refused here, as the host
/// would.
pub(crate) fn signal(child: &ChildHandle, signal: i32) -> io::Result<()> {
    let context = || format!("cannot send signal {signal} to child {}", id(child));
    let Ok(wit_signal) = u8::try_from(signal) else {
        return Err(local(ErrorCode::InvalidArgument, context()));
    };
    child.kill(wit_signal).map_err(|e| from_wit(e, context))
}

/// `child.pty-resize`.
pub(crate) fn pty_resize(child: &ChildHandle, rows: u16, cols: u16) -> io::Result<()> {
    child
        .pty_resize(rows, cols)
        .map_err(|e| from_wit(e, || format!("cannot resize the terminal of child {}", id(child))))
}

/// `wait-any`: the index (unchecked) and status of the first child to end, or `None` once
/// `timeout` has passed.
pub(crate) fn wait_any(
    children: &[&ChildHandle],
    timeout: Option<Duration>,
) -> io::Result<Option<(usize, ExitStatus)>> {
    let resources: Vec<&sys::Child> = children.iter().map(|child| &***child).collect();
    match sys::wrt::process::process::wait_any(&resources, timeout_ms(timeout)) {
        Ok((index, status)) => Ok(Some((index as usize, from_wit_status(&status)))),
        Err(err) if is(&err, ErrorCode::Timeout) => Ok(None),
        Err(err) => Err(from_wit(err, || format!("cannot wait for any of {} children", resources.len()))),
    }
}

/// The WIT `command` record of `cmd` with these streams; `InvalidData` (`BAD_UTF8`) for a string
/// that is not UTF-8.
pub(crate) fn to_wit(cmd: &Command, stdin: &Stdio, stdout: &Stdio, stderr: &Stdio) -> io::Result<sys::Command> {
    let utf8 = |s: &OsStr, what: &str| {
        s.to_str().map(str::to_owned).ok_or_else(|| {
            local(ErrorCode::BadUtf8, format!("{}: {what} {:?} is not UTF-8", cmd.context("spawn"), s.display()))
        })
    };
    Ok(sys::Command {
        program: utf8(&cmd.program, "the program")?,
        args: cmd.args.iter().map(|a| utf8(a, "an argument")).collect::<io::Result<_>>()?,
        env: cmd
            .env
            .iter()
            .map(|(k, v)| Ok((utf8(k, "a variable")?, utf8(v, "a value")?)))
            .collect::<io::Result<_>>()?,
        cwd: cmd.cwd.as_deref().map(|d| utf8(d, "the directory")).transpose()?,
        stdin: wit_stdio(stdin),
        stdout: wit_stdio(stdout),
        stderr: wit_stdio(stderr),
        timeout_ms: cmd.timeout_ms(),
        output_limit: cmd.output_limit,
        pty_size: cmd.pty_size,
    })
}

/// The WIT's `stdio` of a stream. Another child's stdout is `null`: the host connects it to
/// stdin through that child's `pipe-into`, not through the record.
fn wit_stdio(stdio: &Stdio) -> sys::Stdio {
    match stdio.mode() {
        StdioMode::Null | StdioMode::ChildStdout => sys::Stdio::Null,
        StdioMode::Piped => sys::Stdio::Piped,
        StdioMode::Inherit => sys::Stdio::Inherit,
        StdioMode::Stdout => sys::Stdio::MergeWithStdout,
        StdioMode::Pty => sys::Stdio::Pty,
    }
}

/// `timeout` as the WIT's `timeout-ms`: rounded up to whole milliseconds.
pub(crate) fn timeout_ms(timeout: Option<Duration>) -> Option<u64> {
    timeout.map(|timeout| u64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX))
}

/// The status of a WIT `status` record.
pub(crate) fn from_wit_status(status: &sys::Status) -> ExitStatus {
    let (how, value) = match status.termination {
        sys::Termination::Exited(code) => (EXITED, code),
        sys::Termination::Signaled(signal) => (SIGNALED, i32::from(signal)),
    };
    let flag = |set: bool, flag: u32| if set { flag } else { 0 };
    ExitStatus::from(StatusRecord {
        how,
        value,
        flags: flag(status.timed_out, FLAG_TIMED_OUT)
            | flag(status.stdout_truncated, FLAG_STDOUT_TRUNCATED)
            | flag(status.stderr_truncated, FLAG_STDERR_TRUNCATED),
        duration_ns: status.duration_ns,
        peak_rss: status.peak_rss,
        user_ns: status.user_ns,
        system_ns: status.system_ns,
    })
}

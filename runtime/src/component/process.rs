//! `wrt:process` (the WIT package in `wit/`) for components: a thin layer over the same host
//! functions as the core ABI `wrt_v1`. A component's command record becomes the same spawn
//! request the core ABI decodes, checked by the same rules (never encoded to bytes); spawns, waits, kills and runs go through
//! the same functions, so the policy, the audit log, the limits and the messages are the same.
//! A `child` resource is a child handle of the core ABI; its streams are `wasi:io` streams over
//! the same child (see [`super::streams`]).

use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable};
use wrt_abi::ErrorCode;
use wrt_abi::request::{self, SpawnRequest, StdioMode};
use wrt_host_spawn::{ChildOutcome, ExitStatus};

use super::wit::bindings;
use super::wit::{ChildHandle, wit};
use crate::guest_state::GuestState;
use crate::process_service::{self, Failure, control, spawn, wait};

use bindings::wrt::process::process::{Command, Host, HostChild, Output, OutputSource, Status, Stdio, Termination};
use bindings::wrt::process::types::{self, Error};

/// Defines `wrt:process/process`, `buffers` and `types` in `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    types::add_to_linker::<GuestState, HasSelf<GuestState>>(linker, |state| state)?;
    bindings::wrt::process::buffers::add_to_linker::<GuestState, HasSelf<GuestState>>(linker, |state| state)?;
    bindings::wrt::process::process::add_to_linker::<GuestState, HasSelf<GuestState>>(linker, |state| state)?;
    Ok(())
}

impl GuestState {
    /// The child handle behind a `child` resource.
    fn child_handle(&mut self, child: &Resource<ChildHandle>) -> wasmtime::Result<i32> {
        Ok(self.ctx().table.get(child)?.0)
    }

    /// Makes a `child` resource of the service's answer to a spawn.
    fn child_resource(
        &mut self,
        spawned: process_service::Served<i32>,
    ) -> wasmtime::Result<Result<Resource<ChildHandle>, Error>> {
        let handle = match spawned? {
            Ok(handle) => handle,
            Err(failure) => return Ok(Err(wit(failure))),
        };
        match self.ctx().table.push(ChildHandle(handle)) {
            Ok(child) => Ok(Ok(child)),
            Err(err) => {
                let _ = control::release(&mut self.spawn, handle);
                Ok(Err(wit(Failure::new(ErrorCode::NoMemory, format!("too many resources: {err}")))))
            }
        }
    }

    /// The spawn request for `cmd`, checked by the rules the core ABI's decoder applies to a
    /// request's bytes (`request::check`: both ABIs refuse the same requests with the same
    /// codes), or its error, written to the audit log like every refused request.
    fn request_of(&mut self, cmd: &Command, stdin_child: Option<i32>) -> Result<SpawnRequest, Error> {
        let mode = |stdio: Stdio| match stdio {
            Stdio::Null => StdioMode::Null,
            Stdio::Piped => StdioMode::Piped,
            Stdio::Inherit => StdioMode::Inherit,
            Stdio::Pty => StdioMode::Pty,
            Stdio::MergeWithStdout => StdioMode::Stdout,
        };
        let stdin = if stdin_child.is_some() { StdioMode::ChildStdout } else { mode(cmd.stdin) };
        let stdio = [stdin, mode(cmd.stdout), mode(cmd.stderr)];
        let pty = stdio.contains(&StdioMode::Pty);
        let request = SpawnRequest {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            env: cmd.env.clone(),
            cwd: cmd.cwd.clone(),
            stdio,
            stdin_child: stdin_child.map(|handle| handle as u32),
            pty_size: pty.then(|| cmd.pty_size.unwrap_or((0, 0))),
            timeout_ms: cmd.timeout_ms,
            output_limit: cmd.output_limit,
        };
        match request::check(request) {
            Ok(request) => Ok(request),
            Err(code) => Err(wit(self.spawn.refuse_request(code, cmd.program.as_bytes(), "malformed command".into()))),
        }
    }
}

/// The WIT status of a child's outcome.
pub(crate) fn status_of(outcome: &ChildOutcome) -> Status {
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Status {
        termination: match outcome.status {
            ExitStatus::Exited(code) => Termination::Exited(code),
            ExitStatus::Signaled { signal, .. } => Termination::Signaled(u8::try_from(signal).unwrap_or(u8::MAX)),
        },
        timed_out: outcome.timed_out,
        stdout_truncated: outcome.truncated.stdout,
        stderr_truncated: outcome.truncated.stderr,
        duration_ns: nanos(outcome.duration),
        peak_rss: outcome.rusage.max_rss.unwrap_or(0),
        user_ns: nanos(outcome.rusage.user_time),
        system_ns: nanos(outcome.rusage.system_time),
    }
}

/// An optional timeout in milliseconds as an instant (none: no limit).
fn until(timeout_ms: Option<u64>) -> Option<Instant> {
    timeout_ms.and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)))
}

impl types::Host for GuestState {}

impl Host for GuestState {
    fn spawn(&mut self, cmd: Command) -> wasmtime::Result<Result<Resource<ChildHandle>, Error>> {
        let request = match self.request_of(&cmd, None) {
            Ok(request) => request,
            Err(err) => return Ok(Err(err)),
        };
        let spawned = spawn::spawn(&mut self.spawn, &self.stop, &request);
        self.child_resource(spawned)
    }

    fn wait_any(
        &mut self,
        children: Vec<Resource<ChildHandle>>,
        timeout_ms: Option<u64>,
    ) -> wasmtime::Result<Result<(u32, Status), Error>> {
        if children.is_empty() || children.len() > wrt_abi::consts::MAX_WAIT_ANY as usize {
            let message =
                format!("wait-any takes 1 to {} children, not {}", wrt_abi::consts::MAX_WAIT_ANY, children.len());
            return Ok(Err(wit(Failure::new(ErrorCode::InvalidArgument, message))));
        }
        let handles = children.iter().map(|child| self.child_handle(child)).collect::<wasmtime::Result<Vec<_>>>()?;
        Ok(match wait::wait_any(&mut self.spawn, &self.stop, &handles, until(timeout_ms))? {
            Ok((index, outcome)) => Ok((index as u32, status_of(&outcome))),
            Err(failure) => Err(wit(failure)),
        })
    }

    fn run(&mut self, cmd: Command, stdin: Vec<u8>, max_output: u32) -> wasmtime::Result<Result<Output, Error>> {
        let request = match self.request_of(&cmd, None) {
            Ok(request) => request,
            Err(err) => return Ok(Err(err)),
        };
        let (cap, room) = (max_output as usize, self.buffer_room());
        Ok(match spawn::run(&mut self.spawn, &self.stop, room, &request, &stdin, [cap, cap])? {
            Ok(output) => {
                Ok(Output { status: status_of(&output.outcome), stdout: output.stdout, stderr: output.stderr })
            }
            Err(failure) => Err(wit(failure)),
        })
    }
}

impl HostChild for GuestState {
    fn id(&mut self, child: Resource<ChildHandle>) -> wasmtime::Result<u32> {
        let handle = self.child_handle(&child)?;
        Ok(self.spawn.children.get(handle).map_or(0, |entry| entry.child.lock().pid()))
    }

    fn take_stdin(
        &mut self,
        child: Resource<ChildHandle>,
    ) -> wasmtime::Result<Result<Resource<DynOutputStream>, Error>> {
        let handle = self.child_handle(&child)?;
        super::streams::take_stdin(self, handle)
    }

    fn take_stdout(
        &mut self,
        child: Resource<ChildHandle>,
    ) -> wasmtime::Result<Result<Resource<DynInputStream>, Error>> {
        let handle = self.child_handle(&child)?;
        super::streams::take_output(self, handle, OutputSource::Stdout)
    }

    fn take_stderr(
        &mut self,
        child: Resource<ChildHandle>,
    ) -> wasmtime::Result<Result<Resource<DynInputStream>, Error>> {
        let handle = self.child_handle(&child)?;
        super::streams::take_output(self, handle, OutputSource::Stderr)
    }

    fn subscribe(&mut self, child: Resource<ChildHandle>) -> wasmtime::Result<Resource<DynPollable>> {
        let handle = self.child_handle(&child)?;
        super::streams::subscribe_exit(self, handle)
    }

    fn wait(
        &mut self,
        child: Resource<ChildHandle>,
        timeout_ms: Option<u64>,
    ) -> wasmtime::Result<Result<Status, Error>> {
        let handle = self.child_handle(&child)?;
        Ok(match wait::wait(&mut self.spawn, &self.stop, handle, until(timeout_ms))? {
            Ok(outcome) => Ok(status_of(&outcome)),
            Err(failure) => Err(wit(failure)),
        })
    }

    fn try_wait(&mut self, child: Resource<ChildHandle>) -> wasmtime::Result<Result<Option<Status>, Error>> {
        let handle = self.child_handle(&child)?;
        // No time to wait: a child still running is a `TIMEOUT` return, which is `none` here.
        let now = Some(Instant::now());
        Ok(match wait::wait(&mut self.spawn, &self.stop, handle, now)? {
            Ok(outcome) => Ok(Some(status_of(&outcome))),
            Err(failure) if failure.code == ErrorCode::Timeout => Ok(None),
            Err(failure) => Err(wit(failure)),
        })
    }

    fn kill(&mut self, child: Resource<ChildHandle>, signal: u8) -> wasmtime::Result<Result<(), Error>> {
        let handle = self.child_handle(&child)?;
        Ok(control::kill(&mut self.spawn, handle, i32::from(signal))?.map_err(wit))
    }

    fn pty_resize(
        &mut self,
        child: Resource<ChildHandle>,
        rows: u16,
        cols: u16,
    ) -> wasmtime::Result<Result<(), Error>> {
        let handle = self.child_handle(&child)?;
        Ok(control::pty_resize(&mut self.spawn, handle, i32::from(rows), i32::from(cols))?.map_err(wit))
    }

    fn read_buffer(
        &mut self,
        child: Resource<ChildHandle>,
        source: OutputSource,
        max_len: u32,
    ) -> wasmtime::Result<Result<Option<Resource<super::wit::BufferHandle>>, Error>> {
        let handle = self.child_handle(&child)?;
        super::buffers::read_buffer(self, handle, source, max_len)
    }

    fn write_buffer(
        &mut self,
        child: Resource<ChildHandle>,
        buf: Resource<super::wit::BufferHandle>,
        offset: u32,
    ) -> wasmtime::Result<Result<u32, Error>> {
        let handle = self.child_handle(&child)?;
        super::buffers::write_buffer(self, handle, &buf, offset)
    }

    fn pipe_into(
        &mut self,
        child: Resource<ChildHandle>,
        cmd: Command,
    ) -> wasmtime::Result<Result<Resource<ChildHandle>, Error>> {
        let handle = self.child_handle(&child)?;
        if self.spawn.children.get(handle).is_ok_and(|entry| entry.taken[1]) {
            let message = format!("the stdout of pipeline source `{handle}` was taken as a stream");
            return Ok(Err(wit(Failure::new(ErrorCode::NotPiped, message))));
        }
        let request = match self.request_of(&cmd, Some(handle)) {
            Ok(request) => request,
            Err(err) => return Ok(Err(err)),
        };
        let spawned = spawn::spawn(&mut self.spawn, &self.stop, &request);
        self.child_resource(spawned)
    }

    fn drop(&mut self, child: Resource<ChildHandle>) -> wasmtime::Result<()> {
        let handle = self.ctx().table.delete(child)?.0;
        // A handle of a live resource is always the service's: nothing to report.
        let _ = control::release(&mut self.spawn, handle)?;
        Ok(())
    }
}

#[cfg(test)]
mod deps_tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The host's target triple, as the compiler that built this test reports it.
    fn host_triple() -> String {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let out = Command::new(&rustc).arg("-vV").output().expect("run `rustc -vV`");
        assert!(out.status.success(), "`{rustc} -vV` failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let host = text.lines().find_map(|line| line.strip_prefix("host: "));
        host.expect("`rustc -vV` names the host").trim().to_owned()
    }

    /// The source directory of the wasmtime-wasi that this build compiled.
    ///
    /// `cargo metadata` is filtered to the host platform: without the filter it needs every
    /// package of the lock file, Windows-only ones included, which a Linux build never downloads,
    /// so on a fresh machine it would fail offline whatever the build itself had fetched.
    fn wasmtime_wasi_source(root: &Path) -> PathBuf {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let host = host_triple();
        let args = ["metadata", "--format-version", "1", "--offline", "--locked", "--filter-platform", &host];
        let out = Command::new(&cargo).args(args).current_dir(root).output().expect("run `cargo metadata`");
        assert!(out.status.success(), "`cargo {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
        let metadata = String::from_utf8(out.stdout).unwrap();
        let manifest = metadata
            .split("\"manifest_path\":\"")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap())
            .find(|path| {
                // `.../wasmtime-wasi-VERSION/Cargo.toml`, not `wasmtime-wasi-http` nor `-io`.
                let dir = path.strip_suffix("/Cargo.toml").and_then(|dir| dir.rsplit('/').next()).unwrap_or("");
                dir.strip_prefix("wasmtime-wasi-")
                    .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
            })
            .expect("wasmtime-wasi in the dependency graph");
        Path::new(manifest).parent().unwrap().to_owned()
    }

    /// The WASI interfaces in `wit/deps` are the ones wasmtime-wasi implements, byte for byte:
    /// guests bind to what the host links.
    #[test]
    fn wit_deps_are_the_wasi_interfaces_wasmtime_wasi_implements() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let theirs = wasmtime_wasi_source(root).join("src/p2/wit/deps");
        let ours = root.join("wit/deps");
        let mut names: Vec<_> = std::fs::read_dir(&ours).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names.len(), 6, "{names:?}");
        for name in names {
            let (a, b) = (std::fs::read(ours.join(&name)).unwrap(), std::fs::read(theirs.join(&name)).unwrap());
            if a != b {
                let (a, b) = (String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
                let line = a
                    .lines()
                    .zip(b.lines())
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.lines().count().min(b.lines().count()));
                panic!(
                    "wit/deps/{} differs from wasmtime-wasi's copy ({}) from line {}: copy theirs over ours",
                    name.to_string_lossy(),
                    theirs.join(&name).display(),
                    line + 1
                );
            }
        }
    }
}

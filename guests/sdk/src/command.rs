//! The builder of a host program to run: [`Command`].

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::child::Child;
use crate::error::check;
use crate::handle::Handle;
use crate::request::Request;
use crate::status::{ExitStatus, Output, RUN_STATUS_LEN};
use crate::stdio::Stdio;
use crate::sys;

/// How much [`Command::output`] captures per stream when no
/// [`output_limit`](Command::output_limit) is set: 16 MiB, the default policy's limit.
pub const DEFAULT_CAPTURE: u64 = 16 << 20;

/// A host program to run, with its arguments, environment, working directory, stdio, timeout
/// and output limit; shaped like [`std::process::Command`].
///
/// Defaults: no arguments; an empty environment (the child starts with only the variables the
/// policy passes through); the policy's default working directory; stdin, stdout and stderr
/// inherited from the sandbox for [`spawn`](Self::spawn) and [`status`](Self::status), stdout
/// and stderr captured for [`output`](Self::output); the policy's timeout and output limit.
///
/// Every request is checked by the host against the sandbox's spawn policy, which denies
/// everything it does not allow: the program (`wrt run --allow-run PROGRAM`), each variable
/// set with [`env`](Self::env) (the policy file's `env.allow`), the working directory (its
/// `cwd_allow`), and the arguments when the policy has patterns for them. Host variables the
/// policy passes through (`--allow-env NAME`) reach the child without the guest asking.
///
/// # Differences from `std::process::Command`
///
/// - The child's environment is not the guest's: it starts empty, and [`env_remove`](Self::env_remove)
///   and [`env_clear`](Self::env_clear) only undo [`env`](Self::env) (variables the policy
///   passes through cannot be removed by the guest).
/// - A program name is looked up on the policy's search path, never on the guest's `PATH`;
///   a path must be absolute, and a [`current_dir`](Self::current_dir) too (the guest's own
///   working directory means nothing to the host).
/// - Strings are sent as they are; the host refuses any that is not UTF-8 (`BAD_UTF8`) or
///   contains a NUL byte (`INVALID_ARGUMENT`).
/// - [`timeout`](Self::timeout) and [`output_limit`](Self::output_limit) have no `std`
///   equivalent; the policy may lower both.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use wrt_guest::Command;
///
/// let output = Command::new("ls").arg("-l").arg("/").timeout(Duration::from_secs(5)).output()?;
/// assert!(output.status.success());
/// println!("{}", String::from_utf8_lossy(&output.stdout));
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Ambient authority
///
/// The program runs on the host, outside the sandbox, with the authority of the user running
/// `wrt`, limited only by what the sandbox's policy allows.
#[derive(Debug, Clone)]
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: Option<OsString>,
    stdin: Option<Stdio>,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
    timeout: Option<Duration>,
    output_limit: u64,
    /// Rows and columns of a pseudo-terminal; 0 × 0 for the host's default (24 × 80).
    pty_size: (u16, u16),
}

impl Command {
    /// A command for `program`: a name looked up on the policy's search path, or an absolute
    /// path, with the defaults listed on [`Command`].
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            stdin: None,
            stdout: None,
            stderr: None,
            timeout: None,
            output_limit: 0,
            pty_size: (0, 0),
        }
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets a variable in the child's environment (the policy must allow its name).
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.env.insert(key.as_ref().to_owned(), value.as_ref().to_owned());
        self
    }

    /// Sets variables in the child's environment.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self.env(key, value);
        }
        self
    }

    /// Removes a variable set with [`env`](Self::env).
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.env.remove(key.as_ref());
        self
    }

    /// Removes every variable set with [`env`](Self::env).
    pub fn env_clear(&mut self) -> &mut Self {
        self.env.clear();
        self
    }

    /// Sets the child's working directory: an absolute host path the policy allows.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cwd = Some(dir.as_ref().as_os_str().to_owned());
        self
    }

    /// Sets the child's stdin.
    pub fn stdin(&mut self, stdio: Stdio) -> &mut Self {
        self.stdin = Some(stdio);
        self
    }

    /// Sets the child's stdout.
    pub fn stdout(&mut self, stdio: Stdio) -> &mut Self {
        self.stdout = Some(stdio);
        self
    }

    /// Sets the child's stderr.
    pub fn stderr(&mut self, stdio: Stdio) -> &mut Self {
        self.stderr = Some(stdio);
        self
    }

    /// Sets a timeout: the host stops the child (`SIGTERM` to its process group, then `SIGKILL`
    /// after the policy's grace period) once it has run this long, and its status says
    /// [`timed_out`](ExitStatus::timed_out). Rounded up to whole milliseconds, at least 1 ms.
    /// The policy's timeout still applies when it is shorter.
    pub fn timeout(&mut self, timeout: Duration) -> &mut Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the most bytes kept from each of stdout and stderr; the rest is dropped and the
    /// status says truncated. `0` means the policy's limit, which also applies when it is
    /// lower. For [`output`](Self::output) it is also the size of the capture buffers.
    pub fn output_limit(&mut self, bytes: u64) -> &mut Self {
        self.output_limit = bytes;
        self
    }

    /// Sets the initial size of the pseudo-terminal, when a stream is [`Stdio::pty`] (default
    /// 24 rows and 80 columns); [`Child::pty_resize`] changes it later.
    pub fn pty_size(&mut self, rows: u16, cols: u16) -> &mut Self {
        self.pty_size = (rows, cols);
        self
    }

    /// Starts the program, with stdin, stdout and stderr inherited from the sandbox unless set.
    ///
    /// # Errors
    ///
    /// `PermissionDenied` (code [`Denied`](crate::ErrorCode::Denied)) if the policy refuses the
    /// request, with the host's message naming the rule and the flag that would allow it;
    /// `NotFound`, `PermissionDenied` ([`NotExecutable`](crate::ErrorCode::NotExecutable)),
    /// `ResourceBusy` (too many children), `InvalidInput`, `InvalidData` (not UTF-8) and
    /// `Other` (the host failed to start it) as the host reports them.
    pub fn spawn(&mut self) -> io::Result<Child> {
        let inherit = || Some(Stdio::inherit());
        self.spawn_with(
            self.stdin.clone().or_else(inherit),
            self.stdout.clone().or_else(inherit),
            self.stderr.clone().or_else(inherit),
        )
    }

    /// Runs the program to its end and returns its status, with stdin, stdout and stderr
    /// inherited from the sandbox unless set (a piped stream is not read).
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn).
    pub fn status(&mut self) -> io::Result<ExitStatus> {
        self.spawn()?.wait()
    }

    /// Runs the program to its end, capturing stdout and stderr, with stdin at end of file.
    ///
    /// With stdout and stderr unset or piped, and stdin not inherited, this is one host call
    /// (`run`), which captures into two buffers of [`output_limit`](Self::output_limit) bytes
    /// each, or [`DEFAULT_CAPTURE`] (16 MiB) without one: more output is dropped and flagged as
    /// truncated even if the policy's limit is higher, so set a limit to capture more. The
    /// buffers grow linear memory but their unused pages are never touched. Otherwise the
    /// program is spawned with the given streams and read as [`Child::wait_with_output`] does.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn); `OutOfMemory` if the capture buffers cannot be allocated.
    pub fn output(&mut self) -> io::Result<Output> {
        self.output_impl(None)
    }

    /// Like [`output`](Self::output), with `input` written to the child's stdin (which is
    /// always piped) while its output is captured.
    ///
    /// # Errors
    ///
    /// As [`output`](Self::output).
    pub fn output_with_input(&mut self, input: &[u8]) -> io::Result<Output> {
        self.output_impl(Some(input))
    }

    fn output_impl(&mut self, input: Option<&[u8]>) -> io::Result<Output> {
        let captured = |stdio: &Option<Stdio>| stdio.as_ref().is_none_or(|s| s.is_piped() && !s.is_pty());
        // `run` pipes stdin from the guest: a stdin from another child needs `spawn`.
        let stdin_ok = input.is_some()
            || self.stdin.as_ref().is_none_or(|s| !s.is_inherit() && !s.is_pty() && s.source().is_none());
        if captured(&self.stdout) && captured(&self.stderr) && stdin_ok {
            return self.run(input.unwrap_or_default());
        }
        let stdin = match input {
            Some(_) => Stdio::piped(),
            None => self.stdin.clone().unwrap_or_else(Stdio::null),
        };
        let piped = || Some(Stdio::piped());
        let child =
            self.spawn_with(Some(stdin), self.stdout.clone().or_else(piped), self.stderr.clone().or_else(piped))?;
        child.communicate(input.unwrap_or_default())
    }

    /// Spawns with the given streams (all `Some`: the callers fill in their defaults).
    fn spawn_with(&self, stdin: Option<Stdio>, stdout: Option<Stdio>, stderr: Option<Stdio>) -> io::Result<Child> {
        let [stdin, stdout, stderr] = [stdin, stdout, stderr].map(|s| s.unwrap_or_else(Stdio::null));
        // A terminal on both stdout and stderr is read once, as stdout.
        let stderr_read = stderr.is_piped() && !(stderr.is_pty() && stdout.is_pty());
        let piped = [stdin.is_piped(), stdout.is_piped(), stderr_read];
        let request = self.request(stdin, stdout, stderr).encode()?;
        let handle = check(sys::spawn(&request), || format!("cannot spawn `{}`", self.program.display()))?;
        Ok(Child::new(Handle::new(handle as i32), piped[0], piped[1], piped[2]))
    }

    /// The one-shot host call: every stream piped, stdin written from `input`.
    fn run(&self, input: &[u8]) -> io::Result<Output> {
        let request = self.request(Stdio::piped(), Stdio::piped(), Stdio::piped()).encode()?;
        let capacity = if self.output_limit == 0 { DEFAULT_CAPTURE } else { self.output_limit };
        let capacity = usize::try_from(capacity.min(u64::from(u32::MAX))).unwrap_or(usize::MAX);
        let buffer = || {
            let mut buffer = Vec::new();
            buffer.try_reserve_exact(capacity).map(|()| buffer).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!(
                        "cannot allocate {capacity} bytes to capture the output of `{}` (lower its output_limit)",
                        self.program.display()
                    ),
                )
            })
        };
        let (mut stdout, mut stderr) = (buffer()?, buffer()?);
        let mut status = [0; RUN_STATUS_LEN];
        let ret = sys::run(&request, input, &mut stdout, &mut stderr, &mut status);
        check(ret, || format!("cannot run `{}`", self.program.display()))?;
        stdout.shrink_to_fit();
        stderr.shrink_to_fit();
        Ok(Output { status: crate::status::from_record(&status), stdout, stderr })
    }

    fn request(&self, stdin: Stdio, stdout: Stdio, stderr: Stdio) -> Request<'_> {
        Request {
            program: &self.program,
            args: self.args.iter().map(OsString::as_os_str).collect(),
            env: self.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())).collect(),
            cwd: self.cwd.as_deref().unwrap_or_default(),
            stdin,
            stdout,
            stderr,
            timeout_ms: self.timeout.map_or(0, millis_at_least_one),
            output_limit: self.output_limit,
            pty_size: self.pty_size,
        }
    }
}

/// `timeout` in milliseconds for a request: rounded up, at least 1 (0 means the policy's).
fn millis_at_least_one(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_reflects_the_builder() {
        let mut cmd = Command::new("env");
        cmd.arg("-0").args(["a", "b"]).env("B", "2").envs([("A", "1"), ("C", "3")]).env_remove("C");
        cmd.current_dir("/tmp").timeout(Duration::from_micros(1500)).output_limit(4096);
        let request = cmd.request(Stdio::piped(), Stdio::null(), Stdio::inherit());
        assert_eq!(request.program, "env");
        assert_eq!(request.args, ["-0", "a", "b"]);
        assert_eq!(request.env, [(OsStr::new("A"), OsStr::new("1")), (OsStr::new("B"), OsStr::new("2"))]);
        assert_eq!(request.cwd, "/tmp");
        assert_eq!((request.stdin.raw(), request.stdout.raw(), request.stderr.raw()), (1, 0, 2));
        assert_eq!((request.timeout_ms, request.output_limit), (2, 4096));

        cmd.env("A", "replaced").env_clear().env("D", "4");
        assert_eq!(cmd.request(Stdio::null(), Stdio::null(), Stdio::null()).env, [(OsStr::new("D"), OsStr::new("4"))]);
    }

    #[test]
    fn defaults_are_the_policy_s() {
        let cmd = Command::new("true");
        let request = cmd.request(Stdio::null(), Stdio::null(), Stdio::null());
        assert!(request.args.is_empty() && request.env.is_empty());
        assert_eq!(request.cwd, "");
        assert_eq!((request.timeout_ms, request.output_limit), (0, 0));
    }

    #[test]
    fn timeouts_round_up_to_a_millisecond() {
        assert_eq!(millis_at_least_one(Duration::ZERO), 1);
        assert_eq!(millis_at_least_one(Duration::from_nanos(1)), 1);
        assert_eq!(millis_at_least_one(Duration::from_millis(250)), 250);
        assert_eq!(millis_at_least_one(Duration::from_secs(u64::MAX)), u64::MAX);
    }
}

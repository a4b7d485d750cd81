//! The description of one program to run: [`Command`] and its [`Stdio`] settings.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::limits::Rlimits;

/// What to connect one of the child's standard streams to.
#[derive(Debug, Default)]
#[non_exhaustive]
pub enum Stdio {
    /// A new pipe; the [`Child`](crate::Child) holds the other end.
    #[default]
    Piped,
    /// The host's own descriptor (0, 1 or 2).
    ///
    /// # Ambient authority
    ///
    /// The child reads or writes the host's terminal or files directly.
    Inherit,
    /// `/dev/null`.
    Null,
    /// An open file (or any descriptor); the child gets a copy.
    ///
    /// # Ambient authority
    ///
    /// None by itself: opening the file is the caller's act, for example through a
    /// guest's preopened directory with cap-std.
    File(OwnedFd),
    /// Stderr only: the same as the child's stdout (`2>&1`), whatever stdout is connected to.
    /// Output the child writes to either stream then arrives in order on one pipe (or file),
    /// and [`Child`](crate::Child) has no stderr to read. For stdin or stdout the request is
    /// invalid ([`InvalidRequest::MergeNotStderr`](crate::InvalidRequest::MergeNotStderr)).
    MergeWithStdout,
    /// A pseudo-terminal. Every stream set to `Pty` is the same terminal's slave; the child
    /// starts a new session (its own process group, whose id is its pid) with that terminal
    /// as its controlling terminal. The [`Child`](crate::Child) holds the master: its stdout
    /// (or, when only stderr is `Pty`, its stderr) reads what the child writes to the
    /// terminal, its stdin (when stdin is `Pty`) writes what the child reads, and
    /// [`Child::pty_resize`](crate::Child::pty_resize) sets the window size. The size starts
    /// as [`Command::pty_size`] says (24 × 80 by default).
    ///
    /// A terminal is not a pipe: the terminal driver echoes input and translates line endings
    /// (`\n` written by the child reads as `\r\n`), closing stdin does not end the child's
    /// input (write the `VEOF` character, `\x04`), and output ends when every process holding
    /// the slave has exited.
    Pty,
}

impl Stdio {
    /// The stdout pipe of another child, taken with
    /// [`Child::take_stdout`](crate::Child::take_stdout): the two children are connected
    /// by that pipe directly (a pipeline, `a | b`); no byte passes through the host.
    ///
    /// The same as `Stdio::from(stdout)`.
    pub fn from_child(stdout: ChildStdout) -> Self {
        Self::from(stdout)
    }
}

/// The read end of a child's stdout pipe, taken from the [`Child`](crate::Child) with
/// [`Child::take_stdout`](crate::Child::take_stdout) to become another child's stdin
/// ([`Stdio::from`]), like std's `ChildStdout`.
///
/// Once taken, the host no longer reads the pipe: the child's output limit does not apply to
/// it and its outcome counts no stdout bytes from then on. The descriptor is blocking (as a
/// child expects its stdin) and close-on-exec.
#[derive(Debug)]
pub struct ChildStdout(pub(crate) OwnedFd);

impl From<ChildStdout> for Stdio {
    fn from(stdout: ChildStdout) -> Self {
        Self::File(stdout.0)
    }
}

impl From<ChildStdout> for OwnedFd {
    fn from(stdout: ChildStdout) -> Self {
        stdout.0
    }
}

impl AsFd for ChildStdout {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl From<OwnedFd> for Stdio {
    fn from(fd: OwnedFd) -> Self {
        Self::File(fd)
    }
}

impl From<File> for Stdio {
    fn from(file: File) -> Self {
        Self::File(file.into())
    }
}

/// One of a child's standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Standard input.
    Stdin,
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    pub(crate) fn index(self) -> usize {
        match self {
            Self::Stdin => 0,
            Self::Stdout => 1,
            Self::Stderr => 2,
        }
    }
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Stdin => "stdin",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        })
    }
}

/// A request to run a host program, checked against the [`Policy`](crate::Policy) by
/// [`Spawner::spawn`](crate::Spawner::spawn).
///
/// Treat every field as hostile: a guest may have written it. The spawner validates the
/// request (NUL bytes, empty program) before any system call, resolves the program with the
/// policy's search path, and applies the policy's limits; a request can only lower the
/// policy's timeout, output limit and resource limits.
///
/// Defaults: no arguments, an empty environment, the policy's default working directory,
/// stdin from `/dev/null`, stdout and stderr piped, and the policy's timeout, output limit
/// and resource limits.
///
/// `argv[0]` is the program exactly as given here (a bare name or an absolute path); the
/// spawner executes the canonical path it resolved to.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use wrt_host_spawn::{Command, Stdio};
///
/// let mut cmd = Command::new("grep");
/// cmd.args(["-c", "needle"])
///     .env("LC_ALL", "C")
///     .stdin(Stdio::Piped)
///     .timeout(Duration::from_secs(5))
///     .output_limit(1 << 20);
/// assert_eq!(cmd.get_args().len(), 2);
/// ```
#[derive(Debug)]
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    stdio: [Stdio; 3],
    timeout: Option<Duration>,
    output_limit: Option<u64>,
    kill_grace: Option<Duration>,
    rlimits: Rlimits,
    pty_size: (u16, u16),
}

impl Command {
    /// A request to run `program`: a bare name (looked up on the policy's search path, never
    /// the host's or the guest's `PATH`) or an absolute path.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stdio: [Stdio::Null, Stdio::Piped, Stdio::Piped],
            timeout: None,
            output_limit: None,
            kill_grace: None,
            rlimits: Rlimits::none(),
            pty_size: (24, 80),
        }
    }

    /// Appends one argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable. The child's environment starts empty; the policy must
    /// list `key` in its `env.allow` list. A later value for the same key wins.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets several environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    /// Sets the working directory: an absolute path inside one of the policy's allowed
    /// directories.
    pub fn cwd(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Sets stdin (default [`Stdio::Null`]).
    pub fn stdin(&mut self, stdio: impl Into<Stdio>) -> &mut Self {
        self.stdio[0] = stdio.into();
        self
    }

    /// Sets stdout (default [`Stdio::Piped`]).
    pub fn stdout(&mut self, stdio: impl Into<Stdio>) -> &mut Self {
        self.stdio[1] = stdio.into();
        self
    }

    /// Sets stderr (default [`Stdio::Piped`]; [`Stdio::MergeWithStdout`] for `2>&1`).
    pub fn stderr(&mut self, stdio: impl Into<Stdio>) -> &mut Self {
        self.stdio[2] = stdio.into();
        self
    }

    /// Sets the timeout, counted from the spawn. It can only shorten the policy's.
    pub fn timeout(&mut self, timeout: Duration) -> &mut Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the limit in bytes for each of stdout and stderr when piped. It can only lower
    /// the policy's.
    pub fn output_limit(&mut self, bytes: u64) -> &mut Self {
        self.output_limit = Some(bytes);
        self
    }

    /// Sets the time between `SIGTERM` and `SIGKILL` when the timeout passes. It can only
    /// shorten the policy's `kill_grace` (zero: `SIGKILL` at once).
    pub fn kill_grace(&mut self, grace: Duration) -> &mut Self {
        self.kill_grace = Some(grace);
        self
    }

    /// Sets resource limits. They can only lower the policy's.
    pub fn rlimits(&mut self, rlimits: Rlimits) -> &mut Self {
        self.rlimits = rlimits;
        self
    }

    /// Sets the initial window size of the pseudo-terminal, if a stream is [`Stdio::Pty`]
    /// (default 24 rows, 80 columns).
    pub fn pty_size(&mut self, rows: u16, cols: u16) -> &mut Self {
        self.pty_size = (rows, cols);
        self
    }

    /// The initial pseudo-terminal size: rows, columns.
    pub fn get_pty_size(&self) -> (u16, u16) {
        self.pty_size
    }

    /// The program as given.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments, without the program.
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// The environment variables the request sets, in order.
    pub fn get_envs(&self) -> &[(OsString, OsString)] {
        &self.env
    }

    /// The requested working directory.
    pub fn get_cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The requested timeout.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The requested output limit.
    pub fn get_output_limit(&self) -> Option<u64> {
        self.output_limit
    }

    /// The requested kill grace.
    pub fn get_kill_grace(&self) -> Option<Duration> {
        self.kill_grace
    }

    /// The requested resource limits.
    pub fn get_rlimits(&self) -> Rlimits {
        self.rlimits
    }

    pub(crate) fn get_stdio(&self, stream: Stream) -> &Stdio {
        &self.stdio[stream.index()]
    }
}

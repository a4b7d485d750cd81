//! One error type per public operation; every variant names its subject.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::Signal;

use crate::command::Stream;
use crate::strategy::{Strategy, Unsupported};

pub(crate) use crate::escape::Shown;

fn shown(path: &Path) -> Shown<'_> {
    Shown(path.as_os_str())
}

/// Why [`Spawner::spawn`](crate::Spawner::spawn) did not start a program.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The request is malformed; it was rejected before any system call.
    #[error("invalid request to spawn `{}`", shown(.program))]
    InvalidRequest {
        /// The program as requested.
        program: PathBuf,
        /// What is wrong with it.
        #[source]
        reason: InvalidRequest,
    },
    /// The policy forbids the request.
    #[error("spawning `{}` is denied: {reason}", shown(.program))]
    Denied {
        /// The program as requested.
        program: PathBuf,
        /// The canonical path it resolved to, if it resolved.
        path: Option<PathBuf>,
        /// The rule or check that denied it.
        reason: Denial,
    },
    /// A bare name is on none of the policy's search directories, or a path does not exist.
    #[error("program `{}` not found", shown(.program))]
    NotFound {
        /// The program as requested.
        program: PathBuf,
    },
    /// The program exists but is not an executable regular file.
    #[error("`{}` (for `{}`) is not executable", shown(.path), shown(.program))]
    NotExecutable {
        /// The program as requested.
        program: PathBuf,
        /// The file it resolved to.
        path: PathBuf,
    },
    /// The spawner already has the policy's maximum number of children: processes that are
    /// still running, or (never more than `limit` in all) spawns in progress on other threads.
    /// Children that exited are not counted, whether or not anyone has waited for them.
    #[error("cannot spawn `{}`: {running} children are running, the limit is {limit}", shown(.program))]
    TooManyChildren {
        /// The program as requested.
        program: PathBuf,
        /// The policy's `max_children`.
        limit: usize,
        /// The children running (or being spawned) when the request came.
        running: usize,
    },
    /// Starting the program would leave fewer than
    /// [`RESERVED_FDS`](crate::RESERVED_FDS) file descriptors free under the soft
    /// `RLIMIT_NOFILE`; nothing was started.
    #[error(
        "cannot spawn `{}`: it needs {needed} file descriptors, {open} of the limit of {limit} are open and \
         {reserved} stay free for the host",
        shown(.program),
        reserved = crate::RESERVED_FDS
    )]
    TooManyDescriptors {
        /// The program as requested.
        program: PathBuf,
        /// Descriptors open in the process.
        open: u64,
        /// Descriptors the spawn needs.
        needed: u64,
        /// The soft `RLIMIT_NOFILE`.
        limit: u64,
    },
    /// Strict mode is on and the chosen strategy cannot express the request.
    #[error("{strategy} cannot spawn `{}`: {reason}", shown(.program))]
    StrategyUnavailable {
        /// The canonical path of the program.
        program: PathBuf,
        /// The strategy that was asked for.
        strategy: Strategy,
        /// What it cannot do.
        reason: Unsupported,
    },
    /// The operating system refused to start the program.
    #[error("failed to spawn `{}` ({strategy}, step `{step}`)", shown(.program))]
    Spawn {
        /// The canonical path of the program.
        program: PathBuf,
        /// The strategy that ran.
        strategy: Strategy,
        /// Where it failed.
        step: SpawnStep,
        /// The error number.
        #[source]
        source: Errno,
    },
    /// Creating a pipe or opening `/dev/null` for the child's stdio failed.
    #[error("failed to set up {stream} for `{}`", shown(.program))]
    Stdio {
        /// The canonical path of the program.
        program: PathBuf,
        /// The stream being set up.
        stream: Stream,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The audit record of the decision could not be written; nothing was left running.
    #[error("failed to write the audit record for `{}`", shown(.program))]
    Audit {
        /// The program as requested.
        program: PathBuf,
        /// The write error.
        #[source]
        source: io::Error,
    },
}

/// A malformed spawn request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidRequest {
    /// The program is the empty string.
    #[error("the program is empty")]
    EmptyProgram,
    /// The program contains a NUL byte.
    #[error("the program contains a NUL byte")]
    NulInProgram,
    /// An argument contains a NUL byte.
    #[error("argument {index} contains a NUL byte")]
    NulInArg {
        /// Index in the argument list (0 is the first argument after the program).
        index: usize,
    },
    /// An environment variable name is empty, or contains `=` or a NUL byte.
    #[error("environment variable name `{}` is invalid", Shown::new(.name))]
    InvalidEnvName {
        /// The name, lossily decoded.
        name: String,
    },
    /// An environment variable value contains a NUL byte.
    #[error("the value of environment variable `{}` contains a NUL byte", Shown::new(.name))]
    NulInEnvValue {
        /// The variable's name, lossily decoded.
        name: String,
    },
    /// The working directory contains a NUL byte.
    #[error("the working directory contains a NUL byte")]
    NulInCwd,
}

/// The policy rule or check that denied a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Denial {
    /// The program path is relative; only bare names and absolute paths are accepted.
    #[error("relative program paths are not allowed")]
    RelativeProgram,
    /// A deny rule matches the resolved program (deny rules win over allow rules).
    #[error("`{}` matches deny rule `{}`", shown(.path), shown(.rule))]
    DenyRule {
        /// The program as the request named it (never what it resolved to, which would let a
        /// guest probe the host's files through symlinks).
        path: PathBuf,
        /// The deny rule as written in the policy.
        rule: PathBuf,
    },
    /// No allow rule names the resolved program.
    #[error("no allow rule names `{}`", shown(.path))]
    NotAllowed {
        /// The canonical path of the program.
        path: PathBuf,
    },
    /// The arguments match none of the argument patterns of the program's allow rule.
    #[error("the arguments match none of the patterns of allow rule `{}`", shown(.rule))]
    Args {
        /// The allow rule as written in the policy.
        rule: PathBuf,
    },
    /// The request sets an environment variable the policy does not list in `env.allow`.
    #[error("environment variable `{}` is not allowed", Shown::new(.name))]
    Env {
        /// The variable's name, lossily decoded.
        name: String,
    },
    /// The request sets an `LD_*`/`DYLD_*` variable the policy does not allow, or one of
    /// glibc's unsafe variables (`GCONV_PATH`, `TMPDIR`, …), which no policy allows.
    #[error("environment variable `{}` changes what the program loads and is refused", Shown::new(.name))]
    LoaderEnv {
        /// The variable's name, lossily decoded.
        name: String,
    },
    /// The program's contents do not match the SHA-256 its allow rule pins.
    #[error("the program does not have the SHA-256 that allow rule `{}` pins (its SHA-256 is {actual})", shown(.rule))]
    Sha256 {
        /// The allow rule as written.
        rule: PathBuf,
        /// The digest of the file that was opened, in hexadecimal.
        actual: String,
    },
    /// The working directory is relative, missing, or outside every allowed directory.
    #[error("working directory `{}` is not allowed", shown(.cwd))]
    Cwd {
        /// The directory as requested.
        cwd: PathBuf,
    },
}

/// The step of starting a child that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpawnStep {
    /// Preparing attributes, file actions or the error pipe in the parent.
    Setup,
    /// `posix_spawn` itself: the failing step in the child is not reported separately.
    Spawn,
    /// `fork`.
    Fork,
    /// `setpgid` in the child.
    ProcessGroup,
    /// Resetting signal dispositions or the mask in the child.
    Signals,
    /// `setrlimit` in the child.
    Rlimit,
    /// Installing stdin, stdout or stderr.
    Stdio,
    /// Changing to the working directory.
    Chdir,
    /// Closing inherited descriptors.
    CloseFds,
    /// `execve`.
    Exec,
}

impl SpawnStep {
    const ALL: [SpawnStep; 10] = [
        Self::Setup,
        Self::Spawn,
        Self::Fork,
        Self::ProcessGroup,
        Self::Signals,
        Self::Rlimit,
        Self::Stdio,
        Self::Chdir,
        Self::CloseFds,
        Self::Exec,
    ];

    pub(crate) fn code(self) -> u32 {
        Self::ALL.iter().position(|&s| s == self).map_or(0, |i| i as u32)
    }

    pub(crate) fn from_code(code: u32) -> Self {
        usize::try_from(code).ok().and_then(|i| Self::ALL.get(i)).copied().unwrap_or(Self::Exec)
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Setup => "setup",
            Self::Spawn => "posix_spawn",
            Self::Fork => "fork",
            Self::ProcessGroup => "setpgid",
            Self::Signals => "signals",
            Self::Rlimit => "setrlimit",
            Self::Stdio => "stdio",
            Self::Chdir => "chdir",
            Self::CloseFds => "close fds",
            Self::Exec => "execve",
        }
    }
}

impl fmt::Display for SpawnStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why reading a child's stdout or stderr failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The stream was not configured as [`Stdio::Piped`](crate::Stdio::Piped).
    #[error("{stream} of process {pid} is not piped")]
    NotPiped {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
    },
    /// The child wrote more than the stream's output limit; the stream is closed and the
    /// rest of the output is lost.
    #[error("{stream} of process {pid} passed its limit of {limit} bytes")]
    OutputLimit {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
        /// The limit in bytes.
        limit: u64,
    },
    /// The child's timeout passed while waiting for output; the child was terminated.
    #[error("process {pid} timed out after {timeout:?}")]
    TimedOut {
        /// The child's pid.
        pid: u32,
        /// The child's timeout.
        timeout: Duration,
    },
    /// The read failed.
    #[error("failed to read {stream} of process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The stream.
        stream: Stream,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why writing to a child's stdin failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Stdin was not piped, or has been closed.
    #[error("stdin of process {pid} is not an open pipe")]
    NotPiped {
        /// The child's pid.
        pid: u32,
    },
    /// The child's timeout passed while waiting for the pipe; the child was terminated.
    #[error("process {pid} timed out after {timeout:?}")]
    TimedOut {
        /// The child's pid.
        pid: u32,
        /// The child's timeout.
        timeout: Duration,
    },
    /// The write failed; [`io::ErrorKind::BrokenPipe`] when the child closed its stdin.
    #[error("failed to write stdin of process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why waiting for a child failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// `waitid`, `wait4`, `poll` or `kill` failed.
    #[error("failed to wait for process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why [`Child::poll`](crate::Child::poll) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PollError {
    /// `poll`, `waitid` or `kill` failed.
    #[error("failed to poll process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Why signalling a child failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KillError {
    /// `kill(-pgid, signal)` failed (for example `EPERM` after a set-user-ID `execve`).
    #[error("failed to send {signal} to process group {pgid}")]
    Signal {
        /// The child's process group.
        pgid: u32,
        /// The signal.
        signal: Signal,
        /// The error number.
        #[source]
        source: Errno,
    },
}

/// Why [`Child::communicate`](crate::Child::communicate) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommunicateError {
    /// Polling, reading or writing a pipe failed.
    #[error("failed to exchange data with process {pid}")]
    Io {
        /// The child's pid.
        pid: u32,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Waiting for the child failed.
    #[error(transparent)]
    Wait(#[from] WaitError),
}

/// Why [`Spawner::output`](crate::Spawner::output) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The program was not started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// It was started, but talking to it failed; it has been killed and reaped.
    #[error(transparent)]
    Communicate(#[from] CommunicateError),
}

/// Why a [`Policy`](crate::Policy) cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A search directory is not absolute.
    #[error("search directory `{}` is not absolute", .dir.display())]
    RelativeSearchDir {
        /// The directory as written.
        dir: PathBuf,
    },
    /// An allow rule names a program that is not found.
    #[error("allow rule {}: program `{}` not found", .index + 1, .program.display())]
    ProgramNotFound {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// An allow rule names a relative path.
    #[error("allow rule {}: program `{}` must be a bare name or an absolute path", .index + 1, .program.display())]
    RelativeProgram {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// An allow rule names a file that is not executable.
    #[error("allow rule {}: `{}` is not executable", .index + 1, .program.display())]
    NotExecutable {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// Two allow rules resolve to the same program.
    #[error("allow rule {}: `{}` already has allow rule {}", .index + 1, .path.display(), .first + 1)]
    DuplicateRule {
        /// Index of the second rule.
        index: usize,
        /// Index of the first rule.
        first: usize,
        /// The canonical path both resolve to.
        path: PathBuf,
    },
    /// An argument pattern is malformed.
    #[error("allow rule {}: argument pattern {}: {reason}", .index + 1, .pattern + 1)]
    BadPattern {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// Index of the pattern list.
        pattern: usize,
        /// What is wrong.
        reason: String,
    },
    /// An `LD_*`/`DYLD_*` name is listed but `allow_ld_env` is off.
    #[error(
        "environment variable `{name}` is a dynamic-loader variable; only a policy with `allow_ld_env = true` may list it"
    )]
    LoaderEnv {
        /// The name.
        name: String,
    },
    /// One of glibc's unsafe variables (`GCONV_PATH`, `TMPDIR`, …) is listed: never allowed.
    #[error("environment variable `{name}` changes what programs load or read and is never passed to a child")]
    UnsafeEnv {
        /// The name.
        name: String,
    },
    /// A timeout of zero, which would kill every child at once (write `"none"` for no
    /// timeout).
    #[error("{}: `timeout` must be more than 0 (write \"none\" for no timeout)", rule_name(*.index))]
    ZeroTimeout {
        /// The allow rule (0-based), or `None` for the policy's default.
        index: Option<usize>,
    },
    /// `args = []`: a rule that accepts no argument list at all.
    #[error(
        "allow rule {}: `args = []` accepts no call at all; write `[[]]` for \"no arguments\" or leave `args` out",
        .index + 1
    )]
    EmptyArgs {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
    },
    /// A deny rule is a relative path.
    #[error("deny rule {}: `{}` must be a bare name or an absolute path", .index + 1, .program.display())]
    RelativeDeny {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// A deny rule names nothing that exists, so it could never match.
    #[error("deny rule {}: `{}` is not found, so it would never match", .index + 1, .program.display())]
    DenyNotFound {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// A deny rule names a file that is not an executable, so it could never match.
    #[error("deny rule {}: `{}` is not executable, so it would never match", .index + 1, .program.display())]
    DenyNotExecutable {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// `default_cwd` or a `cwd_allow` entry is relative.
    #[error("working directory `{}` must be an absolute path", .dir.display())]
    RelativeCwd {
        /// The directory as written.
        dir: PathBuf,
    },
    /// An environment variable name is empty or contains `=` or NUL.
    #[error("environment variable name `{name}` is invalid")]
    BadEnvName {
        /// The name, lossily decoded.
        name: String,
    },
    /// An allowed or default working directory cannot be canonicalised.
    #[error("working directory `{}` cannot be used", .dir.display())]
    Cwd {
        /// The directory as written.
        dir: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// An allow rule pins a SHA-256 that its program does not have, or its program cannot be
    /// hashed, or is a `#!` script (which cannot be pinned).
    #[error("allow rule {index}: `{}` {reason}", .program.display())]
    Sha256 {
        /// Index of the rule.
        index: usize,
        /// The program as written.
        program: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `max_children` is zero.
    #[error("`max_children` must be at least 1")]
    ZeroMaxChildren,
}

fn unknown_keys(keys: &[(String, usize)]) -> String {
    let list: Vec<String> = keys.iter().map(|(key, line)| format!("`{key}` at line {line}")).collect();
    let noun = if keys.len() == 1 { "unknown key" } else { "unknown keys" };
    format!("{noun}: {}", list.join(", "))
}

fn rule_name(index: Option<usize>) -> String {
    index.map_or_else(|| "policy".to_owned(), |i| format!("allow rule {}", i + 1))
}

/// Why a policy file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyFileError {
    /// The file could not be read.
    #[error("failed to read policy file `{}`", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid TOML, has an unknown key, or a value of the wrong shape.
    /// The message includes the line and column.
    #[error("invalid policy file `{}`", .path.display())]
    Parse {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// The parser's error, with the line and column.
        #[source]
        source: toml::de::Error,
    },
    /// The file has keys the format does not know (every one is listed, with its line).
    #[error("invalid policy file `{}`: {}", .path.display(), unknown_keys(.keys))]
    UnknownKeys {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// Each unknown key as a dotted path (`allow[2].flags`, 1-based) and its 1-based line.
        keys: Vec<(String, usize)>,
    },
    /// The file parses but describes an unusable policy.
    #[error("invalid policy file `{}` at line {line}", .path.display())]
    Invalid {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// The 1-based line of the offending value.
        line: usize,
        /// What is wrong.
        #[source]
        source: PolicyError,
    },
}

/// `err` and its sources, joined with `: `: one line with everything each layer knows, for a
/// message that goes where `{:#}` formatting is not available (an audit record, a guest's
/// `last_error`).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        let err = SpawnError::NotFound { program: PathBuf::from("a\0b\nc") };
        assert_eq!(err.to_string(), "program `a\\0b\\nc` not found");
    }

    #[test]
    fn issue_10_denials_escape_and_cap_guest_strings() {
        let hostile = PathBuf::from(format!("/tmp/x\n\u{1b}[2J\u{202e}{}", "y".repeat(10_000)));
        let reasons = [
            Denial::NotAllowed { path: hostile.clone() },
            Denial::DenyRule { path: hostile.clone(), rule: PathBuf::from("rule") },
            Denial::Cwd { cwd: hostile.clone() },
            Denial::Env { name: hostile.display().to_string() },
            Denial::LoaderEnv { name: hostile.display().to_string() },
        ];
        for reason in reasons {
            let err = SpawnError::Denied { program: hostile.clone(), path: Some(hostile.clone()), reason };
            let message = error_chain(&err);
            assert!(!message.contains(['\n', '\u{1b}', '\u{202e}']), "{message:?}");
            assert!(message.contains(r"/tmp/x\n\u{1b}[2J\u{202e}y"), "{message}");
            assert!(message.contains("…(10014 bytes)"), "{message}");
            assert!(message.len() < 1024, "{} bytes", message.len());
        }
        let err = SpawnError::NotExecutable { program: hostile.clone(), path: hostile };
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn spawn_step_codes_round_trip() {
        for step in SpawnStep::ALL {
            assert_eq!(SpawnStep::from_code(step.code()), step);
        }
    }
}

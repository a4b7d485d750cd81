//! Why a spawn did not start: the request, the policy's denial, the failing step.

use std::io;
use std::path::PathBuf;

use nix::errno::Errno;
use wrt_text::Shown;

use super::shown;
use crate::command::Stream;
use crate::spawn_step::SpawnStep;
use crate::strategy::{Strategy, Unsupported};

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
    /// The child sandbox is on and this kernel cannot apply it: nothing runs unconfined
    /// unless the sandbox is turned off explicitly.
    #[error("cannot confine `{}`", shown(.program))]
    Sandbox {
        /// The canonical path of the program.
        program: PathBuf,
        /// What is missing.
        #[source]
        reason: super::SandboxUnavailable,
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
    /// [`Stdio::MergeWithStdout`](crate::Stdio::MergeWithStdout) was given for stdin or
    /// stdout; only stderr can be merged into stdout.
    #[error("only stderr can be merged into stdout, not {stream}")]
    MergeNotStderr {
        /// The stream it was given for.
        stream: Stream,
    },
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
        /// The program as the request named it (never what it resolved to).
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

#[cfg(test)]
mod tests {
    use super::*;
    use wrt_text::error_chain;

    #[test]
    fn control_characters_are_escaped() {
        let err = SpawnError::NotFound { program: PathBuf::from("a\0b\nc") };
        assert_eq!(err.to_string(), "program `a\\0b\\nc` not found");
    }

    #[test]
    fn denials_escape_and_cap_guest_strings() {
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
}

//! Spawning host programs for wrt guests under a deny-by-default policy.
//!
//! This crate is the security boundary between WebAssembly guests and the host: a guest's
//! request to run a program becomes a [`Command`], which a [`Spawner`] checks against a
//! [`Policy`] (allowed programs by canonical path, argument patterns, environment, working
//! directory, limits) before starting it with `posix_spawn` (or fork-exec when resource
//! limits are needed). The [`Child`] handle streams stdin, stdout and stderr without blocking
//! the host, enforces the timeout on the child's whole process group, and reports an
//! [`ChildOutcome`]: exit code or signal, timeout, truncation, duration and resource usage. Every
//! decision can be written to a JSONL [`AuditLog`]. [`containment`] kills what escapes the
//! process group (new sessions, double forks) and holds the process-wide opt-ins (subreaper,
//! termination signals) that belong to whoever owns the process.
//!
//! Pipelines connect children directly: [`Child::take_stdout`] hands over a [`ChildStdout`]
//! that becomes the next child's stdin (`Stdio::from`), and [`Stdio::MergeWithStdout`] is
//! `2>&1`; the host keeps no end of the pipe between two children. [`Stdio::Pty`] gives a
//! child a pseudo-terminal in a session of its own ([`Child::pty_resize`]).
//!
//! The policy file format and the audit record format are documented in `docs/policy.md`.
//!
//! # Examples
//!
//! ```no_run
//! use std::time::Duration;
//! use wrt_host_spawn::{Command, Policy, Spawner};
//!
//! let policy = Policy::deny_all().allow_program("sort").timeout(Some(Duration::from_secs(5)));
//! let spawner = Spawner::new(policy)?;
//! let output = spawner.output(&Command::new("sort"), Some(b"b\na\n"))?;
//! assert_eq!(output.stdout, b"a\nb\n");
//! assert!(output.outcome.success());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Ambient authority
//!
//! Starting a host program hands it the host user's authority; the [`Policy`] decides which
//! programs get it.
//!
//! # Platform-specific behavior
//!
//! Linux only (glibc or musl). `posix_spawn` needs `posix_spawn_file_actions_addchdir_np` and
//! `posix_spawn_file_actions_addclosefrom_np` (glibc ≥ 2.34); with an older libc every spawn
//! uses fork-exec, or fails in strict mode. Children's timeouts are carried out by a watchdog
//! thread (one per process, started by the first spawn with a timeout) from the spawn until
//! the child is reaped. A wait without a deadline of its own blocks in `waitid`; other waits
//! and polls watch exits with pidfds (Linux ≥ 5.3), and otherwise poll `waitid`.
#![cfg(unix)]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod audit;
mod child;
mod command;
pub mod containment;
mod decide;
mod disposition;
mod error;
mod escalation;
mod escape;
mod explain;
mod fd_budget;
#[cfg(test)]
mod import_graph;
mod limits;
mod outcome;
mod pin;
mod policy;
mod private_tmp;
mod process_budget;
mod rate_limit;
mod registry;
mod resolve;
mod sandbox;
mod spawn_step;
mod spawner;
mod strategy;
#[allow(unsafe_code, reason = "posix_spawn file actions, fork-exec, wait4 and pidfd_open need libc")]
mod sys;
mod watchdog;

pub use nix::sys::signal::Signal;

pub use self::audit::{AuditLog, AuditSink};
pub use self::child::{Child, Interest, wait_any};
pub use self::command::{ChildStdout, Command, Stdio, Stream};
pub use self::decide::Decision;
pub use self::error::{
    CommunicateError, Denial, InvalidRequest, KillError, OutputError, PolicyError, PolicyFileError, PollError,
    ReadError, ResizeError, SandboxUnavailable, SpawnError, UnknownKey, WaitError, WriteError,
};
pub use self::explain::Explanation;
pub use self::fd_budget::{RESERVED_FDS, raise_open_files_limit};
pub use self::limits::Rlimits;
pub use self::outcome::{ChildOutcome, ExitStatus, Output, ResourceUsage, Truncated};
pub use self::pin::Sha256;
pub use self::policy::{CompiledPolicy, DEFAULT_SEARCH_PATH, Policy, PolicyReport, PolicyWarning, ProgramRule};
pub use self::process_budget::DEFAULT_MAX_PROCESSES;
pub use self::rate_limit::{RateLimit, Verdict};
pub use self::sandbox::{ChildSandbox, Confinement, SYSTEM_READ, landlock_abi};
pub use self::spawn_step::SpawnStep;
pub use self::spawner::{KillSwitch, Spawner};
pub use self::strategy::{Strategy, Unsupported};
pub use self::sys::landlock::MIN_LANDLOCK_ABI;

//! Run host programs from a WebAssembly component, with an API shaped like [`std::process`].
//!
//! [wrt](https://example.invalid/wrt) runs `wasi:cli/command` components whose sandbox policy
//! may let them start host programs through the WIT package `wrt:process@0.1.0` (the
//! repository's `wit/process.wit`, world `wrt:process/imports`). This crate is its Rust SDK,
//! built for `wasm32-wasip2` with `wit-bindgen`: build a [`Command`], then
//! [`output`](Command::output) runs it to its end and captures what it printed (the one-shot
//! `run`), [`status`](Command::status) runs it with the sandbox's own streams, and
//! [`spawn`](Command::spawn) returns a [`Child`] whose pipes ([`ChildStdin`], [`ChildStdout`],
//! [`ChildStderr`]: `std::io::Write` and `Read` over `wasi:io` streams) the guest uses while it
//! runs. [`wait_any`] waits for the first of several children, [`Child::pipe_into`] joins two
//! children with a pipe the guest never reads, and a [`Buffer`] holds bytes in the host.
//!
//! It is the component twin of the core-module SDK `wrt-guest`, from the same source:
//! [`Command`], [`Child`], [`Stdio`], [`ExitStatus`], [`Output`] and [`wait_any`] are written
//! once in the repository's `sdk/core/` and compiled into both crates, each over its own
//! transport (here `wrt:process`), so a program moves between the two by changing its `use`
//! line. Only this crate has [`Child::subscribe`] and [`exit`]. Failures are
//! [`std::io::Error`]s holding a [`WrtError`] with the host's code and message; the WIT's
//! `error-code` is the core ABI's [`ErrorCode`] (same cases, same order), so
//! [`ErrorCode::of`] an error works for both SDKs.
//!
//! The sandbox denies every program its policy does not allow:
//! `wrt run --allow-run ls guest.wasm` lets the guest run `ls`, with an empty environment, in
//! `/`, for at most 30 s, keeping 16 MiB of each output stream (the default policy).
//!
//! # Examples
//!
//! ```no_run
//! use std::io::ErrorKind;
//! use std::time::Duration;
//! use wrt_process::Command;
//!
//! match Command::new("ls").args(["-l", "/"]).timeout(Duration::from_secs(5)).output() {
//!     Ok(output) => {
//!         print!("{}", String::from_utf8_lossy(&output.stdout));
//!         println!("ls: {} in {:?}", output.status, output.status.duration());
//!     }
//!     Err(err) if err.kind() == ErrorKind::PermissionDenied => eprintln!("not allowed: {err}"),
//!     Err(err) => eprintln!("ls failed: {err}"),
//! }
//! ```
//!
//! # Platform-specific behavior
//!
//! The imports exist only in components run by wrt (`wasm32-wasip2`). The crate builds for other
//! targets too, so that its pure logic is tested there; calling the host there panics.
//!
//! # Ambient authority
//!
//! A host program runs outside the sandbox with the authority of the user running `wrt`, as
//! far as the sandbox's policy lets it run at all.
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

// The API shared with `wrt-guest`, written once in `sdk/core/`.
#[path = "../../core/child.rs"]
mod child;
#[path = "../../core/command.rs"]
mod command;
#[path = "../../core/status.rs"]
mod status;
#[path = "../../core/stdio.rs"]
mod stdio;
#[path = "../../core/wait_any.rs"]
mod wait_any;

// The `wrt:process` transport under it, and what only this SDK has.
mod buffer;
mod communicate;
mod error;
mod exit;
mod pipes;
mod pollable;
#[allow(unsafe_code, reason = "the bindings wit-bindgen generates lift and lower values through raw pointers")]
#[allow(missing_docs, reason = "generated from the WIT, whose comments become their docs")]
mod sys;
mod transport;

pub use crate::buffer::Buffer;
pub use crate::child::{Child, ChildStderr, ChildStdin, ChildStdout};
pub use crate::command::{Command, DEFAULT_CAPTURE};
pub use crate::error::{ErrorCode, WrtError};
pub use crate::exit::exit;
pub use crate::status::{ExitStatus, Output};
pub use crate::stdio::Stdio;
pub use crate::wait_any::wait_any;

//! Run host programs from a wrt guest, with an API shaped like [`std::process`].
//!
//! [wrt](https://example.invalid/wrt) runs WebAssembly guests (WASI preview 1) in a sandbox
//! whose policy may let them start host programs through its guest ABI, the import module
//! `wrt_v1` (`docs/abi.md`). This crate wraps that ABI: build a [`Command`], then
//! [`output`](Command::output) runs it to its end and captures what it printed,
//! [`status`](Command::status) runs it with the sandbox's own streams, and
//! [`spawn`](Command::spawn) returns a [`Child`] whose pipes the guest reads and writes while it
//! runs. Failures are [`std::io::Error`]s with the usual [`ErrorKind`](std::io::ErrorKind)s; the
//! ABI's own code is [`ErrorCode::of`] the error, and its message is the host's (for a denied
//! program it names the flag that would allow it).
//!
//! A [`Buffer`] holds bytes that, past 64 bytes, live in the host rather than in linear
//! memory: a child's output can be read into buffers
//! ([`ChildStdout::read_buffer`]), joined and sliced there, and written to another child
//! ([`ChildStdin::write_buffer`]) without passing through the guest.
//!
//! Pipelines are wired by the host: `Stdio::from(child.stdout.take().unwrap())` or
//! [`Child::pipe_into`] makes one child's stdout the next child's stdin (the bytes go from child
//! to child, never through the guest), and [`Stdio::merge_with_stdout`] is `2>&1`. Each stage is a spawn the policy checks
//! on its own (see [`Stdio`]). [`Stdio::pty`] gives the child a pseudo-terminal instead of a
//! pipe, and [`Child::pty_resize`] sets its size.
//!
//! The sandbox denies every program its policy does not allow:
//! `wrt run --allow-run ls guest.wasm` lets the guest run `ls`, with an empty environment, in
//! `/`, for at most 30 s, keeping 16 MiB of each output stream (the default policy).
//!
//! The API is the one of the component SDK `wrt-process`, from the same source: [`Command`],
//! [`Child`], [`Stdio`], [`ExitStatus`], [`Output`] and [`wait_any`] are written once in the
//! repository's `sdk/core/` and compiled into both crates, each over its own transport
//! (here the `wrt_v1` imports). Only this crate has [`Events`], [`Child::poll`] and the
//! non-blocking pipe calls.
//!
//! # Examples
//!
//! ```no_run
//! use std::io::ErrorKind;
//! use std::time::Duration;
//! use wrt_guest::Command;
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
//! The host functions exist only in wasm32 guests run by wrt. The crate also builds for other
//! targets (so its pure logic can be tested there); every host call then fails with
//! [`ErrorKind::Unsupported`](std::io::ErrorKind::Unsupported).
//!
//! # Ambient authority
//!
//! A host program runs outside the sandbox with the authority of the user running `wrt`, as
//! far as the sandbox's policy lets it run at all.
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![doc(test(attr(deny(warnings))))]

// The API shared with `wrt-process`, written once in `sdk/core/`.
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

// The `wrt_v1` transport under it, and what only this SDK has.
mod buffer;
mod communicate;
mod error;
mod events;
mod handle;
mod pipes;
mod request;
#[allow(unsafe_code, reason = "the wrt_v1 imports are foreign functions that read and write guest memory")]
mod sys;
mod transport;

pub use crate::buffer::Buffer;
pub use crate::child::{Child, ChildStderr, ChildStdin, ChildStdout};
pub use crate::command::{Command, DEFAULT_CAPTURE};
pub use crate::error::{ErrorCode, WrtError};
pub use crate::events::Events;
pub use crate::status::{ExitStatus, Output};
pub use crate::stdio::Stdio;
pub use crate::wait_any::wait_any;

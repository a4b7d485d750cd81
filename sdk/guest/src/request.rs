//! The spawn request of `spawn` and `run`, encoded exactly as docs/abi.md lays it out.
//!
//! ```text
//! version u32 = 1 | program string | argc u32 | args | envc u32 | (name, value) pairs
//! | cwd string | stdin u8 | stdout u8 | stderr u8 | flags u8 = 0 | timeout_ms u64 | output_limit u64
//! [| stdin_child u32, when stdin is 3 (another child's stdout)]
//! [| pty_rows u16 | pty_cols u16, when a stream is 5 (a pseudo-terminal)]
//! ```
//!
//! All integers little-endian; a `string` is a `u32` length and that many bytes. Strings are
//! passed as the guest holds them: the host, not the encoder, rejects bytes that are not UTF-8
//! (`BAD_UTF8`) and NUL bytes (`INVALID_ARGUMENT`), so a guest sees the ABI's own codes.

#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::io;

use wrt_abi::request::{Encoder, StdioMode, Tail, TooLong};

use crate::stdio::Stdio;

/// One spawn request, borrowed from a [`Command`](crate::Command).
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub(crate) program: &'a OsStr,
    pub(crate) args: Vec<&'a OsStr>,
    /// Variables set for the child, in the order they are sent.
    pub(crate) env: Vec<(&'a OsStr, &'a OsStr)>,
    /// Empty for the policy's default.
    pub(crate) cwd: &'a OsStr,
    pub(crate) stdin: Stdio,
    pub(crate) stdout: Stdio,
    pub(crate) stderr: Stdio,
    /// Milliseconds; 0 for the policy's timeout.
    pub(crate) timeout_ms: u64,
    /// Bytes per output stream; 0 for the policy's limit.
    pub(crate) output_limit: u64,
    /// The pseudo-terminal's rows and columns, if a stream is one (0 × 0: the host's default).
    pub(crate) pty_size: (u16, u16),
}

impl Request<'_> {
    /// The request's bytes.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if a string is longer than `u32::MAX` bytes or there are more than
    /// `u32::MAX` arguments or variables (the ABI cannot express them). Requests longer than the
    /// host's 1 MiB are encoded; the host rejects them with `INVALID_ARGUMENT`.
    pub(crate) fn encode(&self) -> io::Result<Vec<u8>> {
        let strings =
            self.args.iter().chain(self.env.iter().flat_map(|(k, v)| [k, v])).chain([&self.program, &self.cwd]);
        let capacity = 3 * 4 + 4 + 16 + strings.map(|s| 4 + s.len()).sum::<usize>();
        let mut out = Encoder::new(self.program.as_encoded_bytes(), capacity).map_err(too_long)?;
        out.count(self.args.len()).map_err(too_long)?;
        for arg in &self.args {
            out.string(arg.as_encoded_bytes()).map_err(too_long)?;
        }
        out.count(self.env.len()).map_err(too_long)?;
        for (name, value) in &self.env {
            out.string(name.as_encoded_bytes()).map_err(too_long)?;
            out.string(value.as_encoded_bytes()).map_err(too_long)?;
        }
        out.string(self.cwd.as_encoded_bytes()).map_err(too_long)?;
        let stdio = [self.stdin.mode(), self.stdout.mode(), self.stderr.mode()];
        let pty_size = stdio.contains(&StdioMode::Pty).then_some(self.pty_size);
        let stdin_child = self.stdin.source().map(|child| child.raw().cast_unsigned());
        let tail = Tail { stdin_child, pty_size };
        Ok(out.finish(stdio, tail, self.timeout_ms, self.output_limit))
    }
}

fn too_long(TooLong { what }: TooLong) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("a {what} of the spawn request does not fit in 32 bits"))
}

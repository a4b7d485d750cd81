//! The spawn request of `spawn` and `run`, encoded exactly as docs/abi.md lays it out.
//!
//! ```text
//! version u32 = 1 | program string | argc u32 | args | envc u32 | (name, value) pairs
//! | cwd string | stdin u8 | stdout u8 | stderr u8 | flags u8 = 0 | timeout_ms u64 | output_limit u64
//! ```
//!
//! All integers little-endian; a `string` is a `u32` length and that many bytes. Strings are
//! passed as the guest holds them: the host, not the encoder, rejects bytes that are not UTF-8
//! (`BAD_UTF8`) and NUL bytes (`INVALID_ARGUMENT`), so a guest sees the ABI's own codes.

#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::io;

use crate::stdio::Stdio;

/// The ABI version this encoder writes.
pub(crate) const VERSION: u32 = 1;

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
        let mut out = Encoder(Vec::with_capacity(capacity));
        out.u32(VERSION);
        out.string(self.program)?;
        out.count(self.args.len())?;
        for arg in &self.args {
            out.string(arg)?;
        }
        out.count(self.env.len())?;
        for (name, value) in &self.env {
            out.string(name)?;
            out.string(value)?;
        }
        out.string(self.cwd)?;
        out.0.extend_from_slice(&[self.stdin.raw(), self.stdout.raw(), self.stderr.raw(), 0]);
        out.0.extend_from_slice(&self.timeout_ms.to_le_bytes());
        out.0.extend_from_slice(&self.output_limit.to_le_bytes());
        Ok(out.0)
    }
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn count(&mut self, count: usize) -> io::Result<()> {
        let count = u32::try_from(count).map_err(|_| too_long("count"))?;
        self.u32(count);
        Ok(())
    }

    fn string(&mut self, s: &OsStr) -> io::Result<()> {
        let bytes = s.as_encoded_bytes();
        let len = u32::try_from(bytes.len()).map_err(|_| too_long("string"))?;
        self.u32(len);
        self.0.extend_from_slice(bytes);
        Ok(())
    }
}

fn too_long(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("a {what} of the spawn request does not fit in 32 bits"))
}

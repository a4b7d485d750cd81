//! SHA-256 pinning of allow rules: the program that runs is the one the user allowed, byte for
//! byte. The file is opened once, hashed through that descriptor, and executed from the same
//! descriptor, so nothing can swap it between the check and the `execve`.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use sha2::{Digest, Sha256 as Hasher};

/// A SHA-256 digest, written as 64 lowercase hexadecimal digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// Parses 64 hexadecimal digits (either case).
    ///
    /// # Errors
    ///
    /// Anything else, with a message saying what is wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_host_spawn::Sha256;
    ///
    /// let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    /// assert_eq!(Sha256::from_hex(empty).unwrap().to_string(), empty);
    /// assert!(Sha256::from_hex("e3b0").is_err());
    /// ```
    pub fn from_hex(hex: &str) -> Result<Self, String> {
        if hex.len() != 64 {
            return Err(format!("a SHA-256 digest is 64 hexadecimal digits, not {}", hex.len()));
        }
        if let Some(bad) = hex.chars().find(|c| !c.is_ascii_hexdigit()) {
            return Err(format!("`{}` is not a hexadecimal digit", bad.escape_debug()));
        }
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            let high = char::from(pair[0]).to_digit(16).unwrap_or(0);
            let low = char::from(pair[1]).to_digit(16).unwrap_or(0);
            *byte = u8::try_from(high << 4 | low).unwrap_or(0);
        }
        Ok(Self(digest))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Hasher::digest(bytes).into())
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256({self})")
    }
}

/// A program file opened for execution from its descriptor: what it hashed to, and whether it
/// starts with `#!`.
#[derive(Debug)]
pub(crate) struct Opened {
    /// Read-only, close-on-exec.
    pub(crate) fd: OwnedFd,
    pub(crate) digest: Sha256,
    pub(crate) script: bool,
}

/// Opens `path` read-only and close-on-exec (and non-blocking, so a FIFO swapped in cannot
/// hang the host), checks that it is a regular file, and hashes it through the descriptor.
pub(crate) fn open_and_hash(path: &Path) -> io::Result<Opened> {
    let file = File::options().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut hasher = Hasher::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut script = None;
    let mut reader = &file;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        // The first read of a regular file returns at least 2 bytes if it has them.
        script.get_or_insert(buf[..n].starts_with(b"#!"));
        hasher.update(&buf[..n]);
    }
    Ok(Opened { fd: file.into(), digest: Sha256(hasher.finalize().into()), script: script.unwrap_or(false) })
}

/// Checks, when a policy is compiled, that the program at `path` can be pinned to `expected`:
/// a readable regular file, not a script, with that digest.
pub(crate) fn check_rule(path: &Path, expected: Sha256) -> Result<(), String> {
    let opened = open_and_hash(path).map_err(|err| format!("cannot be hashed: {err}"))?;
    if opened.script {
        return Err("is a `#!` script, which cannot be pinned: the interpreter reopens it by path".into());
    }
    if opened.digest != expected {
        return Err(format!("has SHA-256 {}, not the pinned {expected}", opened.digest));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let hex = "00ff10ab".repeat(8);
        assert_eq!(Sha256::from_hex(&hex).unwrap().to_string(), hex);
        assert_eq!(Sha256::from_hex(&hex.to_uppercase()).unwrap().to_string(), hex);
        assert!(Sha256::from_hex(&"g".repeat(64)).is_err());
        assert!(Sha256::from_hex(&"0".repeat(63)).is_err());
        assert!(Sha256::from_hex(&"é".repeat(32)).is_err());
        assert!(Sha256::from_hex("+0".repeat(32).as_str()).is_err());
    }

    #[test]
    fn hashes_a_file_through_its_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"#!/bin/sh\nexit 0\n").unwrap();
        let opened = open_and_hash(&path).unwrap();
        assert_eq!(opened.digest, Sha256::of(b"#!/bin/sh\nexit 0\n"));
        assert!(opened.script);
        assert!(open_and_hash(dir.path()).is_err(), "a directory is not a program");
    }
}

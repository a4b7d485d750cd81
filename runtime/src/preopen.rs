//! Host directories given to the guest.

use std::path::{Path, PathBuf};

use crate::error::ConfigError;

/// What the guest may do in a preopened directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirAccess {
    /// Read files and list directories.
    ReadOnly,
    /// Also create, write, rename and remove.
    ReadWrite,
}

/// A host directory the guest sees at `guest` path.
///
/// # Ambient authority
///
/// The guest reaches everything below `host` that the host process may reach, within `access`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where the guest sees it.
    pub guest: String,
    /// What the guest may do there.
    pub access: DirAccess,
}

impl Preopen {
    /// Parses `HOST[::GUEST]`, as `--dir` takes it. Without `::GUEST` the guest sees the
    /// directory under the same path as the host.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{DirAccess, Preopen};
    /// let p = Preopen::parse("/srv/data::/data", DirAccess::ReadOnly).unwrap();
    /// assert_eq!(p.guest, "/data");
    /// ```
    ///
    /// # Errors
    ///
    /// An empty host or guest part.
    pub fn parse(spec: &str, access: DirAccess) -> Result<Self, ConfigError> {
        let bad = |reason| ConfigError::BadDirSpec { spec: spec.to_owned(), reason };
        let (host, guest) = match spec.split_once("::") {
            Some((host, guest)) => (host, guest),
            None => (spec, spec),
        };
        if host.is_empty() {
            return Err(bad("the host directory is empty"));
        }
        if guest.is_empty() {
            return Err(bad("the guest path after `::` is empty"));
        }
        Ok(Self { host: PathBuf::from(host), guest: guest.to_owned(), access })
    }
}

/// Refuses every allowed program (`(rule as written, canonical path)`) that lies inside a
/// read-write preopen: the guest could replace it, or a directory on its path, between the
/// policy's check and the `execve`. Paths are compared canonically, so a preopen reached
/// through a symlink, or a parent of the program's directory, counts too. A preopen that
/// cannot be canonicalised is left to fail when it is opened.
pub(crate) fn check_programs_outside<'a>(
    preopens: &[Preopen],
    programs: impl IntoIterator<Item = (&'a Path, &'a Path)> + Clone,
) -> Result<(), ConfigError> {
    for preopen in preopens.iter().filter(|p| p.access == DirAccess::ReadWrite) {
        let Ok(dir) = std::fs::canonicalize(&preopen.host) else { continue };
        for (rule, path) in programs.clone() {
            // Every directory from the program's own up to `/` holds an entry the kernel
            // follows at `execve`; the guest may rename or replace entries anywhere below `dir`.
            if path.parent().is_some_and(|parent| parent.starts_with(&dir)) {
                return Err(ConfigError::WritableProgram {
                    rule: rule.to_owned(),
                    path: path.to_owned(),
                    preopen: preopen.host.clone(),
                    guest: preopen.guest.clone(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        let p = Preopen::parse("/tmp", DirAccess::ReadWrite).unwrap();
        assert_eq!((p.host.to_str().unwrap(), p.guest.as_str()), ("/tmp", "/tmp"));
        let p = Preopen::parse("./x::/y", DirAccess::ReadOnly).unwrap();
        assert_eq!((p.host.to_str().unwrap(), p.guest.as_str()), ("./x", "/y"));
        assert!(Preopen::parse("::/y", DirAccess::ReadOnly).is_err());
        assert!(Preopen::parse("/x::", DirAccess::ReadOnly).is_err());
    }
}

//! Host directories given to the guest.

use std::path::PathBuf;

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

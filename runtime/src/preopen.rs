//! Host directories given to the guest.

use std::path::PathBuf;

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
    /// The host directory `host`, seen by the guest at `guest`, with `access`.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{DirAccess, Preopen, RunOptions};
    /// let data = Preopen::new("/srv/data", "/data", DirAccess::ReadOnly);
    /// assert_eq!(data.guest, "/data");
    /// let options = RunOptions::new().preopen_spec(data);
    /// # let _ = options;
    /// ```
    ///
    /// # Ambient authority
    ///
    /// The guest reaches everything below `host` that the host process may reach, within
    /// `access`, once the preopen is given to a run.
    pub fn new(host: impl Into<PathBuf>, guest: impl Into<String>, access: DirAccess) -> Self {
        Self { host: host.into(), guest: guest.into(), access }
    }
}

//! The children's temporary directory: one per spawner (one per guest in wrt), made on the
//! first confined spawn, empty then, mode `0700`, in the host's temporary directory
//! (`std::env::temp_dir()`, `/tmp` unless wrt's own `TMPDIR` says otherwise) and named
//! `wrt-tmp-PID-RANDOM`. Every confined child may read and write in it (a Landlock rule) and
//! finds it as `TMPDIR`, which compilers, Python's `tempfile`, `mktemp` and Node's
//! `os.tmpdir()` honour. When the spawner is dropped, after what is left of its children was
//! killed, the directory is removed with everything in it, directories a child made
//! unreadable included; so is it when wrt ends on a signal, and a directory that a `SIGKILL`
//! of wrt left behind is removed by the next wrt that makes one.
//!
//! Where the host's temporary directory cannot hold it (a container image without `/tmp`),
//! children run without one, as unconfined children do, and their audit records say so.
//!
//! What it is not: `/tmp` itself (a program that writes to `/tmp` by name, ignoring `TMPDIR`,
//! is still refused), nor bounded in size beyond the policy's limits on each child (`rlimits`:
//! `file_size`); it is on the file system of the host's temporary directory.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use nix::dir::{Dir, Type};
use nix::fcntl::OFlag;
use nix::sys::stat::{FchmodatFlags, Mode, fchmodat};

/// The start of the directory's name, before the pid of the process that made it.
const PREFIX: &str = "wrt-tmp-";

/// The directories alive in this process, for [`end_all`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A spawner's temporary directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct PrivateTmp {
    path: PathBuf,
}

impl PrivateTmp {
    /// Makes an empty directory, mode `0700`, in the host's temporary directory, after removing
    /// those that processes no longer alive left behind.
    pub(crate) fn create() -> io::Result<Self> {
        let base = std::env::temp_dir();
        remove_stale(&base);
        let template = base.join(format!("{PREFIX}{}-XXXXXX", std::process::id()));
        let path = nix::unistd::mkdtemp(&template).map_err(io::Error::from)?;
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(path.clone());
        Ok(Self { path })
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|p| p != &self.path);
        remove(&self.path);
    }
}

/// Removes every directory of this process: for a process about to exit without dropping its
/// spawners (wrt ending on a signal).
pub(crate) fn end_all() {
    let dirs = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    for dir in dirs {
        remove(&dir);
    }
}

/// Removes the directories of this user in `base` named for a pid that no longer exists.
fn remove_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    let uid = nix::unistd::getuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|n| n.split('-').next()) else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if ours && pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            remove(&entry.path());
        }
    }
}

/// Removes `dir` and everything in it, without following a symlink anywhere. A directory a
/// child made unreadable or unwritable (`chmod 000`) is made the owner's again first.
fn remove(dir: &Path) {
    if fs::remove_dir_all(dir).is_ok() {
        return;
    }
    // The directory itself sits in the host's temporary directory, where no child may rename
    // or replace it: its path leads to it.
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    if let Ok(top) = nix::fcntl::open(dir, flags, Mode::empty()) {
        open_up(top, 0);
    }
    let _ = fs::remove_dir_all(dir);
}

/// How deep [`open_up`] goes: deeper directories are left as they are.
const MAX_DEPTH: usize = 256;

/// Gives the owner every right on each directory beneath `dir` (a descriptor), through
/// descriptors only, so that no path a child renames meanwhile leads it elsewhere.
fn open_up(dir: OwnedFd, depth: usize) {
    let Ok(parent) = dir.try_clone() else { return };
    let Ok(mut entries) = Dir::from_fd(dir) else { return };
    let subdirs: Vec<Vec<u8>> = entries
        .iter()
        .flatten()
        .filter(|e| e.file_type() == Some(Type::Directory) && ![&b"."[..], b".."].contains(&e.file_name().to_bytes()))
        .map(|e| e.file_name().to_bytes().to_vec())
        .collect();
    for name in subdirs {
        let name = OsStr::from_bytes(&name);
        // glibc opens the entry with `O_PATH | O_NOFOLLOW` and changes it through
        // `/proc/self/fd`: a symlink put in its place is refused, not followed.
        let _ = fchmodat(parent.as_fd(), name, Mode::from_bits_truncate(0o700), FchmodatFlags::NoFollowSymlink);
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        if depth < MAX_DEPTH
            && let Ok(sub) = nix::fcntl::openat(parent.as_fd(), name, flags, Mode::empty())
        {
            open_up(sub, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_private_and_removed_with_what_a_child_locked() {
        let tmp = PrivateTmp::create().unwrap();
        let path = tmp.path().to_owned();
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert!(path.file_name().unwrap().to_str().unwrap().starts_with(&format!("{PREFIX}{}-", std::process::id())));
        // A locked directory with a file in it, and a symlink to a directory outside.
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"x").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode();
        let outside_mode = mode(outside.path());
        fs::create_dir_all(path.join("a/locked")).unwrap();
        fs::write(path.join("a/locked/file"), b"x").unwrap();
        fs::set_permissions(path.join("a/locked"), fs::Permissions::from_mode(0o0)).unwrap();
        fs::set_permissions(path.join("a"), fs::Permissions::from_mode(0o500)).unwrap();
        std::os::unix::fs::symlink(outside.path(), path.join("out")).unwrap();
        drop(tmp);
        assert!(!path.exists(), "{} is left", path.display());
        assert!(outside.path().join("keep").exists(), "nothing outside is touched");
        assert_eq!(mode(outside.path()), outside_mode, "nor its mode");
    }

    #[test]
    fn a_directory_left_by_a_process_that_is_gone_is_removed() {
        let base = tempfile::tempdir().unwrap();
        // Pid 4194305 is past the kernel's largest (2^22).
        let stale = base.path().join(format!("{PREFIX}4194305-abcdef"));
        let alive = base.path().join(format!("{PREFIX}{}-abcdef", std::process::id()));
        let other = base.path().join("wrt-tmp-notapid");
        for dir in [&stale, &alive, &other] {
            fs::create_dir(dir).unwrap();
        }
        remove_stale(base.path());
        assert!(!stale.exists());
        assert!(alive.exists() && other.exists());
    }
}

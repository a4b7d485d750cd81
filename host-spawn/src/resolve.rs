//! Program resolution: a request's program to the canonical path that will be executed.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::unistd::AccessFlags;

/// Why a program did not resolve.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ResolveError {
    /// A path that is neither a bare name nor absolute (`./x`, `bin/x`, `../x`).
    Relative,
    /// No such file on the search path, or at the given path.
    NotFound,
    /// Found, but not an executable regular file.
    NotExecutable(PathBuf),
}

/// A file's identity: its device and inode. Every hard link of a file has the same one, and a
/// bind mount shows a directory's under another path.
pub(crate) type FileId = (u64, u64);

/// Resolves `program` to a canonical absolute path: [`resolve_id`] without the identity.
pub(crate) fn resolve(program: &OsStr, search_path: &[PathBuf]) -> Result<PathBuf, ResolveError> {
    resolve_id(program, search_path).map(|(path, _)| path)
}

/// Resolves `program` to a canonical absolute path and the identity of the file there.
///
/// - A bare name (no `/`) is looked up in `search_path` only, in order, as `execvp` does with
///   `PATH`: the first executable regular file wins; a non-executable match is skipped.
/// - A path must be absolute. It is canonicalised (`realpath`: symlinks and `..` resolved by
///   the kernel's rules), so a symlink to a program resolves to that program.
///
/// The canonical path is what the policy checks and what is executed; the identity comes from
/// the same `stat` that checks it is a regular file, so it costs no further system call.
pub(crate) fn resolve_id(program: &OsStr, search_path: &[PathBuf]) -> Result<(PathBuf, FileId), ResolveError> {
    if !program.as_bytes().contains(&b'/') {
        let mut not_executable = None;
        for dir in search_path {
            let candidate = dir.join(program);
            match check(&candidate) {
                Ok(path) => return Ok(path),
                Err(ResolveError::NotExecutable(path)) => {
                    not_executable.get_or_insert(path);
                }
                Err(_) => {}
            }
        }
        return Err(not_executable.map_or(ResolveError::NotFound, ResolveError::NotExecutable));
    }
    let path = Path::new(program);
    if !path.is_absolute() {
        return Err(ResolveError::Relative);
    }
    check(path)
}

/// Canonicalises `path` and checks it is an executable regular file.
fn check(path: &Path) -> Result<(PathBuf, FileId), ResolveError> {
    let canonical = match fs::canonicalize(path) {
        Ok(canonical) => canonical,
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            return Err(ResolveError::NotExecutable(path.to_owned()));
        }
        Err(_) => return Err(ResolveError::NotFound),
    };
    let id = match fs::metadata(&canonical) {
        Ok(meta) if meta.is_file() => (meta.dev(), meta.ino()),
        _ => return Err(ResolveError::NotExecutable(canonical)),
    };
    if nix::unistd::access(&canonical, AccessFlags::X_OK).is_err() {
        return Err(ResolveError::NotExecutable(canonical));
    }
    Ok((canonical, id))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn bin_dir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let canonical = fs::canonicalize(dir.path()).unwrap();
        (dir, canonical)
    }

    fn make(path: &Path, mode: u32) {
        fs::write(path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn bare_names_use_only_the_given_search_path() {
        let (_guard, dir) = bin_dir();
        make(&dir.join("tool"), 0o755);
        assert_eq!(resolve(OsStr::new("tool"), std::slice::from_ref(&dir)), Ok(dir.join("tool")));
        // `sh` is on the host's PATH but not on this search path.
        assert_eq!(resolve(OsStr::new("sh"), &[dir]), Err(ResolveError::NotFound));
    }

    #[test]
    fn first_executable_match_wins() {
        let (_g1, first) = bin_dir();
        let (_g2, second) = bin_dir();
        make(&first.join("tool"), 0o644);
        make(&second.join("tool"), 0o755);
        let found = resolve(OsStr::new("tool"), &[first.clone(), second.clone()]);
        assert_eq!(found, Ok(second.join("tool")));
        let only_first = resolve(OsStr::new("tool"), std::slice::from_ref(&first));
        assert_eq!(only_first, Err(ResolveError::NotExecutable(first.join("tool"))));
    }

    #[test]
    fn relative_paths_are_refused() {
        for program in ["./true", "bin/true", "../bin/true", "usr/bin/../bin/true"] {
            assert_eq!(
                resolve(OsStr::new(program), &[PathBuf::from("/usr/bin")]),
                Err(ResolveError::Relative),
                "{program}"
            );
        }
    }

    #[test]
    fn symlinks_and_dot_dot_resolve_to_the_target() {
        let (_guard, dir) = bin_dir();
        make(&dir.join("real"), 0o755);
        symlink(dir.join("real"), dir.join("link")).unwrap();
        assert_eq!(resolve(dir.join("link").as_os_str(), &[]), Ok(dir.join("real")));
        let dotted = dir.join("sub/../real");
        fs::create_dir(dir.join("sub")).unwrap();
        assert_eq!(resolve(dotted.as_os_str(), &[]), Ok(dir.join("real")));
    }

    #[test]
    fn directories_are_not_executable() {
        let (_guard, dir) = bin_dir();
        assert_eq!(resolve(dir.as_os_str(), &[]), Err(ResolveError::NotExecutable(dir.clone())));
        assert_eq!(resolve(dir.join("missing").as_os_str(), &[]), Err(ResolveError::NotFound));
    }
}

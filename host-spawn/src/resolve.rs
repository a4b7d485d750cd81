//! Program resolution: a request's program to the canonical path that will be executed.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

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
    resolve_with(program, search_path, check)
}

/// [`resolve_id`], with `check` canonicalising and checking each path it tries.
fn resolve_with(
    program: &OsStr,
    search_path: &[PathBuf],
    mut check: impl FnMut(&Path) -> Result<(PathBuf, FileId), ResolveError>,
) -> Result<(PathBuf, FileId), ResolveError> {
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

/// The resolutions a spawner made, kept to spare the next spawn of the same program the
/// canonicalisation: `realpath` reads every component's link (`/bin/true`: four `readlink`s),
/// the larger part of a spawn's own system calls beside the spawn and the wait.
///
/// An entry maps a path as a request gave it (or as the search path made it of a bare name) to
/// its canonical path, the identity of the file there and the file's change time (`ctime`) when
/// [`check`] found it executable. It is used only while the requested path still names a
/// regular file of that identity, unchanged since (a `stat`, following links as `realpath`
/// does), and the canonical path still names that file (a second `stat`, none when the request
/// gave the canonical path): a link re-pointed at another file, or a program replaced by a new
/// file (as package managers do), is resolved afresh, and the identity the deny rules see is the
/// executed path's at this spawn, as without the cache. Whatever changes whether the file may be
/// executed (its mode, owner, ACL) changes its `ctime`, so the `access` check is not asked again
/// of an unchanged file; a file that stopped being executable for another reason (its mount
/// remounted `noexec`) is refused by `execve` itself, as a failed spawn rather than a
/// "not executable" denial. What an entry can keep is a link re-pointed at another name of the
/// same file (a hard link or a bind mount): that file runs under the name it was allowed by.
/// Only what resolved is kept, so a program that appears earlier on the search path, or a path
/// that stops resolving, is seen at once; a path not kept that names nothing (a search
/// directory without the program) costs one `stat`.
///
/// Each spawner has its own (no guest learns from timing what another started), of at most
/// [`ResolveCache::MAX_ENTRIES`] paths: a requester that spells programs in ever new ways
/// empties it, and gains nothing but the cost of resolving.
#[derive(Debug, Default)]
pub(crate) struct ResolveCache(Mutex<HashMap<PathBuf, Kept>>);

/// A kept resolution: the canonical path, the file's identity, and its change time when it was
/// checked.
#[derive(Debug, Clone)]
struct Kept {
    canonical: PathBuf,
    id: FileId,
    changed: Changed,
}

/// A file's change time (`st_ctime`, seconds and nanoseconds).
type Changed = (i64, i64);

fn changed(meta: &fs::Metadata) -> Changed {
    (meta.ctime(), meta.ctime_nsec())
}

impl ResolveCache {
    /// How many paths a cache keeps before it starts again empty.
    pub(crate) const MAX_ENTRIES: usize = 64;

    /// [`resolve_id`], with the resolutions this cache keeps.
    pub(crate) fn resolve_id(
        &self,
        program: &OsStr,
        search_path: &[PathBuf],
    ) -> Result<(PathBuf, FileId), ResolveError> {
        resolve_with(program, search_path, |path| self.check(path))
    }

    /// [`check`] of `path`, from the entry for it while the entry holds.
    fn check(&self, path: &Path) -> Result<(PathBuf, FileId), ResolveError> {
        let kept = self.lock().get(path).cloned();
        if let Some(Kept { canonical, id, changed: when_checked }) = kept {
            let names_it = |path: &Path| fs::metadata(path).is_ok_and(|meta| (meta.dev(), meta.ino()) == id);
            let unchanged = fs::metadata(path)
                .is_ok_and(|meta| meta.is_file() && (meta.dev(), meta.ino()) == id && changed(&meta) == when_checked);
            if unchanged && (path == canonical || names_it(&canonical)) {
                return Ok((canonical, id));
            }
            self.lock().remove(path);
        }
        // A path that names nothing (a search directory without the program, for a bare name
        // found further down the search path) is known for that after one `stat`, where
        // `realpath` reads the link of every component first: the same answer, as [`check`]
        // gives it.
        if fs::metadata(path)
            .is_err_and(|err| matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory))
        {
            return Err(ResolveError::NotFound);
        }
        let (canonical, id, changed) = check_changed(path)?;
        let mut entries = self.lock();
        if entries.len() >= Self::MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(path.to_owned(), Kept { canonical: canonical.clone(), id, changed });
        Ok((canonical, id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Kept>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Canonicalises `path` and checks it is an executable regular file.
fn check(path: &Path) -> Result<(PathBuf, FileId), ResolveError> {
    check_changed(path).map(|(canonical, id, _)| (canonical, id))
}

/// [`check`], with the file's change time as its `stat` read it (before `access`: a change in
/// between shows as a later change time, so a kept entry is checked again).
fn check_changed(path: &Path) -> Result<(PathBuf, FileId, Changed), ResolveError> {
    let canonical = match fs::canonicalize(path) {
        Ok(canonical) => canonical,
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            return Err(ResolveError::NotExecutable(path.to_owned()));
        }
        Err(_) => return Err(ResolveError::NotFound),
    };
    let (id, changed) = match fs::metadata(&canonical) {
        Ok(meta) if meta.is_file() => ((meta.dev(), meta.ino()), changed(&meta)),
        _ => return Err(ResolveError::NotExecutable(canonical)),
    };
    if nix::unistd::access(&canonical, AccessFlags::X_OK).is_err() {
        return Err(ResolveError::NotExecutable(canonical));
    }
    Ok((canonical, id, changed))
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
    fn a_kept_resolution_holds_while_its_path_names_the_same_file() {
        let (_guard, dir) = bin_dir();
        let (first, second, link) = (dir.join("first"), dir.join("second"), dir.join("link"));
        make(&first, 0o755);
        make(&second, 0o755);
        let hard = dir.join("hard");
        fs::hard_link(&first, &hard).unwrap();
        symlink(&first, &link).unwrap();
        let cache = ResolveCache::default();
        let (path, id) = cache.resolve_id(link.as_os_str(), &[]).unwrap();
        assert_eq!((path, cache.len()), (first.clone(), 1));

        // Another name of the same file, unchanged: the kept resolution is used (the file runs
        // under the name it was allowed by), where resolving afresh names the hard link.
        fs::remove_file(&link).unwrap();
        symlink(&hard, &link).unwrap();
        assert_eq!(resolve(link.as_os_str(), &[]), Ok(hard.clone()));
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((first.clone(), id)));

        // The kept canonical path replaced by another file while the link still names the old
        // one (through the hard link): resolved afresh, never the new file under the old identity.
        let replacement = dir.join("replacement");
        make(&replacement, 0o755);
        fs::rename(&replacement, &first).unwrap();
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((hard.clone(), id)));

        // Re-pointed at another file: resolved afresh.
        fs::remove_file(&link).unwrap();
        symlink(&second, &link).unwrap();
        let (path, second_id) = cache.resolve_id(link.as_os_str(), &[]).unwrap();
        assert_eq!(path, second);
        assert_ne!(second_id, id);

        // The program replaced by a new file, as a package manager does: the new file's identity.
        let new = dir.join("new");
        make(&new, 0o755);
        fs::rename(&new, &second).unwrap();
        let (path, replaced_id) = cache.resolve_id(link.as_os_str(), &[]).unwrap();
        assert_eq!(path, second);
        assert_ne!(replaced_id, second_id);

        // No longer executable, then gone: seen at once.
        fs::set_permissions(&second, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Err(ResolveError::NotExecutable(second.clone())));
        fs::remove_file(&second).unwrap();
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Err(ResolveError::NotFound));
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn a_kept_resolution_is_checked_again_once_its_file_changes() {
        let (_guard, dir) = bin_dir();
        let (tool, link) = (dir.join("tool"), dir.join("link"));
        make(&tool, 0o755);
        symlink(&tool, &link).unwrap();
        let cache = ResolveCache::default();
        let (_, id) = cache.resolve_id(link.as_os_str(), &[]).unwrap();

        // A new name of the file changes its link count, so its change time: resolved afresh,
        // the request names the new name's target again.
        let hard = dir.join("hard");
        fs::hard_link(&tool, &hard).unwrap();
        fs::remove_file(&link).unwrap();
        symlink(&hard, &link).unwrap();
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((hard.clone(), id)));

        // Its mode changed at once after a kept use, then back: each is seen.
        for round in 0..20 {
            fs::set_permissions(&hard, fs::Permissions::from_mode(0o644)).unwrap();
            let refused = cache.resolve_id(link.as_os_str(), &[]);
            assert_eq!(refused, Err(ResolveError::NotExecutable(hard.clone())), "round {round}");
            fs::set_permissions(&hard, fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((hard.clone(), id)), "round {round}");
            assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((hard.clone(), id)), "round {round}");
        }
    }

    /// An ACL is an extended attribute: setting one (or any other) moves the file's change time,
    /// so a kept resolution is checked again. Seen here through what only a fresh resolution
    /// does: a link re-pointed at another name of the same file is then followed to that name.
    #[test]
    fn a_kept_resolution_is_checked_again_once_its_extended_attributes_change() {
        let (_guard, dir) = bin_dir();
        let (tool, hard, link) = (dir.join("tool"), dir.join("hard"), dir.join("link"));
        make(&tool, 0o755);
        fs::hard_link(&tool, &hard).unwrap();
        symlink(&tool, &link).unwrap();
        let cache = ResolveCache::default();
        let (_, id) = cache.resolve_id(link.as_os_str(), &[]).unwrap();
        fs::remove_file(&link).unwrap();
        symlink(&hard, &link).unwrap();
        assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((tool.clone(), id)), "kept while unchanged");

        // The link names `hard`; the kept resolution, `tool`. Each round changes an attribute
        // (through either name: it is one file), then the link names the other name again.
        let (mut kept, mut named) = (tool.clone(), hard.clone());
        for round in 0..4_u8 {
            // Set by another process, as a user's `setfattr` or `setfacl` would be.
            let set = std::process::Command::new("/usr/bin/python3")
                .args(["-c", "import os, sys; os.setxattr(sys.argv[1], 'user.wrt-test', sys.argv[2].encode())"])
                .arg(&named)
                .arg(round.to_string())
                .output()
                .unwrap();
            if String::from_utf8_lossy(&set.stderr).contains("Operation not supported") {
                eprintln!("SKIPPED: {} has no user extended attributes", dir.display());
                return;
            }
            assert!(set.status.success(), "setxattr: {}", String::from_utf8_lossy(&set.stderr));
            assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((named.clone(), id)), "round {round}");
            std::mem::swap(&mut kept, &mut named);
            fs::remove_file(&link).unwrap();
            symlink(&named, &link).unwrap();
            assert_eq!(cache.resolve_id(link.as_os_str(), &[]), Ok((kept.clone(), id)), "round {round}: kept");
        }
    }

    #[test]
    fn a_program_that_appears_earlier_on_the_search_path_wins_at_once() {
        let (_g1, first) = bin_dir();
        let (_g2, second) = bin_dir();
        make(&second.join("tool"), 0o755);
        let cache = ResolveCache::default();
        let search = [first.clone(), second.clone()];
        assert_eq!(cache.resolve_id(OsStr::new("tool"), &search).map(|(path, _)| path), Ok(second.join("tool")));
        make(&first.join("tool"), 0o755);
        assert_eq!(cache.resolve_id(OsStr::new("tool"), &search).map(|(path, _)| path), Ok(first.join("tool")));
    }

    #[test]
    fn a_cache_answers_as_resolving_does_for_paths_that_name_nothing_runnable() {
        let (_guard, dir) = bin_dir();
        make(&dir.join("file"), 0o755);
        make(&dir.join("plain"), 0o644);
        symlink(dir.join("missing"), dir.join("dangling")).unwrap();
        symlink(dir.join("loop"), dir.join("loop")).unwrap();
        let cache = ResolveCache::default();
        for name in ["missing", "dangling", "file/below", "loop", "plain", "."] {
            let path = dir.join(name);
            assert_eq!(cache.resolve_id(path.as_os_str(), &[]), resolve_id(path.as_os_str(), &[]), "{name}");
        }
        assert_eq!(cache.len(), 0, "nothing that failed is kept");
        assert_eq!(
            cache.resolve_id(OsStr::new("file"), &[dir.join("missing"), dir.clone()]).map(|(p, _)| p),
            Ok(dir.join("file"))
        );
    }

    #[test]
    fn a_cache_keeps_at_most_its_bound_of_paths() {
        let (_guard, dir) = bin_dir();
        make(&dir.join("real"), 0o755);
        let cache = ResolveCache::default();
        for i in 0..=ResolveCache::MAX_ENTRIES * 2 {
            let link = dir.join(format!("link{i}"));
            symlink(dir.join("real"), &link).unwrap();
            assert_eq!(cache.resolve_id(link.as_os_str(), &[]).map(|(path, _)| path), Ok(dir.join("real")));
            assert!(cache.len() <= ResolveCache::MAX_ENTRIES, "{}", cache.len());
        }
    }

    #[test]
    fn directories_are_not_executable() {
        let (_guard, dir) = bin_dir();
        assert_eq!(resolve(dir.as_os_str(), &[]), Err(ResolveError::NotExecutable(dir.clone())));
        assert_eq!(resolve(dir.join("missing").as_os_str(), &[]), Err(ResolveError::NotFound));
    }
}

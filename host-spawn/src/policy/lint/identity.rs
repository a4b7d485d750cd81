//! Recognising an allowed program by the file it resolves to, not only by its name: an
//! alternatives link or symlink (`editor` → `vim.basic`), a hard link (`perl5.36.0` of
//! `perl`), or a copy of a known program under another name (bash copied to `/opt/bin/tool`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::programs::{Family, family_named};

/// Where Debian installs programs, searched besides the policy's own search path.
const STANDARD_DIRS: &[&str] = &["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// How a rule's program was recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Recognised {
    /// By the name it is written as, or the name of the file it resolves to.
    Name,
    /// As a hard link of the known program at this path.
    HardLink(PathBuf),
    /// As a byte-for-byte copy of the known program at this path.
    Copy(PathBuf),
}

/// A known program found on this host.
struct Known {
    path: PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    family: &'static Family,
}

/// The known programs installed on this host, found once per check.
pub(super) struct KnownFiles {
    files: Vec<Known>,
}

impl KnownFiles {
    /// Looks every known name up in `search_path` and the standard directories.
    pub(super) fn find(search_path: &[PathBuf]) -> Self {
        let mut files: Vec<Known> = Vec::new();
        let dirs: Vec<&Path> =
            search_path.iter().map(PathBuf::as_path).chain(STANDARD_DIRS.iter().map(Path::new)).collect();
        for family in super::programs::FAMILIES {
            for name in family.names {
                for dir in &dirs {
                    let Ok(path) = fs::canonicalize(dir.join(name)) else { continue };
                    let Ok(meta) = fs::metadata(&path) else { continue };
                    if !meta.is_file() || files.iter().any(|known| known.dev == meta.dev() && known.ino == meta.ino()) {
                        continue;
                    }
                    files.push(Known { path, dev: meta.dev(), ino: meta.ino(), len: meta.len(), family });
                }
            }
        }
        Self { files }
    }

    /// The family of the program a rule written as `written` resolves to (`canonical`), and
    /// how it was recognised.
    pub(super) fn family_of(&self, written: &Path, canonical: &Path) -> Option<(&'static Family, Recognised)> {
        let name = |path: &Path| path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_owned();
        if let Some(family) = family_named(&name(written)).or_else(|| family_named(&name(canonical))) {
            return Some((family, Recognised::Name));
        }
        let meta = fs::metadata(canonical).ok()?;
        if let Some(known) = self.files.iter().find(|k| k.dev == meta.dev() && k.ino == meta.ino()) {
            return Some((known.family, Recognised::HardLink(known.path.clone())));
        }
        let same_size: Vec<&Known> = self.files.iter().filter(|k| k.len == meta.len()).collect();
        if same_size.is_empty() {
            return None;
        }
        let contents = fs::read(canonical).ok()?;
        same_size
            .into_iter()
            .find(|known| fs::read(&known.path).is_ok_and(|other| other == contents))
            .map(|known| (known.family, Recognised::Copy(known.path.clone())))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_renamed_copy_of_a_shell_is_still_a_shell() {
        let bash = fs::canonicalize("/bin/bash").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("report-tool");
        fs::copy(&bash, &copy).unwrap();
        fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
        let known = KnownFiles::find(&[]);
        let (family, how) = known.family_of(&copy, &copy).expect("recognised");
        assert!(family.names.contains(&"bash"));
        assert!(matches!(how, Recognised::Copy(path) if path == bash));
        let other = dir.path().join("other-tool");
        fs::write(&other, b"#!/bin/true\n").unwrap();
        assert!(known.family_of(&other, &other).is_none());
    }

    #[test]
    fn a_hard_link_is_recognised_by_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let sed = fs::canonicalize("/bin/sed").unwrap();
        let link = dir.path().join("stream-tool");
        // A hard link needs the same file system; a copy stands in for it elsewhere.
        if fs::hard_link(&sed, &link).is_err() {
            fs::copy(&sed, &link).unwrap();
        }
        let known = KnownFiles::find(&[]);
        let (family, how) = known.family_of(&link, &link).expect("recognised");
        assert!(family.names.contains(&"sed"));
        assert_ne!(how, Recognised::Name);
    }
}

//! What the guest's preopens reach, by file identity: whether a file or directory the host
//! keeps (the compile cache, the audit log, the policy file, an allowed program, a search
//! directory) can be written through a read-write preopen, and whether a preopen exposes a
//! kernel pseudo-filesystem (`/proc`, `/sys`, devices).
//!
//! Paths are never compared as strings. A preopen's directory, and every mount point below it
//! (wasmtime-wasi follows mount points inside a preopen), is a *writable root* known by its
//! device and inode. A kept path is reached when a directory the kernel passes through to
//! reach it (each hop of each symlink, up to `/`), or the file itself, is one of those roots:
//! so a bind mount of the directory, a symlink to it or a parent of it count as the directory.
//! A kept file with more than one hard link that the host user may write, on the device of a
//! writable root, may have a link inside that root: the writable roots are then searched, once
//! per run and only then, for links of such files (every entry, without following symlinks or
//! leaving the root's device; a mount below is a root of its own). A link found inside counts
//! as reached; so does the file when the search cannot finish (more than [`Reach::MAX_SEARCHED`]
//! entries, or a directory wrt cannot read). As root, `git` (whose file has a hard link for
//! each of its helper programs) can so be allowed beside a `--dir` on the same file system.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use nix::sys::statfs::FsType;

use crate::error::Reach;
use crate::preopen::{DirAccess, Preopen};

/// A file's identity: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(path: &Path) -> Option<Self> {
        std::fs::metadata(path).ok().map(|m| Self { dev: m.dev(), ino: m.ino() })
    }
}

/// A directory (or file) the guest can write: a read-write preopen, or a mount point below one.
struct Root<'a> {
    id: FileId,
    dir: PathBuf,
    preopen: &'a Preopen,
}

/// The writable roots of a run's preopens.
pub(crate) struct WritableRoots<'a> {
    roots: Vec<Root<'a>>,
    /// Every file with more than one hard link in the roots, and the root holding it, once
    /// searched; `None` when the search could not finish.
    links: OnceLock<Option<HashMap<FileId, usize>>>,
}

impl<'a> WritableRoots<'a> {
    /// The read-write preopens among `preopens` and the mount points below them. A preopen
    /// that cannot be found is left out: it fails when it is opened.
    pub(crate) fn of(preopens: &'a [Preopen], mounts: &[Mount]) -> Self {
        let mut roots = Vec::new();
        for preopen in preopens.iter().filter(|p| p.access == DirAccess::ReadWrite) {
            let Some(id) = FileId::of(&preopen.host) else { continue };
            roots.push(Root { id, dir: preopen.host.clone(), preopen });
            let Ok(canonical) = std::fs::canonicalize(&preopen.host) else { continue };
            for mount in mounts_below(mounts, &canonical) {
                if let Some(id) = FileId::of(&mount.point) {
                    roots.push(Root { id, dir: mount.point.clone(), preopen });
                }
            }
        }
        Self { roots, links: OnceLock::new() }
    }

    /// Whether there is no writable root at all (so nothing is reached).
    pub(crate) fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The read-write preopen through which the guest reaches `path` (absolute, or relative
    /// to the working directory; it need not exist: what would hold it is checked), and how.
    pub(crate) fn reaching(&self, path: &Path) -> Option<(&'a Preopen, Reach)> {
        if self.roots.is_empty() {
            return None;
        }
        let followed = followed(path);
        for step in &followed {
            let Some(id) = FileId::of(step) else { continue };
            if let Some(root) = self.roots.iter().find(|root| root.id == id) {
                return Some((root.preopen, Reach::Inside));
            }
        }
        // The file itself: another hard link of it may lie in any writable root on its device.
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file() && m.nlink() > 1)?;
        if nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err() {
            return None;
        }
        let root = self.roots.iter().find(|root| root.id.dev == meta.dev())?;
        let links = self.links.get_or_init(|| links_in(&self.roots, Reach::MAX_SEARCHED));
        match links {
            Some(links) => {
                let &holder = links.get(&FileId { dev: meta.dev(), ino: meta.ino() })?;
                Some((self.roots[holder].preopen, Reach::LinkInside))
            }
            None => Some((root.preopen, Reach::Linked(meta.nlink()))),
        }
    }
}

/// Every file with more than one hard link in `roots`, with the index of the root that holds
/// it; `None` after `limit` entries, or at a directory that cannot be read.
fn links_in(roots: &[Root<'_>], limit: usize) -> Option<HashMap<FileId, usize>> {
    let mut links = HashMap::new();
    let mut read = 0usize;
    for (index, root) in roots.iter().enumerate() {
        let mut todo = vec![root.dir.clone()];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).ok()? {
                read += 1;
                if read > limit {
                    return None;
                }
                // The entry itself, not what a symlink leads to.
                let entry = entry.ok()?;
                let meta = entry.metadata().ok()?;
                if meta.dev() != root.id.dev {
                    continue;
                }
                if meta.is_dir() {
                    todo.push(entry.path());
                } else if meta.is_file() && meta.nlink() > 1 {
                    links.entry(FileId { dev: meta.dev(), ino: meta.ino() }).or_insert(index);
                }
            }
        }
    }
    Some(links)
}

/// Every existing path the kernel passes through to reach `path`: `/`, each directory on the
/// way (each symlink's own directories, then its target's), and `path` itself. Stops at the
/// first component that does not exist, so a path not yet created is judged by the directory
/// that would hold it.
fn followed(path: &Path) -> Vec<PathBuf> {
    /// As the kernel's `MAXSYMLINKS`.
    const MAX_HOPS: usize = 40;
    let absolute = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_owned(),
    };
    let mut todo: VecDeque<OsString> = names(&absolute);
    let mut current = PathBuf::from("/");
    let mut seen = vec![current.clone()];
    let mut hops = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            current.pop();
            seen.push(current.clone());
            continue;
        }
        let next = current.join(&name);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let Ok(target) = std::fs::read_link(&next) else { break };
                hops += 1;
                if hops > MAX_HOPS {
                    break;
                }
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                for name in names(&target).into_iter().rev() {
                    todo.push_front(name);
                }
            }
            Ok(_) => {
                current = next;
                seen.push(current.clone());
            }
            Err(_) => break,
        }
    }
    seen
}

/// The names of `path`'s components, `..` kept and `.` dropped.
fn names(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// One line of `/proc/self/mountinfo`: where a file system is mounted, and its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    pub(crate) point: PathBuf,
    pub(crate) fs_type: String,
}

/// The mounts of this process's mount namespace, in mount order; none if `/proc` is not
/// mounted (then only `statfs` finds pseudo-filesystems).
pub(crate) fn mounts() -> Vec<Mount> {
    std::fs::read("/proc/self/mountinfo").map(|text| parse_mountinfo(&text)).unwrap_or_default()
}

fn parse_mountinfo(text: &[u8]) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        // id parent major:minor root point options [optional…] - type source super-options
        let Some(dash) = fields.iter().position(|f| *f == b"-") else { continue };
        let (Some(point), Some(fs_type)) = (fields.get(4), fields.get(dash + 1)) else { continue };
        mounts.push(Mount {
            point: PathBuf::from(OsString::from_vec(unescape(point))),
            fs_type: String::from_utf8_lossy(fs_type).into_owned(),
        });
    }
    mounts
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal =
            field.get(i + 1..i + 4).filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// The mounts strictly below the canonical directory `dir`.
fn mounts_below<'m>(mounts: &'m [Mount], dir: &'m Path) -> impl Iterator<Item = &'m Mount> {
    mounts.iter().filter(move |m| m.point != dir && m.point.starts_with(dir))
}

/// Kernel pseudo-filesystems: what a guest must not see without being told so. `statfs`
/// magic numbers, and the types `/proc/self/mountinfo` names.
const PSEUDO_MAGIC: [(FsType, &str); 10] = [
    (FsType(0x9fa0), "proc"),
    (FsType(0x6265_6572), "sysfs"),
    (FsType(0x1cd1), "devpts"),
    (FsType(0x2762_3e7e), "cgroup"),
    (FsType(0x6367_7270), "cgroup2"),
    (FsType(0x6462_6720), "debugfs"),
    (FsType(0x7472_6163), "tracefs"),
    (FsType(0x7363_6673), "securityfs"),
    (FsType(0xcafe_4a11), "bpf"),
    (FsType(0x6165_676c), "pstore"),
];
const PSEUDO_TYPES: [&str; 16] = [
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "bpf",
    "pstore",
    "efivarfs",
    "configfs",
    "fusectl",
    "binfmt_misc",
    "mqueue",
];

/// A pseudo-filesystem a preopen exposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pseudo {
    /// The file system's type.
    pub(crate) fs_type: String,
    /// Where it is mounted, if known (`statfs` of a preopen inside it knows only the type).
    pub(crate) point: PathBuf,
    /// Whether the preopen contains the mount (rather than lying inside it).
    pub(crate) contains: bool,
}

/// The first pseudo-filesystem the preopen `dir` is on, lies inside or contains.
pub(crate) fn pseudo_fs(dir: &Path, mounts: &[Mount]) -> Option<Pseudo> {
    let canonical = std::fs::canonicalize(dir).ok()?;
    if let Ok(stat) = nix::sys::statfs::statfs(&canonical)
        && let Some((_, name)) = PSEUDO_MAGIC.iter().find(|(magic, _)| *magic == stat.filesystem_type())
    {
        let point = holding(mounts, &canonical).map_or_else(|| canonical.clone(), |m| m.point.clone());
        return Some(Pseudo { fs_type: (*name).to_owned(), point, contains: false });
    }
    if let Some(mount) = holding(mounts, &canonical).filter(|m| PSEUDO_TYPES.contains(&m.fs_type.as_str())) {
        return Some(Pseudo { fs_type: mount.fs_type.clone(), point: mount.point.clone(), contains: false });
    }
    mounts_below(mounts, &canonical).find(|m| PSEUDO_TYPES.contains(&m.fs_type.as_str())).map(|m| Pseudo {
        fs_type: m.fs_type.clone(),
        point: m.point.clone(),
        contains: true,
    })
}

/// The mount that holds the canonical path `path`: the last mounted of those whose point is
/// a prefix of it.
fn holding<'m>(mounts: &'m [Mount], path: &Path) -> Option<&'m Mount> {
    // `max_by_key` returns the last of equal keys: the mount on top.
    mounts.iter().filter(|m| path.starts_with(&m.point)).max_by_key(|m| m.point.as_os_str().as_bytes().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_for_links_finds_them_deep_and_stops_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        for i in 0..3 {
            std::fs::write(dir.path().join(format!("a/b/{i}")), b"").unwrap();
        }
        std::fs::hard_link(dir.path().join("a/b/0"), dir.path().join("a/b/link")).unwrap();
        std::os::unix::fs::symlink("/usr", dir.path().join("a/usr")).unwrap();
        let preopen = Preopen { host: dir.path().into(), guest: "/d".into(), access: DirAccess::ReadWrite };
        let roots = WritableRoots::of(std::slice::from_ref(&preopen), &[]);
        // a, a/b, a/usr (not followed), a/b/0..2, a/b/link: seven entries.
        let links = links_in(&roots.roots, 7).expect("seven entries searched");
        let zero = std::fs::metadata(dir.path().join("a/b/0")).unwrap();
        assert_eq!(links.len(), 1);
        assert!(links.contains_key(&FileId { dev: zero.dev(), ino: zero.ino() }));
        assert!(links_in(&roots.roots, 6).is_none(), "past the limit");
    }

    #[test]
    fn mountinfo_lines_parse_with_escapes_and_optional_fields() {
        let text = b"22 1 0:21 / /proc rw,nosuid shared:5 - proc proc rw\n\
            30 22 0:5 / /tmp/a\\040b rw master:1 shared:2 - tmpfs tmpfs rw\n\
            garbage\n";
        assert_eq!(
            parse_mountinfo(text),
            [
                Mount { point: "/proc".into(), fs_type: "proc".into() },
                Mount { point: "/tmp/a b".into(), fs_type: "tmpfs".into() },
            ]
        );
    }

    #[test]
    fn followed_takes_every_hop_of_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(dir.join("a/real")).unwrap();
        std::fs::create_dir(dir.join("b")).unwrap();
        std::os::unix::fs::symlink(dir.join("a/real"), dir.join("b/link")).unwrap();
        let seen = followed(&dir.join("b/link/missing/file"));
        assert!(seen.contains(&dir.join("b")), "{seen:?}");
        assert!(seen.contains(&dir.join("a/real")), "{seen:?}");
        assert!(!seen.contains(&dir.join("b/link/missing")), "{seen:?}");
        assert_eq!(seen[0], Path::new("/"));
    }
}

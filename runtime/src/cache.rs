//! The on-disk cache of compiled guests, so that a second run of the same module skips
//! compilation.
//!
//! A compiled module is stored as `<dir>/<key>.cwasm`, exactly what wasmtime serialized, so
//! that a load copies it once, in the kernel, into sealed memory and maps that, instead of
//! reading and decompressing it: for a 18 MB Python component, decompression was a third of a
//! warm start.
//! The key is a hash of the module's bytes together with the engine's compatibility hash
//! (wasmtime version, target and every setting that changes generated code, such as fuel or
//! epoch checks). Entries are written to a temporary file and renamed into place, so a reader
//! never sees a partial file, and an entry is never rewritten in place; a file that fails a
//! check or that wasmtime refuses to load is compiled again and replaced.
//!
//! The directory holds at most its limit ([`DEFAULT_CACHE_LIMIT`], or
//! `RuntimeBuilder::cache_limit`): after each store, the entries used longest ago (a load
//! marks an entry used by its modification time) are removed until the rest fit.
//!
//! An entry is native code this process will run, so the cache is part of what wrt trusts:
//!
//! - The directory is opened once per load (`O_DIRECTORY | O_NOFOLLOW`) and checked on that
//!   descriptor: owned by this user and writable by nobody else, or it is not used at all.
//!   wrt creates it `0700` and its entries `0600`, whatever the umask.
//! - Every entry carries a keyed BLAKE3 MAC of its name and its bytes, in its extended
//!   attribute [`ENTRY_MAC_ATTR`]. The 32-byte key is the user extended attribute
//!   [`CACHE_KEY_ATTR`] of the directory, made from `getrandom` when the directory has none.
//!   WASI (preview 1 and 2) has no call that reads or sets extended attributes, so a guest
//!   given the directory, or its parent, can neither forge an entry nor learn the key; a
//!   directory it puts in the cache's place has no key, and gets a new one.
//! - Entries are opened relative to the checked descriptor with `O_NOFOLLOW`, must be regular
//!   files of this user writable by nobody else, and are copied into a sealed `memfd`
//!   (`sys::sealed`) that nobody can write, shrink or grow: the MAC is checked on that copy, and
//!   wasmtime maps that copy. A process that writes an entry's file in place, or truncates it,
//!   after the check or while the code runs changes nothing this process runs and cannot crash
//!   it. An entry that fails any check is compiled again and replaced.
//! - The key never reaches a guest or a confined child: WASI has no call for extended
//!   attributes, and the child sandbox's seccomp filter refuses every extended attribute call
//!   (`wrt-host-spawn`'s `sandbox::filter`). A child run with the child sandbox off runs as
//!   the user, and can read the key like any other file of the user's.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fchmod, fstat, futimens};
use nix::sys::time::TimeSpec;
use nix::unistd::{Uid, UnlinkatFlags, unlinkat};
use wasmtime::{Engine, Module};

use crate::sys::compiled::{Compiled, Verified, deserialize_cached};

/// Where compiled modules are cached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheMode {
    /// The user's cache directory: `$XDG_CACHE_HOME/wrt/modules`, or
    /// `$HOME/.cache/wrt/modules`. What the `wrt` CLI uses.
    User,
    /// This directory.
    Dir(PathBuf),
    /// No cache: compile every time. The default of a library, which must not write to the
    /// user's home unasked.
    #[default]
    Disabled,
}

impl CacheMode {
    /// What the cache directory holds now (nothing if it does not exist).
    ///
    /// # Errors
    ///
    /// The directory cannot be listed.
    pub fn usage(&self) -> std::io::Result<CacheUsage> {
        let mut usage = CacheUsage::default();
        for path in self.entries()? {
            usage.entries += 1;
            usage.bytes += std::fs::metadata(&path).map_or(0, |m| m.len());
        }
        Ok(usage)
    }

    /// Removes every cached module (and every temporary file a crashed writer left), and
    /// returns what was removed. Files wrt did not write stay.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed, or an entry cannot be removed.
    pub fn clean(&self) -> std::io::Result<CacheUsage> {
        let mut removed = CacheUsage::default();
        for path in self.entries()? {
            let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    removed.entries += 1;
                    removed.bytes += bytes;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }

    /// The files of this cache: entries of this and earlier versions, and temporary files.
    fn entries(&self) -> std::io::Result<Vec<PathBuf>> {
        let Some(dir) = self.dir() else { return Ok(Vec::new()) };
        let listing = match std::fs::read_dir(&dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut paths = Vec::new();
        for entry in listing {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let ours = is_entry(name) || name.starts_with(".tmp-");
            if ours && entry.file_type()?.is_file() {
                paths.push(entry.path());
            }
        }
        Ok(paths)
    }

    /// The directory this mode caches in, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            CacheMode::User => {
                let base = std::env::var_os("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
                Some(base.join("wrt").join("modules"))
            }
            CacheMode::Dir(dir) => Some(dir.clone()),
            CacheMode::Disabled => None,
        }
    }
}

/// What a cache directory holds, or what [`CacheMode::clean`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheUsage {
    /// Cached modules (and leftover temporary files).
    pub entries: u64,
    /// Their bytes on disk.
    pub bytes: u64,
}

/// Why a cache directory is not used. The run goes on without the cache: it compiles the
/// module and stores nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The directory or one of its parents could not be created.
    #[error("failed to create cache directory `{}`", dir.display())]
    Create {
        /// The cache directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The directory could not be opened: it is a symbolic link, not a directory, or not
    /// readable.
    #[error("failed to open cache directory `{}`", dir.display())]
    Open {
        /// The cache directory.
        dir: PathBuf,
        /// Why (`ELOOP` for a symbolic link).
        #[source]
        source: std::io::Error,
    },
    /// The directory belongs to another user.
    #[error("cache directory `{}` belongs to uid {owner}, not to this user (uid {uid})", dir.display())]
    Foreign {
        /// The cache directory.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// The effective user id of this process.
        uid: u32,
    },
    /// Users other than its owner may write to the directory.
    #[error("cache directory `{}` is writable by group or others (mode {mode:03o}): `chmod go-w` it", dir.display())]
    Loose {
        /// The cache directory.
        dir: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The directory's file system has no user extended attributes, where the key that
    /// authenticates entries is kept.
    #[error("cache directory `{}` is on a file system without user extended attributes, which hold the cache's key", dir.display())]
    NoAttributes {
        /// The cache directory.
        dir: PathBuf,
    },
    /// The key could not be read, made or stored.
    #[error("failed to get the key of cache directory `{}`", dir.display())]
    Key {
        /// The cache directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The extended attribute of the cache directory that holds the key of its entries' MACs.
pub const CACHE_KEY_ATTR: &str = "user.wrt.cache-key";
const CACHE_KEY_ATTR_C: &std::ffi::CStr = c"user.wrt.cache-key";

/// The extended attribute of an entry that holds its MAC.
pub const ENTRY_MAC_ATTR: &str = "user.wrt.mac";
const ENTRY_MAC_ATTR_C: &std::ffi::CStr = c"user.wrt.mac";

/// What an entry's file name ends with, after its key.
const ENTRY_SUFFIX: &str = ".cwasm";

/// Whether `name` is an entry's file name: a 64-digit hexadecimal key and [`ENTRY_SUFFIX`], or
/// the suffix of the compressed entries of earlier versions (listed, evicted and cleaned, never
/// loaded).
fn is_entry(name: &str) -> bool {
    let key = name.strip_suffix(ENTRY_SUFFIX).or_else(|| name.strip_suffix(".cwasm.zst"));
    key.is_some_and(|k| k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// How much a cache directory holds by default before the entries used longest ago are
/// removed: 1 GiB.
pub const DEFAULT_CACHE_LIMIT: u64 = 1 << 30;

/// The tag every entry's MAC and key start with: the format of entries.
const MAC_TAG: &[u8] = b"wrt-module-cache-v4\0";

/// Bytes of an entry's MAC.
const MAC_LEN: usize = blake3::OUT_LEN;

/// Feeds `Hash` output into BLAKE3.
struct Blake3Hasher<'a>(&'a mut blake3::Hasher);

impl Hasher for Blake3Hasher<'_> {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The cache key of `bytes` compiled by `engine`: not a secret, only a name (BLAKE3, about
/// five times faster than the SHA-256 it replaced, which took a twentieth of a warm start).
pub(crate) fn key(engine: &Engine, bytes: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(MAC_TAG);
    engine.precompile_compatibility_hash().hash(&mut Blake3Hasher(&mut hasher));
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
    hasher.finalize().to_hex().to_string()
}

/// How [`load_or_compile`] loads an entry it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// Mapped from its sealed copy, whose descriptor stays open while the module lives: for
    /// guests, loaded before they run.
    Map,
    /// Read into memory, leaving no descriptor open: for code loaded while a guest runs.
    Copy,
}

/// A module compiled from WebAssembly text when first needed, shared by the stores of a
/// runtime, and loaded from the runtime's compile cache like a guest if it has one. Loaded while
/// a guest runs, it is read rather than mapped, so that no descriptor appears in the middle of a
/// run; and not before, since most guests never need it. (WASI's trampoline, `wasi::original`:
/// compiling it took about 11 ms of CPU, the difference between a `wrt run` and a `wasmtime
/// run` of a program that opens files; a hello world writes only to its stdout, which needs no
/// trampoline.)
#[derive(Debug, Default)]
pub(crate) struct LazyModule {
    module: OnceLock<Module>,
    /// The runtime's compile cache and its size limit, if it has one.
    cache: Option<(PathBuf, u64)>,
}

impl LazyModule {
    /// A module compiled through `cache` (directory and size limit), if given.
    pub(crate) fn new(cache: Option<(PathBuf, u64)>) -> Self {
        Self { module: OnceLock::new(), cache }
    }

    /// The compiled module, for `engine`: the text `text` returns, compiled on the first call.
    pub(crate) fn module(&self, engine: &Engine, text: impl FnOnce() -> String) -> wasmtime::Result<Module> {
        if let Some(module) = self.module.get() {
            return Ok(module.clone());
        }
        let text = text();
        let compile = || Module::new(engine, &text).map(Compiled::Module);
        let compiled = match &self.cache {
            // A cache that cannot be used is the guest's load to report; this one compiles.
            Some((dir, limit)) => load_or_compile(engine, dir, *limit, text.as_bytes(), Load::Copy, compile, drop)?.0,
            None => compile()?,
        };
        let Compiled::Module(module) = compiled else {
            return Err(wasmtime::Error::msg("the module compiled to a component"));
        };
        Ok(self.module.get_or_init(|| module).clone())
    }
}

/// Loads `bytes` compiled from `dir`, or compiles them with `compile` and stores the result,
/// then removes the entries used longest ago past `limit` bytes. Returns the module (or
/// component) and whether it came from the cache. A loaded entry is mapped (and its descriptor
/// kept open as long as the module lives) or, with `Load::Copy`, read into memory. A directory that cannot be used is given to
/// `unusable` and the module is compiled; failing to write the cache is not an error: the run
/// goes on with the freshly compiled code.
pub(crate) fn load_or_compile(
    engine: &Engine,
    dir: &Path,
    limit: u64,
    bytes: &[u8],
    load: Load,
    compile: impl FnOnce() -> wasmtime::Result<Compiled>,
    unusable: impl FnOnce(CacheError),
) -> wasmtime::Result<(Compiled, bool)> {
    let cache = match CacheDir::open(dir) {
        Ok(cache) => cache,
        Err(err) => {
            unusable(err);
            return Ok((compile()?, false));
        }
    };
    let name = format!("{}{ENTRY_SUFFIX}", key(engine, bytes));
    // At most this many bytes are mapped: far more than code compiled from `bytes` takes, and
    // a planted file of any size is never read whole.
    let most = u64::try_from(bytes.len()).unwrap_or(u64::MAX).saturating_mul(MAX_RATIO).saturating_add(64 << 20);
    if let Some(entry) = cache.read(&name, most)
        && let Ok(module) = deserialize_cached(engine, &entry, load == Load::Map)
    {
        return Ok((module, true));
    }
    let module = compile()?;
    if let Ok(serialized) = module.serialize()
        && cache.store(&name, &serialized).is_ok()
    {
        cache.evict(limit, &name);
    }
    Ok((module, false))
}

/// A cache directory, open and checked, and the key of its entries.
struct CacheDir {
    fd: OwnedFd,
    key: [u8; 32],
    uid: Uid,
}

impl CacheDir {
    /// Opens `dir`, creating it (and its parents) `0700` if missing, and checks it: owned by
    /// this user, writable by nobody else, with a key (made and stored if it has none).
    fn open(dir: &Path) -> Result<CacheDir, CacheError> {
        use std::os::unix::fs::DirBuilderExt;
        let create = |source| CacheError::Create { dir: dir.to_owned(), source };
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(create)?;
        }
        let created = match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(create(e)),
        };
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(dir, flags, Mode::empty())
            .map_err(|e| CacheError::Open { dir: dir.to_owned(), source: e.into() })?;
        let uid = Uid::effective();
        let stat = fstat(&fd).map_err(|e| CacheError::Open { dir: dir.to_owned(), source: e.into() })?;
        if stat.st_uid != uid.as_raw() {
            return Err(CacheError::Foreign { dir: dir.to_owned(), owner: stat.st_uid, uid: uid.as_raw() });
        }
        if created {
            // The umask may have taken bits from the owner too: the mode is set, not assumed.
            fchmod(&fd, Mode::from_bits_truncate(0o700))
                .map_err(|e| CacheError::Create { dir: dir.to_owned(), source: e.into() })?;
        } else if stat.st_mode & 0o022 != 0 {
            return Err(CacheError::Loose { dir: dir.to_owned(), mode: stat.st_mode & 0o7777 });
        }
        let key = Self::key(&fd).map_err(|e| match e {
            Errno::ENOTSUP => CacheError::NoAttributes { dir: dir.to_owned() },
            e => CacheError::Key { dir: dir.to_owned(), source: e.into() },
        })?;
        Ok(CacheDir { fd, key, uid })
    }

    /// The key in the directory's [`CACHE_KEY_ATTR`]; a new random one if it has none, or one of
    /// another length. A new key invalidates every entry already there.
    fn key(fd: &OwnedFd) -> Result<[u8; 32], Errno> {
        use crate::sys::xattr;
        let mut key = [0u8; 32];
        // Room for a longer value, to tell it from a key.
        let mut buf = [0u8; 64];
        match xattr::get(fd.as_fd(), CACHE_KEY_ATTR_C, &mut buf) {
            Ok(32) => {
                key.copy_from_slice(&buf[..32]);
                return Ok(key);
            }
            Ok(_) | Err(Errno::ERANGE | Errno::ENODATA) => {}
            Err(e) => return Err(e),
        }
        getrandom::fill(&mut key).map_err(|e| e.raw_os_error().map_or(Errno::EIO, Errno::from_raw))?;
        match xattr::set(fd.as_fd(), CACHE_KEY_ATTR_C, &key, true) {
            Ok(()) => Ok(key),
            // Another process made one meanwhile: use it (or, if it is malformed, replace it).
            Err(Errno::EEXIST) => match xattr::get(fd.as_fd(), CACHE_KEY_ATTR_C, &mut buf) {
                Ok(32) => {
                    key.copy_from_slice(&buf[..32]);
                    Ok(key)
                }
                Ok(_) | Err(Errno::ERANGE | Errno::ENODATA) => {
                    xattr::set(fd.as_fd(), CACHE_KEY_ATTR_C, &key, false).map(|()| key)
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// The MAC of entry `name` holding `bytes`.
    fn mac(&self, name: &str, bytes: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&self.key);
        mac.update(MAC_TAG).update(name.as_bytes()).update(b"\0").update(bytes);
        mac.finalize()
    }

    /// Entry `name`, open, or `None` when it is missing, is not a regular file of this user
    /// writable by nobody else, is empty or larger than `limit`, or fails its MAC. A good
    /// entry is marked used now (its modification time), for [`CacheDir::evict`].
    fn read(&self, name: &str, limit: u64) -> Option<Verified> {
        // Non-blocking: opening a FIFO planted under the entry's name must not wait for a
        // writer. It changes nothing for a regular file.
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty()).ok()?;
        let stat = fstat(&fd).ok()?;
        let size = u64::try_from(stat.st_size).ok()?;
        let regular = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFREG;
        if !regular || stat.st_uid != self.uid.as_raw() || stat.st_mode & 0o022 != 0 || size == 0 || size > limit {
            return None;
        }
        let mut mac = [0u8; MAC_LEN];
        if crate::sys::xattr::get(fd.as_fd(), ENTRY_MAC_ATTR_C, &mut mac) != Ok(MAC_LEN) {
            return None;
        }
        // The bytes checked are the bytes run: a sealed copy that nobody can change, checked
        // and then mapped, never the file, which its writers could change after the check.
        let copy = crate::sys::sealed::SealedCopy::of(fd.as_fd(), size).ok()?;
        let map = crate::sys::file_map::FileMap::new(copy.fd(), usize::try_from(size).ok()?).ok()?;
        // `Hash`'s equality takes the same time whatever bytes differ.
        if blake3::Hash::from_bytes(mac) != self.mac(name, map.bytes()) {
            return None;
        }
        let kind = map.kind();
        drop(map);
        let _ = stamp_used(&fd);
        Some(Verified::authenticated(copy, kind))
    }

    /// Writes entry `name`: a new `0600` file with its MAC, renamed over the old entry once
    /// complete.
    fn store(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        let mac = self.mac(name, bytes);
        let (tmp, file) = self.tempfile()?;
        let mut file = File::from(file);
        let result = file
            .write_all(bytes)
            .and_then(|()| Ok(crate::sys::xattr::set(file.as_fd(), ENTRY_MAC_ATTR_C, mac.as_bytes(), false)?))
            .and_then(|()| Ok(stamp_used(file.as_fd())?))
            .and_then(|()| file.sync_data())
            .and_then(|()| Ok(renameat(&self.fd, tmp.as_str(), &self.fd, name)?));
        if result.is_err() {
            let _ = unlinkat(&self.fd, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        result
    }

    /// Removes the entries used longest ago (oldest modification time first), never `keep`,
    /// until the directory's entries take at most `limit` bytes. Best effort: a file that
    /// cannot be listed or removed is left.
    fn evict(&self, limit: u64, keep: &str) {
        let Ok(listing) = std::fs::read_dir(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&self.fd)))
        else {
            return;
        };
        let mut entries: Vec<(std::time::SystemTime, u64, String)> = listing
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let meta = entry.metadata().ok()?;
                if !is_entry(&name) || !meta.is_file() {
                    return None;
                }
                Some((meta.modified().ok()?, meta.len(), name))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
        entries.sort();
        for (_, len, name) in entries {
            if total <= limit {
                break;
            }
            if name != keep && unlinkat(&self.fd, name.as_str(), UnlinkatFlags::NoRemoveDir).is_ok() {
                total -= len;
            }
        }
    }

    /// A new `0600` file in the directory with a unique name, created exclusively.
    fn tempfile(&self) -> std::io::Result<(String, OwnedFd)> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let mode = Mode::from_bits_truncate(0o600);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!(".tmp-{}-{n}", std::process::id());
            match openat(&self.fd, name.as_str(), flags, mode) {
                Ok(fd) => {
                    // The umask may have taken bits from the owner too.
                    if let Err(e) = fchmod(&fd, mode) {
                        let _ = unlinkat(&self.fd, name.as_str(), UnlinkatFlags::NoRemoveDir);
                        return Err(e.into());
                    }
                    return Ok((name, fd));
                }
                Err(Errno::EEXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Marks the entry behind `fd` as used now, for [`CacheDir::evict`] to order entries by. The
/// time is read from the clock in nanoseconds: the time the kernel stamps a write or
/// `UTIME_NOW` with may lag by a scheduler tick, so two entries used a few milliseconds apart
/// could otherwise carry the same time and be evicted in name order.
fn stamp_used(fd: impl AsFd) -> nix::Result<()> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = TimeSpec::from(now);
    futimens(fd, &now, &now)
}

/// The most compiled code may take per byte of its module, for an entry's size to be trusted:
/// a larger file is not an entry of ours, and is never mapped.
const MAX_RATIO: u64 = 64;

#[cfg(test)]
mod tests;

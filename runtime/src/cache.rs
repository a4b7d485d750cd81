//! The on-disk cache of compiled guests, so that a second run of the same module skips
//! compilation.
//!
//! A compiled module is stored zstd-compressed as `<dir>/<key>.cwasm.zst` (about a third of the
//! uncompressed size), where the key is the SHA-256 of the module's bytes together with the
//! engine's compatibility hash (wasmtime version, target and every setting that changes
//! generated code, such as fuel or epoch checks). Entries are written to a temporary file and
//! renamed into place, so a reader never sees a partial file; a file that does not decompress
//! or that wasmtime refuses to load is compiled again and replaced.
//!
//! An entry is native code this process will run, so the cache is part of what wrt trusts:
//!
//! - The directory is opened once per load (`O_DIRECTORY | O_NOFOLLOW`) and checked on that
//!   descriptor: owned by this user and writable by nobody else, or it is not used at all.
//!   wrt creates it `0700` and its entries `0600`, whatever the umask.
//! - Every entry starts with a keyed BLAKE3 MAC of its name and its compressed bytes. The
//!   32-byte key is the user extended attribute [`CACHE_KEY_ATTR`] of the directory, made from
//!   `getrandom` when the directory has none. WASI (preview 1 and 2) has no call that reads
//!   or sets extended attributes, so a guest given the directory, or its parent, can neither
//!   forge an entry nor learn the key; a directory it puts in the cache's place has no key, and
//!   gets a new one.
//! - Entries are opened relative to the checked descriptor with `O_NOFOLLOW`, must be regular
//!   files of this user writable by nobody else, and are read whole into memory, checked, and
//!   only then decompressed and handed to wasmtime. An entry that fails any check is compiled
//!   again and replaced.

use std::hash::{Hash, Hasher};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fchmod, fstat};
use nix::unistd::{Uid, UnlinkatFlags, unlinkat};
use sha2::{Digest, Sha256};
use wasmtime::Engine;

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
            let key = name.strip_suffix(".cwasm.zst").or_else(|| name.strip_suffix(".cwasm"));
            let ours = key.is_some_and(|k| k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()))
                || name.starts_with(".tmp-");
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

/// The tag every entry's MAC starts with: the format of entries.
const MAC_TAG: &[u8] = b"wrt-module-cache-v3\0";

/// Bytes of an entry's MAC, before its zstd frame.
const MAC_LEN: usize = blake3::OUT_LEN;

/// zstd's level for entries: fast to write, and decompression speed barely depends on it.
const ZSTD_LEVEL: i32 = 3;

/// Feeds `Hash` output into SHA-256.
struct ShaHasher<'a>(&'a mut Sha256);

impl Hasher for ShaHasher<'_> {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The cache key of `bytes` compiled by `engine`.
pub(crate) fn key(engine: &Engine, bytes: &[u8]) -> String {
    let mut sha = Sha256::new();
    sha.update(b"wrt-module-cache-v3\0");
    engine.precompile_compatibility_hash().hash(&mut ShaHasher(&mut sha));
    sha.update((bytes.len() as u64).to_le_bytes());
    sha.update(bytes);
    sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Serialized code read from a cache entry whose MAC matched: only [`CacheDir::read`] makes
/// one, so [`crate::sys::deserialize_cached`] never sees bytes that were not authenticated.
#[derive(Debug)]
pub(crate) struct Verified(Vec<u8>);

impl Verified {
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Loads `bytes` compiled from `dir`, or compiles them with `compile` and stores the result.
/// Returns the module (or component) and whether it came from the cache. A directory that
/// cannot be used is given to `unusable` and the module is compiled; failing to write the
/// cache is not an error: the run goes on with the freshly compiled code.
pub(crate) fn load_or_compile<C: crate::sys::Compiled>(
    engine: &Engine,
    dir: &Path,
    bytes: &[u8],
    compile: impl FnOnce() -> wasmtime::Result<C>,
    unusable: impl FnOnce(CacheError),
) -> wasmtime::Result<(C, bool)> {
    let cache = match CacheDir::open(dir) {
        Ok(cache) => cache,
        Err(err) => {
            unusable(err);
            return Ok((compile()?, false));
        }
    };
    let name = format!("{}.cwasm.zst", key(engine, bytes));
    // At most this many bytes are read: far more than code compiled from `bytes` compresses
    // to, and a planted file of any size is never read whole.
    let limit = u64::try_from(bytes.len()).unwrap_or(u64::MAX).saturating_mul(MAX_RATIO).saturating_add(64 << 20);
    if let Some(serialized) = cache.read(&name, limit)
        && let Ok(module) = crate::sys::deserialize_cached(engine, &serialized)
    {
        return Ok((module, true));
    }
    let module = compile()?;
    if let Ok(serialized) = module.serialize()
        && let Ok(compressed) = zstd::bulk::compress(&serialized, ZSTD_LEVEL)
    {
        let _ = cache.store(&name, &compressed);
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

    /// The MAC of entry `name` holding `compressed`.
    fn mac(&self, name: &str, compressed: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&self.key);
        mac.update(MAC_TAG).update(name.as_bytes()).update(b"\0").update(compressed);
        mac.finalize()
    }

    /// The serialized code in entry `name`, or `None` when it is missing, is not a regular
    /// file of this user writable by nobody else, is larger than `limit`, fails its MAC or
    /// does not decompress.
    fn read(&self, name: &str, limit: u64) -> Option<Verified> {
        use std::io::Read;
        // Non-blocking: opening a FIFO planted under the entry's name must not wait for a
        // writer. It changes nothing for a regular file.
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty()).ok()?;
        let stat = fstat(&fd).ok()?;
        let size = u64::try_from(stat.st_size).ok()?;
        let regular = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFREG;
        if !regular || stat.st_uid != self.uid.as_raw() || stat.st_mode & 0o022 != 0 || size > limit {
            return None;
        }
        // Read, not mmap: a file truncated or rewritten by another process while mapped would
        // crash this one with SIGBUS, or change after its MAC was checked.
        let mut stored = Vec::with_capacity(usize::try_from(size).ok()?);
        std::fs::File::from(fd).take(limit.saturating_add(1)).read_to_end(&mut stored).ok()?;
        if stored.len() < MAC_LEN || stored.len() as u64 > limit {
            return None;
        }
        let (mac, compressed) = stored.split_at(MAC_LEN);
        let mac = blake3::Hash::from_bytes(mac.try_into().ok()?);
        // `Hash`'s equality takes the same time whatever bytes differ.
        if mac != self.mac(name, compressed) {
            return None;
        }
        decompress(compressed).map(Verified)
    }

    /// Writes entry `name`: a new `0600` file, renamed over the old entry once complete.
    fn store(&self, name: &str, compressed: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        let mac = self.mac(name, compressed);
        let (tmp, file) = self.tempfile()?;
        let mut file = std::fs::File::from(file);
        let result = file
            .write_all(mac.as_bytes())
            .and_then(|()| file.write_all(compressed))
            .and_then(|()| file.sync_data())
            .and_then(|()| Ok(renameat(&self.fd, tmp.as_str(), &self.fd, name)?));
        if result.is_err() {
            let _ = unlinkat(&self.fd, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        result
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

/// The most an entry may expand by for its header's size to be trusted: compiled code
/// compresses about 3×; a header claiming more is corrupt, and is read by streaming instead of
/// allocating what it claims.
const MAX_RATIO: u64 = 64;

/// The bytes of a cache entry, or `None` when it does not decompress. An entry records its
/// size (`zstd::bulk::compress` writes it in the frame header), so it decompresses into one
/// buffer of that size: streaming into a growing buffer reallocates and copies it several
/// times, which cost a tenth of the CPU time of a cached `wrt run` of a small component.
fn decompress(compressed: &[u8]) -> Option<Vec<u8>> {
    let len = u64::try_from(compressed.len()).ok()?;
    match zstd::zstd_safe::get_frame_content_size(compressed) {
        Ok(Some(size)) if size <= len.saturating_mul(MAX_RATIO) => {
            zstd::bulk::decompress(compressed, usize::try_from(size).ok()?).ok()
        }
        _ => zstd::decode_all(compressed).ok(),
    }
}

#[cfg(test)]
mod tests;

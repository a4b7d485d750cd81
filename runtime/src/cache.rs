//! The on-disk cache of compiled guests, so that a second run of the same module skips
//! compilation.
//!
//! A compiled module is stored zstd-compressed as `<dir>/<key>.cwasm.zst` (about a third of the
//! uncompressed size), where the key is the SHA-256 of the module's bytes together with the
//! engine's compatibility hash (wasmtime version, target and every setting that changes
//! generated code, such as fuel or epoch checks). Entries are written to a temporary file and
//! renamed into place, so a reader never sees a partial file; a file that does not decompress
//! or that wasmtime refuses to load is compiled again and replaced.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    sha.update(b"wrt-module-cache-v2\0");
    engine.precompile_compatibility_hash().hash(&mut ShaHasher(&mut sha));
    sha.update((bytes.len() as u64).to_le_bytes());
    sha.update(bytes);
    sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads `bytes` compiled from `dir`, or compiles them with `compile` and stores the result.
/// Returns the module (or component) and whether it came from the cache. Failing to write the
/// cache is not an error: the run goes on with the freshly compiled code.
pub(crate) fn load_or_compile<C: crate::sys::Compiled>(
    engine: &Engine,
    dir: &Path,
    bytes: &[u8],
    compile: impl FnOnce() -> wasmtime::Result<C>,
) -> wasmtime::Result<(C, bool)> {
    let path = dir.join(format!("{}.cwasm.zst", key(engine, bytes)));
    // Read, not mmap: a cache file truncated by another process while mapped would crash this
    // one with SIGBUS.
    if let Ok(compressed) = std::fs::read(&path)
        && let Some(serialized) = decompress(&compressed)
        && let Ok(module) = crate::sys::deserialize_cached(engine, &serialized)
    {
        return Ok((module, true));
    }
    let module = compile()?;
    if let Ok(serialized) = module.serialize()
        && let Ok(compressed) = zstd::bulk::compress(&serialized, ZSTD_LEVEL)
    {
        let _ = store(dir, &path, &compressed);
    }
    Ok((module, false))
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

fn store(dir: &Path, path: &Path, serialized: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let (tmp, mut file) = tempfile_in(dir)?;
    let result = file.write_all(serialized).and_then(|()| file.sync_data()).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new file in `dir` with a unique name, created exclusively.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".tmp-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_decompress_with_or_without_their_size() {
        let bytes: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let sized = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
        assert!(matches!(zstd::zstd_safe::get_frame_content_size(&sized), Ok(Some(_))));
        assert_eq!(decompress(&sized).unwrap(), bytes);
        // A streamed frame records no size: it is read by streaming.
        let mut encoder = zstd::Encoder::new(Vec::new(), ZSTD_LEVEL).unwrap();
        encoder.write_all(&bytes).unwrap();
        let streamed = encoder.finish().unwrap();
        assert!(matches!(zstd::zstd_safe::get_frame_content_size(&streamed), Ok(None)));
        assert_eq!(decompress(&streamed).unwrap(), bytes);
    }

    #[test]
    fn a_corrupt_entry_is_refused_without_allocating_what_it_claims() {
        let bytes = vec![7u8; 4096];
        let mut sized = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
        // Claim 2^62 bytes: the header's single-segment size field is rewritten.
        let frame = zstd::zstd_safe::get_frame_content_size(&sized).unwrap();
        assert_eq!(frame, Some(4096));
        sized[4] = 0xe0; // frame header descriptor: 8-byte content size, single segment
        let claimed = 1u64 << 62;
        sized.splice(5..7, claimed.to_le_bytes());
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&sized).unwrap(), Some(claimed));
        assert!(decompress(&sized).is_none());
        assert!(decompress(b"not zstd").is_none());
        assert!(decompress(&[]).is_none());
    }
}

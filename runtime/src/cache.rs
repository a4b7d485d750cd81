//! The on-disk cache of compiled guests, so that a second run of the same module skips
//! compilation.
//!
//! A compiled module is stored as `<dir>/<key>.cwasm`, where the key is the SHA-256 of the
//! module's bytes together with the engine's compatibility hash (wasmtime version, target and
//! every setting that changes generated code, such as fuel or epoch checks). Entries are written
//! to a temporary file and renamed into place, so a reader never sees a partial file; a file
//! wasmtime refuses to load is compiled again and replaced.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::{Engine, Module};

/// Where compiled modules are cached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheMode {
    /// `$XDG_CACHE_HOME/wrt/modules`, or `$HOME/.cache/wrt/modules`.
    #[default]
    Default,
    /// This directory.
    Dir(PathBuf),
    /// No cache: compile every time.
    Disabled,
}

impl CacheMode {
    /// The directory this mode caches in, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            CacheMode::Default => {
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
    sha.update(b"wrt-module-cache-v1\0");
    engine.precompile_compatibility_hash().hash(&mut ShaHasher(&mut sha));
    sha.update((bytes.len() as u64).to_le_bytes());
    sha.update(bytes);
    sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads `bytes` compiled from `dir`, or compiles them and stores the result. Returns the
/// module and whether it came from the cache. Failing to write the cache is not an error: the
/// run goes on with the freshly compiled module.
pub(crate) fn load_or_compile(engine: &Engine, dir: &Path, bytes: &[u8]) -> wasmtime::Result<(Module, bool)> {
    let path = dir.join(format!("{}.cwasm", key(engine, bytes)));
    if path.is_file()
        && let Ok(module) = crate::sys::deserialize_cached(engine, &path)
    {
        return Ok((module, true));
    }
    let module = Module::new(engine, bytes)?;
    if let Ok(serialized) = module.serialize() {
        let _ = store(dir, &path, &serialized);
    }
    Ok((module, false))
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

//! Compiled code: a core module or a component, serialized for the compile cache and loaded
//! back from an authenticated cache entry or from an artifact its user vouches for.

use std::fs::File;

/// A compiled core module or component.
pub(crate) enum Compiled {
    Module(wasmtime::Module),
    Component(wasmtime::component::Component),
}

impl Compiled {
    /// The bytes [`Compiled::deserialize`] reads back.
    pub(crate) fn serialize(&self) -> wasmtime::Result<Vec<u8>> {
        match self {
            Self::Module(module) => module.serialize(),
            Self::Component(component) => component.serialize(),
        }
    }

    /// Loads what [`Compiled::serialize`] wrote.
    ///
    /// # Safety
    ///
    /// As `wasmtime::Module::deserialize`: the bytes must come from `serialize` (wasmtime
    /// checks their header, version, kind and engine settings, not their code).
    unsafe fn deserialize(engine: &wasmtime::Engine, bytes: &[u8]) -> wasmtime::Result<Self> {
        if wasmtime::Engine::detect_precompiled(bytes) == Some(wasmtime::Precompiled::Component) {
            // SAFETY: the caller's contract, which is this function's.
            let component = unsafe { wasmtime::component::Component::deserialize(engine, bytes) }?;
            return Ok(Self::Component(component));
        }
        // SAFETY: as above; wasmtime refuses bytes that are not a compiled module.
        let module = unsafe { wasmtime::Module::deserialize(engine, bytes) }?;
        Ok(Self::Module(module))
    }

    /// Loads what [`Compiled::serialize`] wrote to the file at `path`, which wasmtime maps
    /// instead of copying.
    ///
    /// # Safety
    ///
    /// As `wasmtime::Module::deserialize_file`: the file holds what `serialize` wrote, and
    /// stays unchanged for as long as the result lives.
    pub(crate) unsafe fn deserialize_file(engine: &wasmtime::Engine, path: &std::path::Path) -> wasmtime::Result<Self> {
        if wasmtime::Engine::detect_precompiled_file(path)? == Some(wasmtime::Precompiled::Component) {
            // SAFETY: the caller's contract, which is this function's.
            let component = unsafe { wasmtime::component::Component::deserialize_file(engine, path) }?;
            return Ok(Self::Component(component));
        }
        // SAFETY: as above; wasmtime refuses a file that is not a compiled module.
        let module = unsafe { wasmtime::Module::deserialize_file(engine, path) }?;
        Ok(Self::Module(module))
    }
}

/// A cache entry whose MAC matched, open: only `cache::CacheDir::read` makes one
/// ([`Verified::authenticated`]), so [`deserialize_cached`] never sees a file that was not
/// authenticated.
#[derive(Debug)]
pub(crate) struct Verified(File);

impl Verified {
    /// The entry open as `file`, whose MAC the cache has just checked against its bytes. The
    /// one caller is `cache::CacheDir::read`, right after the check.
    pub(crate) fn authenticated(file: File) -> Self {
        Self(file)
    }

    pub(crate) fn file(&self) -> &File {
        &self.0
    }

    /// The entry's bytes, read from its descriptor.
    pub(crate) fn read_all(&self) -> std::io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let len = usize::try_from(self.0.metadata()?.len()).map_err(std::io::Error::other)?;
        let mut bytes = vec![0; len];
        self.0.read_exact_at(&mut bytes, 0)?;
        Ok(bytes)
    }
}

/// Loads a module or component that `crate::cache` compiled, wrote earlier and
/// authenticated: by mapping its file if `map` is set and `/proc` is there, otherwise by reading
/// it.
pub(crate) fn deserialize_cached(engine: &wasmtime::Engine, entry: &Verified, map: bool) -> wasmtime::Result<Compiled> {
    use std::os::fd::AsRawFd;
    // The descriptor's own path: wasmtime opens the very file whose MAC was checked, whatever
    // has been renamed over its name since.
    let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", entry.file().as_raw_fd()));
    if map && path.exists() {
        // SAFETY: only `cache::CacheDir::read` makes a `Verified`, once the entry's MAC matched: a
        // keyed BLAKE3 of the entry's name and bytes whose key is an extended attribute of the
        // cache directory, which no guest can read or set (WASI has no call for extended
        // attributes). So the file holds what `serialize` produced in `cache::load_or_compile` for
        // this entry, by a wrt of this user; entries are never rewritten in place (a new one is
        // renamed over the old), and only this user can write the directory. wasmtime also checks
        // the header, its version, the kind (module or component) and the engine's settings
        // before using the contents.
        return unsafe { Compiled::deserialize_file(engine, &path) };
    }
    let bytes = entry.read_all()?;
    // SAFETY: as above, for the same bytes read instead of mapped.
    unsafe { Compiled::deserialize(engine, &bytes) }
}

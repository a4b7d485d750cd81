//! Compiled code: a core module or a component, serialized for the compile cache and loaded
//! back from an authenticated cache entry or from an artifact its user vouches for.

use wasmtime::Precompiled;

use super::sealed::SealedCopy;

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
        if wasmtime::Engine::detect_precompiled(bytes) == Some(Precompiled::Component) {
            // SAFETY: the caller's contract, which is this function's.
            let component = unsafe { wasmtime::component::Component::deserialize(engine, bytes) }?;
            return Ok(Self::Component(component));
        }
        // SAFETY: as above; wasmtime refuses bytes that are not a compiled module.
        let module = unsafe { wasmtime::Module::deserialize(engine, bytes) }?;
        Ok(Self::Module(module))
    }
}

/// A cache entry whose MAC matched, as a sealed copy ([`SealedCopy`]): only
/// `cache::CacheDir::read` makes one ([`Verified::authenticated`]), so [`deserialize_cached`]
/// never sees bytes that were not authenticated, nor bytes anyone could change afterwards.
#[derive(Debug)]
pub(crate) struct Verified {
    copy: SealedCopy,
    kind: Option<Precompiled>,
}

impl Verified {
    /// The entry's sealed copy, whose MAC the cache has just checked against its bytes, and
    /// what those bytes are (`wasmtime::Engine::detect_precompiled` of them). The one caller is
    /// `cache::CacheDir::read`, right after the check.
    pub(crate) fn authenticated(copy: SealedCopy, kind: Option<Precompiled>) -> Self {
        Self { copy, kind }
    }
}

/// The bytes of a sealed copy, read into memory.
fn read_sealed(copy: &SealedCopy) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let len = usize::try_from(copy.len()).map_err(std::io::Error::other)?;
    let mut bytes = vec![0; len];
    copy.file().read_exact_at(&mut bytes, 0)?;
    Ok(bytes)
}

/// Loads compiled code of kind `kind` (a module unless it is a component) from a sealed copy:
/// by mapping it if `map` is set and the host lets the copy be executable, otherwise by reading
/// it into memory. wasmtime maps a module through a descriptor of the copy; a component, for
/// which wasmtime takes only a path, through the descriptor's `/proc/self/fd` path (read
/// instead where `/proc` is missing).
///
/// # Safety
///
/// The copy holds what `Compiled::serialize` wrote, by a wrt of this wasmtime (wasmtime checks
/// the header, its version, the kind and the engine's settings, never the code).
unsafe fn deserialize_sealed(
    engine: &wasmtime::Engine,
    copy: &SealedCopy,
    kind: Option<Precompiled>,
    map: bool,
) -> wasmtime::Result<Compiled> {
    let map = map && copy.is_executable();
    if kind == Some(Precompiled::Component) {
        use std::os::fd::AsRawFd;
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", copy.fd().as_raw_fd()));
        if map && path.exists() {
            // SAFETY: the caller's contract; the copy is sealed, so it stays unchanged for as
            // long as the result lives (wasmtime keeps its own descriptor of it), as wasmtime
            // requires of a mapped file: nobody can write, shrink or grow it.
            let component = unsafe { wasmtime::component::Component::deserialize_file(engine, &path) }?;
            return Ok(Compiled::Component(component));
        }
    } else if map {
        // SAFETY: the caller's contract; sealed, the copy stays unchanged for as long as the
        // module lives (wasmtime maps it and keeps the descriptor given). Bytes that are not a
        // compiled module, wasmtime refuses.
        let module = unsafe { wasmtime::Module::deserialize_open_file(engine, copy.file().try_clone()?) }?;
        return Ok(Compiled::Module(module));
    }
    let bytes = read_sealed(copy)?;
    // SAFETY: as above, for the same bytes read instead of mapped.
    unsafe { Compiled::deserialize(engine, &bytes) }
}

/// Loads a module or component that `crate::cache` compiled, wrote earlier and authenticated:
/// by mapping its sealed copy if `map` is set, otherwise by reading it.
pub(crate) fn deserialize_cached(engine: &wasmtime::Engine, entry: &Verified, map: bool) -> wasmtime::Result<Compiled> {
    // SAFETY: only `cache::CacheDir::read` makes a `Verified`, once the MAC of the entry's sealed
    // copy matched: a keyed BLAKE3 of the entry's name and bytes whose key is an extended
    // attribute of the cache directory, which no guest can read or set (WASI has no call for
    // extended attributes) nor any confined child (its seccomp filter refuses every extended
    // attribute call). So the copy holds what `serialize` produced in `cache::load_or_compile`
    // for this entry, by a wrt of this user.
    unsafe { deserialize_sealed(engine, &entry.copy, entry.kind, map) }
}

/// Loads compiled code that its user vouches for (`PrecompiledFile::trusted`) from a sealed copy
/// of its file.
///
/// # Safety
///
/// As [`deserialize_sealed`]: the copy holds what `Compiled::serialize` wrote.
pub(crate) unsafe fn deserialize_vouched(engine: &wasmtime::Engine, copy: &SealedCopy) -> wasmtime::Result<Compiled> {
    let len = usize::try_from(copy.len()).map_err(wasmtime::Error::msg)?;
    let kind = super::file_map::FileMap::new(copy.fd(), len)
        .map_err(|e| wasmtime::Error::new(std::io::Error::from(e)))?
        .kind();
    // SAFETY: the caller's contract, which is this function's.
    unsafe { deserialize_sealed(engine, copy, kind, true) }
}

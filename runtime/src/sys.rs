//! The only place in `wrt-runtime` that runs `unsafe` code: virtual-memory mappings and the
//! wasmtime traits that hand them to compiled guest code, loading compiled code from the
//! cache (mapped from its file) and from artifacts a user vouches for, the extended attribute that holds the cache's key, and the signal handler that
//! interrupts a blocked guest thread.

pub(crate) mod buffer_memory;
pub(crate) mod file_map;
pub(crate) mod interrupt;
pub(crate) mod mapping;
pub(crate) mod memory_creator;
pub(crate) mod memory_pool;
pub(crate) mod precompiled;
pub(crate) mod xattr;

/// Compiled code the cache holds: a core module or a component.
pub(crate) trait Compiled: Sized {
    /// The bytes [`Compiled::deserialize`] reads back.
    fn serialize(&self) -> wasmtime::Result<Vec<u8>>;

    /// Loads what [`Compiled::serialize`] wrote.
    ///
    /// # Safety
    ///
    /// As `wasmtime::Module::deserialize`: the bytes must come from `serialize` (wasmtime
    /// checks their header, version, kind and engine settings, not their code).
    unsafe fn deserialize(engine: &wasmtime::Engine, bytes: &[u8]) -> wasmtime::Result<Self>;

    /// Loads what [`Compiled::serialize`] wrote to the file at `path`, which wasmtime maps
    /// instead of copying.
    ///
    /// # Safety
    ///
    /// As `wasmtime::Module::deserialize_file`: the file holds what `serialize` wrote, and
    /// stays unchanged for as long as the result lives.
    unsafe fn deserialize_file(engine: &wasmtime::Engine, path: &std::path::Path) -> wasmtime::Result<Self>;
}

impl Compiled for crate::guest::Compiled {
    fn serialize(&self) -> wasmtime::Result<Vec<u8>> {
        match self {
            Self::Module(module) => module.serialize(),
            Self::Component(component) => component.serialize(),
        }
    }

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

    unsafe fn deserialize_file(engine: &wasmtime::Engine, path: &std::path::Path) -> wasmtime::Result<Self> {
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

/// Loads a module or component that [`crate::cache`] compiled, wrote earlier and
/// authenticated: by mapping its file if `map` is set and `/proc` is there, otherwise by reading
/// it.
pub(crate) fn deserialize_cached<C: Compiled>(
    engine: &wasmtime::Engine,
    entry: &crate::cache::Verified,
    map: bool,
) -> wasmtime::Result<C> {
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
        return unsafe { C::deserialize_file(engine, &path) };
    }
    let bytes = entry.read_all()?;
    // SAFETY: as above, for the same bytes read instead of mapped.
    unsafe { C::deserialize(engine, &bytes) }
}

/// The `VmFlags` of the mapping of this process that holds `addr`, from `/proc/self/smaps`.
#[cfg(test)]
pub(crate) fn vm_flags_of(addr: usize) -> Option<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((lo, hi)) = range.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = (lo..hi).contains(&addr);
            continue;
        }
        if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return Some(flags.trim().to_owned());
        }
    }
    None
}

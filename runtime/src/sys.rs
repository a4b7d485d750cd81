//! The only place in `wrt-runtime` that runs `unsafe` code: virtual-memory mappings and the
//! wasmtime traits that hand them to compiled guest code, and the signal handler that
//! interrupts a blocked guest thread.

pub(crate) mod buffer_memory;
pub(crate) mod interrupt;
pub(crate) mod mapping;
pub(crate) mod memory_creator;
pub(crate) mod memory_pool;

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
}

/// Loads a module or component that [`crate::cache`] compiled, wrote earlier and read back.
pub(crate) fn deserialize_cached<C: Compiled>(engine: &wasmtime::Engine, serialized: &[u8]) -> wasmtime::Result<C> {
    // SAFETY: the bytes were produced by `serialize` in `cache::load_or_compile`, then
    // compressed and renamed into place only once fully written and synced. They live in the
    // user's own cache directory: a party able to replace them can already run code as this
    // user. wasmtime checks the header, its version, the kind (module or component) and the
    // engine's settings before using the contents.
    unsafe { C::deserialize(engine, serialized) }
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

//! The only place in `wrt-runtime` that runs `unsafe` code: virtual-memory mappings and the
//! wasmtime traits that hand them to compiled guest code.

pub(crate) mod buffer_memory;
pub(crate) mod mapping;
pub(crate) mod memory_creator;
pub(crate) mod memory_pool;

/// Loads a module that [`crate::cache`] compiled, wrote earlier and read back.
pub(crate) fn deserialize_cached(engine: &wasmtime::Engine, serialized: &[u8]) -> wasmtime::Result<wasmtime::Module> {
    // SAFETY: the bytes were produced by `Module::serialize` in `cache::load_or_compile`, then
    // compressed and renamed into place only once fully written and synced. They live in the
    // user's own cache directory: a party able to replace them can already run code as this
    // user. wasmtime checks the header, its version and the engine's settings before using
    // the contents.
    unsafe { wasmtime::Module::deserialize(engine, serialized) }
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

//! The only place in `wrt-runtime` that runs `unsafe` code: virtual-memory mappings and the
//! wasmtime traits that hand them to compiled guest code.

pub(crate) mod buffer_memory;
pub(crate) mod mapping;
pub(crate) mod memory_creator;

use std::path::Path;

/// Loads a module that [`crate::cache`] compiled and wrote earlier.
pub(crate) fn deserialize_cached(engine: &wasmtime::Engine, path: &Path) -> wasmtime::Result<wasmtime::Module> {
    // Read, not mmap (`deserialize_file`): a cache file truncated by another process while
    // mapped would crash this one with SIGBUS.
    let bytes = std::fs::read(path)?;
    // SAFETY: the file was produced by `Module::serialize` in `cache::store` and renamed into
    // place only once fully written and synced. It lives in the user's own cache directory: a
    // party able to replace it can already run code as this user. wasmtime checks the header,
    // its version and the engine's settings before using the contents.
    unsafe { wasmtime::Module::deserialize(engine, bytes) }
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

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

//! The only place in `wrt-runtime` that runs `unsafe` code: virtual-memory mappings and the
//! wasmtime traits that hand them to compiled guest code, loading compiled code from the
//! cache and from artifacts a user vouches for (sealed copies, mapped), a command's entry point
//! typed without a check per run, the extended attribute that holds the cache's key, and the signal handler that
//! interrupts a blocked guest thread.

pub(crate) mod buffer_memory;
pub(crate) mod compiled;
pub(crate) mod entry_point;
pub(crate) mod fiber_stack;
pub(crate) mod file_map;
pub(crate) mod interrupt;
pub(crate) mod mapping;
pub(crate) mod memory_creator;
pub(crate) mod memory_pool;
pub(crate) mod precompiled;
pub(crate) mod sealed;
pub(crate) mod xattr;

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

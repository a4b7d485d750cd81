//! WebAssembly components: `wasi:cli/command` components (WASI 0.2 and 0.3) run like core modules,
//! with the same options, limits and outcomes, and import `wrt:process` (the WIT package in
//! `wit/`) to run host programs through the same host implementation as the core ABI.

pub(crate) mod buffers;
pub(crate) mod clock;
pub(crate) mod file_streams;
pub(crate) mod link;
pub(crate) mod process;
pub(crate) mod streams;
pub(crate) mod wit;

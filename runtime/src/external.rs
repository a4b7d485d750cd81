//! Host buffers and the external memory they hold (docs/abi.md, "Host buffers"; docs/design.md,
//! "Host buffers and external-memory-aware collection"): the collection policy, the per-sandbox
//! accountant that applies it, and the buffers themselves. The collector that calls the
//! guest's and wasmtime's collectors from host functions is `crate::collector`.

pub(crate) mod accountant;
pub(crate) mod buffer;
pub(crate) mod error;
pub(crate) mod gc_policy;
pub(crate) mod spares;

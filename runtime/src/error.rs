//! Errors of wrt itself (as opposed to guest outcomes), as typed values inside
//! `wasmtime::Error` so callers can `downcast_ref` them.

use std::path::PathBuf;

/// Loading a guest failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("failed to read `{path}`")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are neither a binary WebAssembly module nor WebAssembly text.
    #[error("`{name}` is not a WebAssembly module (no `\\0asm` header and not WebAssembly text)")]
    NotWasm {
        /// The file name, or `<bytes>`.
        name: String,
    },
    /// The bytes are a WebAssembly component, which wrt does not run yet.
    #[error("`{name}` is a WebAssembly component; wrt runs core modules (WASI preview 1) only")]
    Component {
        /// The file name, or `<bytes>`.
        name: String,
    },
}

/// Instantiating a guest failed before any of its code ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstantiateError {
    /// The guest imports something wrt does not provide.
    #[error("guest `{guest}` imports `{module}::{name}`, which wrt does not provide")]
    UnknownImport {
        /// The guest's name.
        guest: String,
        /// The import's module.
        module: String,
        /// The import's field name.
        name: String,
    },
    /// The export to run does not exist or is not a function.
    #[error("guest `{guest}` has no exported function `{export}`")]
    NoSuchExport {
        /// The guest's name.
        guest: String,
        /// The requested export.
        export: String,
    },
    /// The arguments given for an invoked export do not match its parameters.
    #[error("export `{export}` of guest `{guest}`: {reason}")]
    BadInvokeArgs {
        /// The guest's name.
        guest: String,
        /// The invoked export.
        export: String,
        /// What is wrong.
        reason: String,
    },
    /// The guest exports its collector hook with the wrong type.
    #[error(
        "guest `{guest}` exports `wrt_gc` as {found}; the collector hook must be `(func (param i32))` (docs/abi.md, \"Collections\")"
    )]
    BadCollectorHook {
        /// The guest's name.
        guest: String,
        /// What the export is.
        found: String,
    },
}

/// A sandbox configuration was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A preopened directory could not be opened.
    #[error("failed to open directory `{path}` for the guest")]
    Preopen {
        /// The host directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `HOST[::GUEST]` directory mapping is malformed.
    #[error("invalid directory mapping `{spec}`: {reason}")]
    BadDirSpec {
        /// The mapping as given.
        spec: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// An environment variable is malformed.
    #[error("invalid environment variable `{spec}`: expected NAME=VALUE with a non-empty NAME without `=`")]
    BadEnv {
        /// The variable as given.
        spec: String,
    },
    /// A limit is out of range.
    #[error("invalid {what}: {reason}")]
    BadLimit {
        /// Which limit.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An allowed program lies inside a directory the guest may write: the guest could
    /// replace it between the policy's check and the `execve`.
    #[error(
        "allow rule `{}` resolves to `{}`, inside the guest-writable directory `{}` (preopened as `{guest}`); \
         preopen it read-only or allow a program outside it",
        .rule.display(),
        .path.display(),
        .preopen.display()
    )]
    WritableProgram {
        /// The allow rule as written.
        rule: PathBuf,
        /// The canonical path it resolves to.
        path: PathBuf,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// A garbage-collection policy breaks a rule (for example `Y ≤ S/2`).
    #[error("invalid collection policy: {reason}")]
    BadGcPolicy {
        /// What is wrong.
        reason: String,
    },
}

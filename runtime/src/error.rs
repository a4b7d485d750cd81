//! Errors of wrt itself (as opposed to guest outcomes), as typed values inside
//! `wasmtime::Error` so callers can `downcast_ref` them.
//!
//! An error that has a cause (an I/O error, a policy error, wasmtime's own message) says
//! only what failed; the cause follows it in the error's chain. `{err:#}` prints the whole
//! chain (`failed to read `app.wasm`: No such file or directory (os error 2)`), `{err:?}`
//! lists the causes, and `err.chain()` yields each. A typed cause stays in its variant as
//! [`source`](std::error::Error::source) too.

use std::path::PathBuf;

use wrt_text::Shown;

use crate::shown_text::{shown_line, shown_text};

/// Loading a guest failed.
///
/// A variant says what failed; its cause follows in the error's chain:
///
/// ```
/// let runtime = wrt_runtime::Runtime::builder().build().unwrap();
/// let err = runtime.load_file("no-such-guest.wasm").unwrap_err();
/// assert!(matches!(err.downcast_ref(), Some(wrt_runtime::LoadError::Read { .. })));
/// assert_eq!(err.to_string(), "failed to read `no-such-guest.wasm`");
/// assert_eq!(format!("{err:#}"), "failed to read `no-such-guest.wasm`: No such file or directory (os error 2)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("failed to read `{}`", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        reason: std::io::Error,
    },
    /// The path is not a file wrt reads a guest from: a directory or a device.
    #[error("`{}` is {kind}, not a WebAssembly file", .path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is (`a directory`, `a character device`, `a block device`).
        kind: &'static str,
    },
    /// The file is larger than [`MAX_MODULE_BYTES`](crate::MAX_MODULE_BYTES).
    #[error("`{}` is larger than {}, the most wrt reads as a guest", .path.display(), bytes(*limit))]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The bytes are neither a binary WebAssembly module or component nor WebAssembly text.
    #[error(
        "`{}` is not a WebAssembly module or component (no `\\0asm` header with a known layer, and not WebAssembly text)",
        Shown::new(.name)
    )]
    NotWasm {
        /// The file name, or `<bytes>`.
        name: String,
    },
    /// The file is compiled code (`wrt compile`), which is loaded only when its user vouches
    /// for it ([`PrecompiledFile`](crate::PrecompiledFile), `wrt run --allow-precompiled`).
    #[error(
        "`{}` is compiled code, not WebAssembly: run it with `--allow-precompiled` (`Runtime::load_precompiled`), \
         only if you compiled it yourself, as wrt cannot check what it runs",
        Shown::new(.name)
    )]
    Precompiled {
        /// The file name.
        name: String,
    },
    /// The file given as compiled code is not, or does not load with this runtime's settings
    /// (another wasmtime, or fuel on one side only).
    #[error("failed to load compiled code `{}`", Shown::new(.name))]
    BadPrecompiled {
        /// The file name.
        name: String,
    },
    /// The module does not compile (or its WebAssembly text does not parse).
    #[error("failed to compile guest `{}`", Shown::new(.name))]
    Compile {
        /// The file name, or the name given with the bytes.
        name: String,
        /// Whether the cause is a syntax error of WebAssembly text, shown over several lines
        /// (the file, line and column, and the line with a caret); other causes are one line.
        syntax: bool,
    },
}

/// Instantiating a guest failed before any of its code ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstantiateError {
    /// Creating the instance failed in the host (not in guest code): for example, its memory
    /// or tables could not be mapped.
    #[error("failed to instantiate guest `{}`", Shown::new(.guest))]
    Failed {
        /// The guest's name.
        guest: String,
    },
    /// The guest is a component that does not export `wasi:cli/run` (a command's entry point).
    #[error("component `{}` is not a command", Shown::new(.guest))]
    NotACommand {
        /// The guest's name.
        guest: String,
    },
    /// A service was loaded ([`crate::Runtime::load_service_file`]) from a guest that exports
    /// no `wasi:http` handler: neither `wasi:http/handler@0.3` nor
    /// `wasi:http/incoming-handler@0.2`.
    #[error("guest `{}` is no HTTP service: it exports neither `wasi:http/handler@0.3` nor `wasi:http/incoming-handler@0.2`", Shown::new(.guest))]
    NotAService {
        /// The guest's name.
        guest: String,
    },
    /// A run was asked of an HTTP service, whose guest answers requests ([`crate::Guest::serve_async`]).
    #[error("guest `{}` is an HTTP service: it answers requests (`wrt serve`), it is not run", Shown::new(.guest))]
    ServiceNotRun {
        /// The guest's name.
        guest: String,
    },
    /// `invoke` was asked of a component, which has no core exports to call.
    #[error("guest `{}` is a component: `--invoke` calls exports of core modules only", Shown::new(.guest))]
    InvokeComponent {
        /// The guest's name.
        guest: String,
    },
    /// A synchronous call (`run_start`, `invoke`, `call`, `typed_call`) of an instance made for
    /// asynchronous runs ([`crate::Guest::instantiate_async`]), or an asynchronous call of one
    /// made for synchronous runs.
    #[error(
        "guest `{}` was instantiated for {} runs: call its `{}` methods",
        Shown::new(.guest),
        if *.asynchronous { "asynchronous" } else { "synchronous" },
        if *.asynchronous { "*_async" } else { "synchronous" }
    )]
    WrongMode {
        /// The guest's name.
        guest: String,
        /// Whether the instance was made for asynchronous runs.
        asynchronous: bool,
    },
    /// The guest imports something wrt does not provide.
    #[error("guest `{}` imports `{}::{}`, which wrt does not provide", Shown::new(.guest), Shown::new(.module), Shown::new(.name))]
    UnknownImport {
        /// The guest's name.
        guest: String,
        /// The import's module.
        module: String,
        /// The import's field name.
        name: String,
    },
    /// The export to run does not exist or is not a function.
    #[error(
        "guest `{}` has no exported function `{}`; {}",
        Shown::new(.guest),
        Shown::new(.export),
        list_functions(.functions)
    )]
    NoSuchExport {
        /// The guest's name.
        guest: String,
        /// The requested export.
        export: String,
        /// The functions the guest does export.
        functions: Vec<String>,
    },
    /// The guest's own minimum memory is larger than the sandbox's memory limit.
    #[error(
        "guest `{}` needs {} of memory to start ({}), more than the memory limit of {}",
        Shown::new(.guest),
        bytes(*minimum),
        declared(*memories),
        bytes(*limit)
    )]
    MemoryLimit {
        /// The guest's name.
        guest: String,
        /// The bytes the guest's memories need when they are created: the declared minimums of
        /// all of them, up to the one the limit refused (and tables past their allowance).
        minimum: u64,
        /// How many memories that is.
        memories: usize,
        /// The sandbox's memory limit.
        limit: u64,
    },
    /// The arguments given for an invoked export do not match its parameters.
    #[error("export `{}` of guest `{}`: {}", Shown::new(.export), Shown::new(.guest), shown_line(.reason))]
    BadInvokeArgs {
        /// The guest's name.
        guest: String,
        /// The invoked export.
        export: String,
        /// What is wrong.
        reason: String,
    },
    /// A read or write of the guest's memory ([`crate::Instance::read_memory`],
    /// [`crate::Instance::write_memory`]) reaches past its end, or the guest exports no memory.
    #[error(
        "guest `{}`: {len} bytes at offset {offset} are outside its memory ({size} bytes)",
        Shown::new(.guest)
    )]
    MemoryAccess {
        /// The guest's name.
        guest: String,
        /// Where the access starts.
        offset: usize,
        /// How many bytes it spans.
        len: usize,
        /// The size of the guest's exported `memory` (0 when it exports none).
        size: usize,
    },
    /// The guest exports its collector hook with the wrong type.
    #[error(
        "guest `{}` exports `wrt_gc` as {found}; the collector hook must be `(func (param i32))` (docs/abi.md, \"Collections\")",
        Shown::new(.guest)
    )]
    BadCollectorHook {
        /// The guest's name.
        guest: String,
        /// What the export is.
        found: String,
    },
}

/// Run options or runtime settings were rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A preopened directory could not be opened.
    #[error("failed to open directory `{}` for the guest", .path.display())]
    Preopen {
        /// The host directory.
        path: PathBuf,
        /// Why.
        #[source]
        reason: std::io::Error,
    },
    /// An environment variable is malformed.
    #[error("invalid environment variable `{spec}`: expected NAME=VALUE with a non-empty NAME without `=`")]
    BadEnv {
        /// The variable as given.
        spec: String,
    },
    /// [`RunOptions::env_from_host`](crate::RunOptions::env_from_host) (`--env NAME` without a
    /// value) names a variable the host does not set.
    #[error("environment variable `{name}` is not set on the host (give it a value with `{name}=VALUE`)")]
    EnvNotSet {
        /// The variable's name.
        name: String,
    },
    /// A limit is out of range.
    #[error("invalid {what}: {reason}")]
    BadLimit {
        /// Which limit.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An allowed program lies inside a directory the guest may write, or has a hard link
    /// there: the guest could rewrite or replace it between the policy's check and the
    /// `execve`.
    #[error(
        "allow rule `{}` resolves to `{}`, which {how} the guest-writable directory `{}` (`--dir`, preopened as `{guest}`); \
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
        /// How the preopen reaches it ([`Reach::Inside`] or [`Reach::LinkInside`]).
        how: Reach,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// An allowed program is a file with more than one hard link that the host user may write,
    /// on the file system of a directory the guest may write, and that directory holds more
    /// entries than wrt searches for links (or one it cannot read): a link inside it would let
    /// the guest rewrite the program.
    #[error(
        "allow rule `{}` resolves to `{}`, a file with {links} hard links on the file system of the guest-writable directory `{}` (`--dir`, preopened as `{guest}`), which holds more than {max} entries (or one wrt cannot read) to search for them: a link inside it would let the guest rewrite the program; \
         allow a program with one link, or preopen the directory read-only",
        .rule.display(),
        .path.display(),
        .preopen.display(),
        max = Reach::MAX_SEARCHED
    )]
    LinkedProgram {
        /// The allow rule as written.
        rule: PathBuf,
        /// The canonical path it resolves to.
        path: PathBuf,
        /// The file's hard links.
        links: u64,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// A directory of the spawn policy's search path lies inside a directory the guest may
    /// write: the guest could plant programs there, or symlinks that probe the host's files.
    #[error(
        "search directory `{}` of the spawn policy {how} the guest-writable directory `{}` (`--dir`, preopened as `{guest}`); \
         remove it from the policy's `search_path`, or preopen the directory read-only",
        .dir.display(),
        .preopen.display()
    )]
    WritableSearchDir {
        /// The search directory, as the policy lists it.
        dir: PathBuf,
        /// How the preopen reaches it.
        how: Reach,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// The audit log lies inside a directory the guest may write: the guest could truncate it
    /// or forge records.
    #[error(
        "audit log `{}` (`--audit-log`) {how} the guest-writable directory `{}` (`--dir`, preopened as `{guest}`); \
         write the log elsewhere, or preopen the directory read-only",
        .path.display(),
        .preopen.display()
    )]
    WritableAuditLog {
        /// The audit log, as given.
        path: PathBuf,
        /// How the preopen reaches it.
        how: Reach,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// The spawn policy's file lies inside a directory the guest may write: the guest could
    /// rewrite the policy of the next run.
    #[error(
        "policy file `{}` (`--policy`) {how} the guest-writable directory `{}` (`--dir`, preopened as `{guest}`); \
         keep the policy elsewhere, or preopen the directory read-only",
        .path.display(),
        .preopen.display()
    )]
    WritablePolicyFile {
        /// The policy file, as given.
        path: PathBuf,
        /// How the preopen reaches it.
        how: Reach,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// The runtime's compile cache lies inside a directory the guest may write: the guest
    /// could plant compiled code that a later load runs natively.
    #[error(
        "compile cache `{}` lies inside the guest-writable directory `{}` (`--dir`, preopened as `{guest}`); \
         use a runtime without the cache (`CacheMode::Disabled`, `--no-cache`), or preopen the directory read-only",
        .dir.display(),
        .preopen.display()
    )]
    WritableCache {
        /// The cache directory.
        dir: PathBuf,
        /// The read-write preopen's host directory, as given.
        preopen: PathBuf,
        /// Where the guest sees that directory.
        guest: String,
    },
    /// A preopen is, lies inside or contains a kernel pseudo-filesystem (`/proc`, `/sys`,
    /// devices, cgroups, …) and pseudo-filesystems were not allowed.
    #[error(
        "directory `{}` for the guest {} the {fs_type} file system at `{}`, which exposes the host's processes, \
         kernel or devices (wrt's own environment and memory among them); allow it with `--allow-pseudo-fs` \
         (`RunOptions::allow_pseudo_fs`)",
        .preopen.display(),
        if *.contains { "contains" } else { "lies on" },
        .mount.display()
    )]
    PseudoFs {
        /// The preopen's host directory, as given.
        preopen: PathBuf,
        /// The pseudo-filesystem's type (`proc`, `sysfs`, `devpts`, …).
        fs_type: String,
        /// Where it is mounted.
        mount: PathBuf,
        /// Whether the preopen contains the mount (rather than lying on it).
        contains: bool,
    },
    /// The audit log cannot be opened for appending.
    #[error("failed to open audit log `{}`", .path.display())]
    AuditLog {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        reason: std::io::Error,
    },
    /// The spawn policy does not validate.
    #[error("invalid spawn policy")]
    SpawnPolicy {
        /// What is wrong.
        #[source]
        reason: wrt_host_spawn::PolicyError,
    },
    /// A garbage-collection policy breaks a rule (for example `Y ≤ S/2`).
    #[error("invalid collection policy: {reason}")]
    BadGcPolicy {
        /// What is wrong.
        reason: String,
    },
}

impl LoadError {
    /// This error as a [`wasmtime::Error`] whose chain holds its cause, as the runtime returns
    /// it. (Converting with `?` or `into()` works too, but wasmtime prints only the causes of
    /// its own chain: `{err:#}` would then stop at this error.)
    pub fn into_error(self) -> wasmtime::Error {
        let causes = causes_of(&self);
        chained(self, causes)
    }
}

impl ConfigError {
    /// This error as a [`wasmtime::Error`] whose chain holds its cause (a policy error and
    /// what caused it, an I/O error), as the runtime returns it. Converting with `?` or
    /// `into()` works too, but wasmtime prints only the causes of its own chain: `{err:#}`
    /// would then stop at this error.
    ///
    /// ```
    /// use wrt_runtime::{RunOptions, wrt_host_spawn::Policy};
    /// let policy = Policy::deny_all().sandbox_read("/nonexistent-dir");
    /// let err = RunOptions::new().spawn_policy(&policy).unwrap_err().into_error();
    /// assert_eq!(
    ///     format!("{err:#}"),
    ///     "invalid spawn policy: sandbox path `/nonexistent-dir` cannot be resolved: No such file or directory (os error 2)"
    /// );
    /// ```
    pub fn into_error(self) -> wasmtime::Error {
        let causes = causes_of(&self);
        chained(self, causes)
    }
}

/// `outer` over `causes` (outermost first), as one wasmtime error: `{err:#}` prints `outer:
/// cause: …`, `{err:?}` lists the causes, `err.chain()` yields each and `err.downcast_ref()`
/// finds `outer`. (wasmtime prints the causes of its own chain only, not the `source()` of an
/// error inside it; hence a chain of wasmtime's own.)
pub(crate) fn chained<E>(outer: E, causes: Vec<String>) -> wasmtime::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut causes = causes.into_iter().rev();
    let Some(innermost) = causes.next() else {
        return wasmtime::Error::new(outer);
    };
    causes.fold(wasmtime::Error::msg(innermost), wasmtime::Error::context).context(outer)
}

/// The causes under `err`, each as one escaped line.
fn causes_of(err: &dyn std::error::Error) -> Vec<String> {
    std::iter::successors(err.source(), |cause| cause.source()).map(|cause| shown_line(&cause.to_string())).collect()
}

/// The causes in wasmtime's error `err` (itself included), escaped: they quote names a module
/// chose. A syntax error of WebAssembly text keeps its lines (`syntax`); others are one line.
pub(crate) fn wasmtime_causes(err: &wasmtime::Error, syntax: bool) -> Vec<String> {
    let shown = if syntax { shown_text } else { shown_line };
    err.chain().map(|cause| shown(&cause.to_string())).collect()
}

/// How a read-write preopen reaches something the host keeps (the `how` of
/// [`ConfigError::WritableSearchDir`] and its kin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// It lies inside the preopen (or inside a mount point below it).
    Inside,
    /// It is a file with this many hard links, which the host user may write, on the file
    /// system of the preopen, and the preopen could not be searched whole for them: one of
    /// the links may lie inside it.
    Linked(u64),
    /// It is a file with a hard link inside the preopen.
    LinkInside,
}

impl Reach {
    /// The most entries the search for hard links of a kept file reads in the writable
    /// directories before it gives up (and the file counts as reached: [`Reach::Linked`]).
    pub const MAX_SEARCHED: usize = 200_000;
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reach::Inside => f.write_str("lies inside"),
            Reach::Linked(links) => {
                write!(f, "has {links} hard links, too many entries to search for them, on the file system of")
            }
            Reach::LinkInside => f.write_str("has a hard link inside"),
        }
    }
}

/// `its exported functions: `a`, `b``, at most ten of them.
fn list_functions(functions: &[String]) -> String {
    const SHOWN: usize = 10;
    if functions.is_empty() {
        return "it exports no functions".into();
    }
    let mut list = functions.iter().take(SHOWN).map(|f| format!("`{}`", Shown::new(f))).collect::<Vec<_>>().join(", ");
    if functions.len() > SHOWN {
        list.push_str(&format!(" and {} more", functions.len() - SHOWN));
    }
    format!("its exported functions: {list}")
}

/// Where a start's memory need comes from.
fn declared(memories: usize) -> String {
    match memories {
        0 | 1 => "its declared minimum".into(),
        n => format!("the declared minimums of its {n} memories together"),
    }
}

/// `1 GiB`, `64 MiB`, `12 KiB` or `1000 bytes`.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

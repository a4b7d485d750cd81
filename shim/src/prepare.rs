//! What a container will run, decided and loaded before libcontainer creates it, in the
//! container's zygote: the [`Workload`] of the bundle's spec and root file system, and a guest
//! compiled, or mapped from the node's compile cache. The container's first process is forked
//! from the zygote after this, so it starts with the guest loaded and only runs it; a
//! container that may not run is refused here, before it exists.
//!
//! The zygote must not start threads (a thread caught holding a lock at the fork would leave
//! the container's process stuck on it), so it compiles on one thread; the shim compiles each
//! guest first, on many, into the cache ([`compile_into_cache`]), and the zygote maps it.
//!
//! Compiling on the host, outside the container's cgroup and namespaces, is the price of a
//! cache no container can reach (runwasi's shims precompile in the shim too). With the cache
//! off ([`CACHE_VAR`]`=off`), nothing is compiled on the host: the guest is compiled inside
//! the container, at every start.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use runtime_spec::runtime::Spec;
use wrt_runtime::{CacheMode, Runtime};

use crate::workload::{Guest, Workload};

/// The environment variable (of containerd, and so of the shim) that places the node's cache of
/// compiled guests: a directory, or `off`. Unset, [`DEFAULT_CACHE_DIR`].
pub const CACHE_VAR: &str = "CONTAINERD_SHIM_WRT_CACHE";

/// Where compiled guests are cached on the node unless [`CACHE_VAR`] says otherwise. No
/// container sees it: the shim reads it on the host, before the container's root is in place.
pub const DEFAULT_CACHE_DIR: &str = "/var/cache/containerd-shim-wrt";

/// A container ready to be created.
#[derive(Debug)]
pub enum Prepared {
    /// A Kubernetes pod's sandbox container, run natively.
    PodSandbox,
    /// A guest, with its module loaded, or the reason it could not be (reported inside the
    /// container, on the task's stderr, as a run that did not start); `None` when the cache
    /// is off, and the container compiles it.
    Guest(Box<(Guest, Option<Loaded>)>),
}

/// A guest loaded, or why it could not be.
pub type Loaded = Result<wrt_runtime::Guest, String>;

static PREPARED: OnceLock<Prepared> = OnceLock::new();

/// In the zygote: decides what the container of `bundle` runs and loads its guest. `Err` when
/// the container may not run at all, with the reason.
pub fn prepare(bundle: &Path) -> Result<(), String> {
    let prepared = match workload(bundle)? {
        Workload::PodSandbox => Prepared::PodSandbox,
        Workload::Guest(guest) if matches!(cache(), CacheMode::Disabled) => Prepared::Guest(Box::new((guest, None))),
        Workload::Guest(mut guest) => {
            let bytes = std::mem::take(&mut guest.bytes);
            let loaded = load(&guest, &bytes, cache(), false);
            Prepared::Guest(Box::new((guest, Some(loaded))))
        }
    };
    PREPARED.set(prepared).map_err(|_| "the zygote prepared a container twice".to_owned())
}

/// Loads `guest` (its `bytes`) into a new runtime with `cache`, compiling on many threads or
/// on one.
pub fn load(guest: &Guest, bytes: &[u8], cache: CacheMode, parallel_compilation: bool) -> Loaded {
    runtime(cache, parallel_compilation)
        .and_then(|runtime| runtime.load_bytes(&name(guest), bytes))
        .map_err(|err| format!("{err:#}"))
}

/// In the container's first process: what [`prepare`] decided.
pub fn prepared() -> Option<&'static Prepared> {
    PREPARED.get()
}

/// In the shim: compiles the guest of `bundle` into the node's cache, on as many threads as
/// wasmtime likes. Errors are left for [`prepare`] to meet and report.
pub fn compile_into_cache(bundle: &Path) {
    if matches!(cache(), CacheMode::Disabled) {
        return;
    }
    if let Ok(Workload::Guest(guest)) = workload(bundle)
        && let Err(err) = load(&guest, &guest.bytes, cache(), true)
    {
        log::info!("the guest does not compile: {err}");
    }
}

/// The workload of the bundle's spec, in the bundle's root file system.
fn workload(bundle: &Path) -> Result<Workload, String> {
    let spec = Spec::load(bundle.join("config.json")).map_err(|err| format!("the container's spec: {err}"))?;
    let root = spec.root().as_ref().map_or_else(|| PathBuf::from("rootfs"), |root| root.path().clone());
    Workload::of(&spec, &bundle.join(root))
}

/// The runtime guests are loaded into: wrt's defaults and `cache`.
fn runtime(cache: CacheMode, parallel_compilation: bool) -> wrt_runtime::Result<Runtime> {
    Runtime::builder()
        .cache(cache)
        .parallel_compilation(parallel_compilation)
        .on_cache_unusable(|err| log::warn!("compiled guests are not cached: {err}"))
        .build()
}

/// The node's cache, from [`CACHE_VAR`].
fn cache() -> CacheMode {
    match std::env::var_os(CACHE_VAR) {
        None => CacheMode::Dir(PathBuf::from(DEFAULT_CACHE_DIR)),
        Some(value) if value == "off" => CacheMode::Disabled,
        Some(dir) if Path::new(&dir).is_absolute() => CacheMode::Dir(PathBuf::from(dir)),
        Some(dir) => {
            log::warn!("{CACHE_VAR}={dir:?} is not an absolute path: compiled guests are not cached");
            CacheMode::Disabled
        }
    }
}

/// The guest's name in wrt's messages: its file's name.
fn name(guest: &Guest) -> String {
    guest.module.file_name().map_or_else(|| guest.module.display().to_string(), |n| n.to_string_lossy().into_owned())
}

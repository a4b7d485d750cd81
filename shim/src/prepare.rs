//! What a container will run, decided and loaded before libcontainer creates it, in the
//! container's zygote: the [`Workload`] of the bundle's spec and root file system, and a guest
//! compiled, or loaded from the node's compile cache (a sealed copy of the entry, mapped: the
//! container holds no descriptor of the cache's files). The container's first process is forked
//! from the zygote after this, so it starts with the guest loaded and only runs it; a
//! container that may not run is refused here, before it exists.
//!
//! The zygote must not start threads (a thread caught holding a lock at the fork would leave
//! the container's process stuck on it), so it compiles on one thread; the shim compiles each
//! guest first, on many, into the cache ([`compile_into_cache`]), and the zygote maps it.
//!
//! Compiling on the host, outside the container's cgroup and namespaces, is the price of a
//! cache no container can reach (runwasi's shims precompile in the shim too). With the cache
//! off (`CONTAINERD_SHIM_WRT_CACHE=off`, [`node`](crate::node)), nothing is compiled on the host: the guest is compiled inside
//! the container, at every start.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use runtime_spec::runtime::Spec;
use wrt_runtime::{CacheMode, Runtime};

use crate::node::{SpawnCeiling, cache};
use crate::workload::{Guest, Workload};

/// A container ready to be created.
#[derive(Debug)]
pub enum Prepared {
    /// A Kubernetes pod's sandbox container, run natively.
    PodSandbox,
    /// A guest to run.
    Guest(Box<Ready>),
}

/// A guest ready to run in the container.
#[derive(Debug)]
pub struct Ready {
    /// The guest and what its container gives it.
    pub guest: Guest,
    /// Its module loaded, or the reason it could not be (reported inside the container, on the
    /// task's stderr, as a run that did not start); `None` when the cache is off, and the
    /// container compiles it.
    pub loaded: Option<Loaded>,
    /// The node's ceiling on the guest's spawn policy.
    pub spawn: SpawnCeiling,
}

/// A guest loaded, or why it could not be.
pub type Loaded = Result<wrt_runtime::Guest, String>;

static PREPARED: OnceLock<Prepared> = OnceLock::new();

/// In the zygote: decides what the container of `bundle` runs and loads its guest. `Err` when
/// the container may not run at all, with the reason.
pub fn prepare(bundle: &Path) -> Result<(), String> {
    let prepared = match workload(bundle)? {
        Workload::PodSandbox => Prepared::PodSandbox,
        Workload::Guest(mut guest) => {
            let spawn = SpawnCeiling::of_node()?;
            let loaded = match cache() {
                CacheMode::Disabled => None,
                cache => {
                    let bytes = std::mem::take(&mut guest.bytes);
                    Some(load(&guest, &bytes, cache, false))
                }
            };
            Prepared::Guest(Box::new(Ready { guest, loaded, spawn }))
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

/// The guest's name in wrt's messages: its file's name.
fn name(guest: &Guest) -> String {
    guest.module.file_name().map_or_else(|| guest.module.display().to_string(), |n| n.to_string_lossy().into_owned())
}

//! `containerd-shim-wrt-v1`: containerd's shim for the runtime `io.containerd.wrt.v1`. Each
//! container runs one wrt guest (a core module or a `wasi:cli/command` component, the image's
//! entrypoint) through `wrt-runtime`, with wrt's spawn policy, limits and audit log, configured
//! by the container's `WRT_*` environment variables (see [`config`]). A container whose
//! entrypoint is not WebAssembly is refused by name ([`workload`]); a Kubernetes pod's sandbox
//! container is the one exception.
//!
//! containerd starts the shim; the shim (on runwasi's containerd-shimkit) serves containerd's
//! task API with a [`WrtInstance`] per container, creates the container with youki's
//! libcontainer (namespaces, cgroup, root file system) and runs the guest inside it, as the
//! container's first process. [`image`] builds images for it.

pub mod config;
mod container;
mod executor;
pub mod guest;
pub mod image;
mod instance;
pub mod workload;

pub use instance::WrtInstance;

/// The shim's name: containerd's runtime `io.containerd.wrt.v1` runs `containerd-shim-wrt-v1`.
/// libcontainer keeps its state under `/run/containerd/wrt/<namespace>`.
pub const NAME: &str = "wrt";

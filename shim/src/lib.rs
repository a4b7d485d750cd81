//! `containerd-shim-wrt-v1`: containerd's shim for the runtime `io.containerd.wrt.v1`. Each
//! container runs one wrt guest (a core module or a `wasi:cli/command` component, the image's
//! entrypoint) through `wrt-runtime`, with wrt's spawn policy, limits and audit log, configured
//! by the container's `WRT_*` environment variables (see [`config`]). A container whose
//! entrypoint is not WebAssembly is refused by name ([`workload`]); a Kubernetes pod's sandbox
//! container is the one exception.
//!
//! containerd starts the shim ([`daemon`]); the shim serves containerd's task API ([`task`]),
//! with the runtime's [`options`], each container's [`metrics`] and new [`resources`] from its
//! [`cgroup`]. Before the container exists, its zygote
//! decides what it runs from the bundle and loads the guest, compiled once per node into a
//! cache no container sees ([`prepare`]); youki's libcontainer then creates the container
//! (namespaces, cgroup, root file system), whose first process runs the guest ([`guest`]).
//! [`image`] builds images for it.
//!
//! ```no_run
//! use wrt_shim::image::{Image, ImageFile};
//!
//! // An image archive for `ctr images import`: hello at /app.wasm, with busybox as /bin/sh.
//! let image = Image {
//!     name: "docker.io/library/hello:latest".into(),
//!     guest: "hello.wasm".into(),
//!     files: vec![ImageFile { source: "/bin/busybox".into(), path: "/bin/sh".into(), mode: 0o755 }],
//!     env: vec!["WRT_TIMEOUT=30s".into()],
//!     ..Image::default()
//! };
//! image.write(std::path::Path::new("/tmp"), std::path::Path::new("hello.tar"))?;
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod cgroup;
pub mod config;
mod container;
pub mod credentials;
pub mod daemon;
mod executor;
pub mod guest;
pub mod image;
#[cfg(test)]
mod import_graph;
mod instance;
pub mod metrics;
pub mod node;
pub mod options;
pub mod prepare;
pub mod resources;
pub mod task;
pub mod workload;

/// The shim's name: containerd's runtime `io.containerd.wrt.v1` runs `containerd-shim-wrt-v1`.
/// libcontainer keeps its state under `/run/containerd/wrt/<namespace>`.
pub const NAME: &str = "wrt";

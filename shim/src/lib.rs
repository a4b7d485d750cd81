//! `containerd-shim-wrt-v1`: containerd's shim for the runtime `io.containerd.wrt.v1`. Each
//! container runs one wrt guest (a core module or a `wasi:cli/command` component, the image's
//! entrypoint) through `wrt-runtime`, with wrt's spawn policy, limits and audit log, configured
//! by the container's `WRT_*` environment variables (see [`config`]).
//!
//! containerd starts the shim; the shim (runwasi's `containerd-shim-wasm`) creates the
//! container with youki's libcontainer (namespaces, cgroup, root file system) and calls
//! [`sandbox::WrtSandbox`] inside it, as the container's first process. [`image`] builds
//! images for it.

pub mod config;
pub mod image;
pub mod sandbox;

use containerd_shim_wasm::shim::{Shim, Version, version};

/// The shim: its name makes containerd's runtime `io.containerd.wrt.v1`.
#[derive(Debug)]
pub struct WrtShim;

impl Shim for WrtShim {
    type Sandbox = sandbox::WrtSandbox;

    fn name() -> &'static str {
        "wrt"
    }

    fn version() -> Version {
        version!()
    }
}

//! The shim's binary: containerd runs it as `containerd-shim-wrt-v1` (see the library's docs).

use containerd_shimkit::sandbox::cli::{Version, shim_main};
use wrt_shim::WrtInstance;

fn main() {
    // Nothing before `shim_main`: it forks the zygote that creates containers, which must
    // not inherit threads or engines.
    let version = Version { version: env!("CARGO_PKG_VERSION"), revision: "<none>" };
    shim_main::<WrtInstance>(wrt_shim::NAME, version, None);
}

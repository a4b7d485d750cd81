//! The shim's binary: containerd runs it as `containerd-shim-wrt-v1` (see the library's docs).

use containerd_shim_wasm::shim::Cli as _;
use wrt_shim::WrtShim;

fn main() {
    // Nothing before `run`: the shim forks its container processes from this one, which must
    // not have started threads or engines yet.
    WrtShim::run(None);
}

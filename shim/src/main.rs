//! The shim's binary: containerd runs it as `containerd-shim-wrt-v1` (see the library's docs).

fn main() {
    // Nothing before this: it forks the zygote that creates containers, which must not inherit
    // threads or engines.
    wrt_shim::daemon::main(env!("CARGO_PKG_VERSION"));
}

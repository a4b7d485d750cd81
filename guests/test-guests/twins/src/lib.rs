//! The SDK of the target the guests in `src/bin` are built for, as `twins::sdk`: `wrt-guest`
//! (`wrt_v1`) for wasm32-wasip1, where each bin `<suite>_<name>` is a core module, and
//! `wrt-process` (`wrt:process`) for wasm32-wasip2, where it is the component
//! `component_<name>`. A scenario is then written once and runs through both ABIs.

#[cfg(target_env = "p1")]
pub use wrt_guest as sdk;
#[cfg(target_env = "p2")]
pub use wrt_process as sdk;

#[cfg(not(any(target_env = "p1", target_env = "p2")))]
compile_error!("the twin guests build for wasm32-wasip1 (wrt-guest) or wasm32-wasip2 (wrt-process)");

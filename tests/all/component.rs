//! Component guests (`wasm32-wasip2`, built from `guests/components` on the SDK `wrt-process`):
//! each is a component that imports `wrt:process/process@0.1.0`.
//!
//! TODO(issue 12): once `wrt run` runs components, each test runs its guest as the `spawn`
//! module does for its core-module twin, and compares the two outputs.

use wrt_runtime::wasmtime::component::{Component, types::ComponentItem};
use wrt_runtime::wasmtime::{Config, Engine};
use wrt_test_guests::*;

foreach_component!(assert_test_exists);
use crate::assert_test_exists;

/// The names of the instances a component imports.
fn imports(bytes: &[u8]) -> Vec<String> {
    let engine = Engine::new(&Config::new()).unwrap();
    let component = Component::new(&engine, bytes).expect("a valid component");
    let ty = component.component_type();
    ty.imports(&engine)
        .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// The guest is a component that imports `wrt:process/process@0.1.0` (and, when it uses host
/// buffers, `wrt:process/buffers@0.1.0`), and the WASI 0.2 command interfaces.
#[track_caller]
fn check(bytes: &[u8], buffers: bool) {
    let imports = imports(bytes);
    assert!(imports.iter().any(|i| i == "wrt:process/process@0.1.0"), "{imports:?}");
    assert_eq!(imports.iter().any(|i| i == "wrt:process/buffers@0.1.0"), buffers, "{imports:?}");
    assert!(imports.iter().any(|i| i == "wasi:cli/environment@0.2.12"), "{imports:?}");
}

#[test]
fn core_modules_are_not_components() {
    let engine = Engine::new(&Config::new()).unwrap();
    assert!(Component::new(&engine, SPAWN_OUTPUT_BYTES).is_err());
}

#[test]
fn component_ls() {
    check(COMPONENT_LS_BYTES, false);
}

#[test]
fn component_output() {
    check(COMPONENT_OUTPUT_BYTES, false);
}

#[test]
fn component_status() {
    check(COMPONENT_STATUS_BYTES, false);
}

#[test]
fn component_env() {
    check(COMPONENT_ENV_BYTES, false);
}

#[test]
fn component_denied() {
    check(COMPONENT_DENIED_BYTES, false);
}

#[test]
fn component_timeout() {
    check(COMPONENT_TIMEOUT_BYTES, false);
}

#[test]
fn component_wait_any() {
    check(COMPONENT_WAIT_ANY_BYTES, false);
}

#[test]
fn component_too_many() {
    check(COMPONENT_TOO_MANY_BYTES, false);
}

#[test]
fn component_cwd() {
    check(COMPONENT_CWD_BYTES, false);
}

#[test]
fn component_kill() {
    check(COMPONENT_KILL_BYTES, false);
}

#[test]
fn component_pipeline() {
    check(COMPONENT_PIPELINE_BYTES, false);
}

#[test]
fn component_stdin_cat() {
    check(COMPONENT_STDIN_CAT_BYTES, false);
}

#[test]
fn component_buffers() {
    check(COMPONENT_BUFFERS_BYTES, true);
}

#[test]
fn component_bad_inputs() {
    check(COMPONENT_BAD_INPUTS_BYTES, true);
}

/// The twins print the same: `component_bad_inputs` is `spawn_bad_inputs` with the other SDK.
#[test]
fn component_bad_inputs_is_the_source_of_spawn_bad_inputs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("guests");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let core = read("programs/src/bin/spawn_bad_inputs.rs");
    let component = read("components/src/bin/component_bad_inputs.rs");
    let as_component = core.replace("use wrt_guest::", "use wrt_process::").replace(
        "Its component twin `component_bad_inputs` is the same source on `wrt-process`",
        "Its core-module twin `spawn_bad_inputs` is the same source on `wrt-guest`",
    );
    assert_eq!(as_component, component, "the twins' sources differ beyond the SDK");
}

//! The component guests: `components/` (bins `component_<name>`, on the SDK
//! `guests/sdk/process`), compiled to `wasm32-wasip2` components with a nested cargo, into the same
//! target directory as the core-module guests (another target, so its own subdirectory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The packages built for wasm32-wasip2 only; the wasm32-wasip1 build excludes them.
pub const PACKAGES: &[&str] = &["wrt-process", "components"];

/// Builds every bin of `fixtures/components` for wasm32-wasip2 in the guest workspace
/// `workspace` into `target_dir` and adds each to `guests_by_name` under its bin name.
pub fn add(
    workspace: &Path,
    fixtures: &Path,
    wit: &Path,
    target_dir: &Path,
    guests_by_name: &mut BTreeMap<String, PathBuf>,
) {
    for watched in [workspace.join("sdk"), fixtures.join("components"), wit.to_owned()] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    let status = super::plain_cargo(workspace, target_dir)
        .args(["build", "--release", "--locked", "--target=wasm32-wasip2", "-p", "components", "--bins"])
        .status()
        .expect("failed to run cargo for the component guests");
    assert!(
        status.success(),
        "building the component guests failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)"
    );
    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    for entry in super::read_dir_sorted(&fixtures.join("components/src/bin")) {
        if let Some(name) = super::stem_with_ext(&entry, "rs") {
            let wasm = wasm_dir.join(format!("{name}.wasm"));
            assert!(wasm.is_file(), "component guest `{name}` was not built at {}", wasm.display());
            let previous = guests_by_name.insert(name.clone(), wasm);
            assert!(previous.is_none(), "guest `{name}` exists both as a core module and as a component");
        }
    }
}

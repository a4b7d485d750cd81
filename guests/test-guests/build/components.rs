//! The component guests: `components/` (bins `component_<name>`, on the SDK
//! `sdk/process`) and the twins (`twins/`, bins `<suite>_<name>`, which become
//! `component_<name>`), compiled to `wasm32-wasip2` components with a nested cargo, into the same
//! target directory as the core-module guests (another target, so its own subdirectory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The packages built for wasm32-wasip2 only; the wasm32-wasip1 build excludes them (it builds
/// `twins` too, as core modules).
pub const PACKAGES: &[&str] = &["wrt-process", "components"];

/// Builds every bin of `fixtures/components` and `fixtures/twins` for wasm32-wasip2 in the guest
/// workspace `workspace` into `target_dir` and adds each to `guests_by_name`: a component guest
/// under its bin name, a twin `<suite>_<name>` as `component_<name>`. `sdk` is the repository's
/// folder of SDKs, watched for changes.
pub fn add(
    workspace: &Path,
    sdk: &Path,
    fixtures: &Path,
    wit: &Path,
    target_dir: &Path,
    guests_by_name: &mut BTreeMap<String, PathBuf>,
) {
    let tree_search = fixtures.join("tree-search");
    for watched in [sdk.to_owned(), fixtures.join("components"), tree_search, fixtures.join("twins"), wit.to_owned()] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    let status = super::plain_cargo(workspace, target_dir)
        .args(["build", "--release", "--locked", "--target=wasm32-wasip2", "-p", "components", "-p", "twins", "--bins"])
        .status()
        .expect("failed to run cargo for the component guests");
    assert!(
        status.success(),
        "building the component guests failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)"
    );
    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    let twins = super::read_dir_sorted(&fixtures.join("twins/src/bin")).into_iter().map(|entry| (entry, true));
    let components =
        super::read_dir_sorted(&fixtures.join("components/src/bin")).into_iter().map(|entry| (entry, false));
    for (entry, twin) in components.chain(twins) {
        let Some(bin) = super::stem_with_ext(&entry, "rs") else { continue };
        let name = if twin {
            let (_suite, rest) =
                bin.split_once('_').unwrap_or_else(|| panic!("twin guest `{bin}` has no suite prefix"));
            format!("component_{rest}")
        } else {
            bin.clone()
        };
        let wasm = wasm_dir.join(format!("{bin}.wasm"));
        assert!(wasm.is_file(), "component guest `{bin}` was not built at {}", wasm.display());
        let previous = guests_by_name.insert(name.clone(), wasm);
        assert!(previous.is_none(), "guest `{name}` exists both as a core module and as a component");
    }
}

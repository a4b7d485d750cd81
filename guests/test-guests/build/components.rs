//! The component guests: `components/` (bins `component_<name>`, on the SDK `sdk/process`), the
//! twins (`twins/`, bins `<suite>_<name>`, which become `component_<name>`) and the WASI 0.3
//! commands and the `wasi:http` services (`wasip3/`, bins `p3_<name>`, `serve_<name>` and
//! `bench_serve`), compiled to `wasm32-wasip2` components with a nested
//! cargo, into the same target directory as the core-module guests (another target, so its own
//! subdirectory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The packages built for wasm32-wasip2 only; the wasm32-wasip1 build excludes them (it builds
/// `twins` too, as core modules).
pub const PACKAGES: &[&str] = &["wrt-process", "components", "wasip3-guests"];

/// Builds every bin of `fixtures/components`, `fixtures/twins` and `fixtures/wasip3` for
/// wasm32-wasip2 in the guest workspace `workspace` into `target_dir` and adds each to
/// `guests_by_name`: a component guest (or a WASI 0.3 command) under its bin name, a twin
/// `<suite>_<name>` as `component_<name>`. `sdk` is the repository's folder of SDKs, watched for
/// changes.
pub fn add(
    workspace: &Path,
    sdk: &Path,
    fixtures: &Path,
    wit: &Path,
    target_dir: &Path,
    guests_by_name: &mut BTreeMap<String, PathBuf>,
) {
    let tree_search = fixtures.join("tree-search");
    for watched in [
        sdk.to_owned(),
        fixtures.join("components"),
        tree_search,
        fixtures.join("twins"),
        fixtures.join("wasip3"),
        wit.to_owned(),
    ] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    // The WASI 0.3 commands and services on their own: built with the others, their `wasip3`
    // would turn on wit-bindgen's `async` for the SDK too, and their dependencies would change
    // the symbols, so the bytes, of the committed benchmark components.
    for packages in [&["components", "twins"][..], &["wasip3-guests"]] {
        let mut cargo = super::plain_cargo(workspace, target_dir);
        if packages == ["wasip3-guests"] {
            // wit-bindgen's async runtime writes its source paths into panic locations, and
            // those lie in cargo's registry: named from where the registry is (`CARGO_HOME`), so
            // that the committed `bench_serve` has the same bytes on every machine.
            let home = std::env::var_os("CARGO_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
            if let Some(home) = home {
                let registry = home.join("registry").join("src");
                cargo.env(
                    "CARGO_ENCODED_RUSTFLAGS",
                    format!("--remap-path-prefix={}=/cargo/registry/src", registry.display()),
                );
            }
        }
        let status = cargo
            .args(["build", "--release", "--locked", "--target=wasm32-wasip2", "--bins"])
            .args(packages.iter().flat_map(|package| ["-p", package]))
            .status()
            .expect("failed to run cargo for the component guests");
        assert!(
            status.success(),
            "building the component guests failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)"
        );
    }
    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    let twins = super::read_dir_sorted(&fixtures.join("twins/src/bin")).into_iter().map(|entry| (entry, true));
    let components = ["components/src/bin", "wasip3/src/bin"]
        .into_iter()
        .flat_map(|bins| super::read_dir_sorted(&fixtures.join(bins)))
        .map(|entry| (entry, false));
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

//! Compiles every guest program in `programs/` to wasm32-wasip1 with a nested cargo in the guest
//! workspace `guests/` (its own target directory, so it never waits on the outer build's lock), the
//! component guests in `components/` to wasm32-wasip2 (`build/components.rs`), compiles the
//! AssemblyScript guest in `assemblyscript/` with its pinned `asc` (installed by `npm ci` on first
//! use), builds the Python and JavaScript components in `python/` and `js/` (`build/python.rs`,
//! `build/js.rs`), and writes `gen.rs`: one `pub const <NAME>: &str` path and one `<NAME>_BYTES`
//! per guest (Rust bins, `wat/*.wat`, `asc_buffers` and the components alike) and a
//! `foreach_<suite>!` macro per name prefix. Folders are this crate's (`guests/test-guests/`).
//!
//! Everything built, the nested target directory and the tools included, goes to one directory
//! per outer profile (`guests_dir`), not to `OUT_DIR`: `cargo clippy`, `cargo doc` and `cargo
//! build` each run this script with an `OUT_DIR` of their own, and would each build every guest
//! from nothing. Only `gen.rs` goes to `OUT_DIR`.

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/components.rs"]
mod components;
#[path = "build/js.rs"]
mod js;
#[path = "build/python.rs"]
mod python;
#[path = "build/stamp.rs"]
mod stamp;

/// Name prefixes of guests. A guest whose prefix is not listed fails the build, so every guest
/// belongs to a suite whose tests call `foreach_<suite>!(assert_test_exists)`.
const SUITES: &[&str] = &[
    "bench",
    "abi",
    "cache",
    "cli",
    "fs",
    "trap",
    "limits",
    "mem",
    "spawn",
    "buffer",
    "ref",
    "asc",
    "contain",
    "component",
    "p3",
    "serve",
    "py",
    "js",
];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    // The test guests' sources are this crate's folders; the guest workspace (`guests/`) holds
    // them, and the SDKs they link through its link `sdk` to the repository's `sdk/`.
    let fixtures = manifest_dir.clone();
    let workspace = manifest_dir.parent().expect("guest workspace dir").to_owned();
    let repository = workspace.parent().expect("repository root");
    let wit = repository.join("wit");
    let sdk = repository.join("sdk");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let guests_dir = guests_dir(&out_dir);
    std::fs::create_dir_all(&guests_dir).unwrap_or_else(|e| panic!("create {}: {e}", guests_dir.display()));
    // Two outer builds at once (an editor's check and a build) share the directory: one builds,
    // the other waits, then finds everything built.
    let lock_path = guests_dir.join(".lock");
    let lock = std::fs::File::create(&lock_path).unwrap_or_else(|e| panic!("create {}: {e}", lock_path.display()));
    lock.lock().unwrap_or_else(|e| panic!("lock {}: {e}", lock_path.display()));
    let target_dir = guests_dir.join("target");

    for watched in [workspace.join("Cargo.toml"), workspace.join("Cargo.lock"), sdk.clone()] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    for watched in ["programs", "tree-search", "twins", "wat"] {
        println!("cargo:rerun-if-changed={}", fixtures.join(watched).display());
    }

    let status = plain_cargo(&workspace, &target_dir)
        .args(["build", "--release", "--locked", "--target=wasm32-wasip1", "--workspace", "--bins"])
        .args(components::PACKAGES.iter().flat_map(|package| ["--exclude", package]))
        .status()
        .expect("failed to run cargo for the guests");
    assert!(
        status.success(),
        "building the guests failed (is the wasm32-wasip1 target installed? `rustup target add wasm32-wasip1`)"
    );
    let wasm_dir = target_dir.join("wasm32-wasip1").join("release");

    let mut guests_by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    // The twins' core modules keep their bin names; `build/components.rs` adds their components.
    for bins in ["programs/src/bin", "twins/src/bin"] {
        for entry in read_dir_sorted(&fixtures.join(bins)) {
            if let Some(name) = stem_with_ext(&entry, "rs") {
                let wasm = wasm_dir.join(format!("{name}.wasm"));
                assert!(wasm.is_file(), "guest `{name}` was not built at {}", wasm.display());
                let previous = guests_by_name.insert(name.clone(), wasm);
                assert!(previous.is_none(), "guest `{name}` is both in programs/ and in twins/");
            }
        }
    }
    for entry in read_dir_sorted(&fixtures.join("wat")) {
        if let Some(name) = stem_with_ext(&entry, "wat") {
            let previous = guests_by_name.insert(name.clone(), entry.clone());
            assert!(previous.is_none(), "guest `{name}` exists both as Rust and as WAT");
        }
    }
    components::add(&workspace, &sdk, &fixtures, &wit, &target_dir, &mut guests_by_name);
    let asc_wasm = build_assemblyscript(&fixtures.join("assemblyscript"), &guests_dir);
    let previous = guests_by_name.insert(ASC_GUEST.to_owned(), asc_wasm);
    assert!(previous.is_none(), "guest `{ASC_GUEST}` exists both as Rust or WAT and as AssemblyScript");
    add_guests(&mut guests_by_name, python::build(&fixtures, &wit, &guests_dir), "Python");
    add_guests(&mut guests_by_name, js::build(&fixtures, &wit, &guests_dir), "JavaScript");

    let mut generated = String::new();
    let mut suites: BTreeMap<&str, Vec<&str>> = SUITES.iter().map(|s| (*s, Vec::new())).collect();
    for (name, path) in &guests_by_name {
        let suite = name.split('_').next().unwrap_or_default();
        let Some(members) = suites.get_mut(suite) else {
            panic!("guest `{name}` has unknown suite prefix `{suite}` (known: {SUITES:?})");
        };
        members.push(name);
        writeln!(
            generated,
            "/// Path of the guest `{name}`.\npub const {upper}: &str = {path:?};\n\
             /// The bytes of the guest `{name}` (binary, or text for a WAT guest), built into the binary.\n\
             pub const {upper}_BYTES: &[u8] = include_bytes!({path:?});",
            upper = name.to_uppercase(),
            path = path.display().to_string()
        )
        .unwrap();
    }
    for (suite, members) in &suites {
        writeln!(generated, "/// Calls `$mac!(name)` for every guest of the `{suite}` suite.").unwrap();
        writeln!(generated, "#[macro_export]\nmacro_rules! foreach_{suite} {{\n    ($mac:ident) => {{").unwrap();
        for name in members {
            writeln!(generated, "        $mac!({name});").unwrap();
        }
        writeln!(generated, "    }};\n}}").unwrap();
    }
    std::fs::write(out_dir.join("gen.rs"), generated).expect("write gen.rs");
}

/// Where the guests are built: `wrt-test-guests` in the outer profile's directory (`OUT_DIR` is
/// `<target>/<profile>/build/<package>-<hash>/out`), shared by the builds of every mode of that
/// profile; `OUT_DIR` itself if it is not laid out so.
fn guests_dir(out_dir: &Path) -> PathBuf {
    let in_build = out_dir.ancestors().nth(2).and_then(Path::file_name) == Some("build".as_ref());
    match out_dir.ancestors().nth(3) {
        Some(profile) if in_build => profile.join("wrt-test-guests"),
        _ => out_dir.to_owned(),
    }
}

/// The AssemblyScript guest's name (and the stem of its `.wasm` in the guests' directory).
const ASC_GUEST: &str = "asc_buffers";

/// Compiles `dir/assembly` with the `asc` pinned in `dir/package-lock.json` (running `npm ci`
/// first if it is not installed) into `guests_dir/asc_buffers.wasm`, and returns that path.
fn build_assemblyscript(dir: &Path, guests_dir: &Path) -> PathBuf {
    for watched in ["assembly", "asconfig.json", "package.json", "package-lock.json"] {
        println!("cargo:rerun-if-changed={}", dir.join(watched).display());
    }
    let asc = dir.join("node_modules/.bin/asc");
    if !asc.is_file() {
        let mut npm = Command::new("npm");
        npm.current_dir(dir).args(["ci", "--no-audit", "--no-fund"]);
        let status = npm.status().unwrap_or_else(|e| {
            panic!("failed to run `npm ci` ({e}): the AssemblyScript guest needs Node.js >= 20 and npm on PATH")
        });
        assert!(status.success(), "`npm ci` in {} failed (is the npm registry reachable?)", dir.display());
        assert!(asc.is_file(), "`npm ci` in {} did not install {}", dir.display(), asc.display());
    }
    let wasm = guests_dir.join(format!("{ASC_GUEST}.wasm"));
    // `node <script>` rather than the script's `#!/usr/bin/env node`, so a missing node is named.
    let status = Command::new("node")
        .current_dir(dir)
        .arg(&asc)
        .args(["--config", "asconfig.json", "--target", "release", "--outFile"])
        .arg(&wasm)
        .status()
        .unwrap_or_else(|e| panic!("failed to run node ({e}): the AssemblyScript guest needs Node.js >= 20 on PATH"));
    assert!(status.success(), "compiling the AssemblyScript guest in {} failed", dir.display());
    assert!(wasm.is_file(), "guest `{ASC_GUEST}` was not built at {}", wasm.display());
    wasm
}

/// Adds guests built in another language, refusing a name that is taken.
fn add_guests(guests_by_name: &mut BTreeMap<String, PathBuf>, built: Vec<(String, PathBuf)>, language: &str) {
    for (name, path) in built {
        assert!(path.is_file(), "{language} guest `{name}` was not built at {}", path.display());
        let previous = guests_by_name.insert(name.clone(), path);
        assert!(previous.is_none(), "guest `{name}` exists both in {language} and in another language");
    }
}

/// The WIT world a component guest's source asks for on a line `<comment> world: NAME`, or
/// `command`.
fn world_of(source: &Path, comment: &str) -> String {
    let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("read {}: {e}", source.display()));
    let world = text.lines().find_map(|line| line.strip_prefix(comment)?.trim().strip_prefix("world:"));
    world.map_or("command", str::trim).to_owned()
}

/// A nested cargo in the guest workspace `workspace` building into `target_dir` with plain rustc, whatever drives the
/// outer build: under `cargo clippy` the wrapper would compile the guests too, and their bytes
/// would differ from a plain build's; the outer build's flags and target are not the guests'.
fn plain_cargo(workspace: &Path, target_dir: &Path) -> Command {
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace).env("CARGO_TARGET_DIR", target_dir);
    for inherited in [
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        command.env_remove(inherited);
    }
    command
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    entries
}

fn stem_with_ext(path: &Path, ext: &str) -> Option<String> {
    (path.extension()? == ext).then(|| path.file_stem()?.to_str().map(str::to_owned))?
}

//! Builds the Python guests: every `guests/test-guests/python/src/<name>.py` becomes the component
//! `<guests dir>/<name>.wasm` (the build script's shared directory), built by componentize-py
//! against the WIT package in `wit/` (world `command`, or the one a `# world: NAME` line names).
//! componentize-py is installed, pinned by hash (`guests/test-guests/python/requirements.txt`),
//! into a venv under that directory on first use, and reinstalled when the requirements change.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::stamp::Inputs;

/// The Python guests, as (name, component path).
pub fn build(fixtures: &Path, wit: &Path, guests_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = fixtures.join("python");
    let wit = wit.to_owned();
    for watched in [dir.join("src"), dir.join("requirements.txt"), wit.clone()] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    let requirements = dir.join("requirements.txt");
    let componentize_py = install(&requirements, &guests_dir.join("python-venv"));

    let mut built = Vec::new();
    for source in crate::read_dir_sorted(&dir.join("src")) {
        let Some(name) = crate::stem_with_ext(&source, "py") else { continue };
        let world = crate::world_of(&source, "#");
        let wasm = guests_dir.join(format!("{name}.wasm"));
        let inputs = Inputs::default().file(&requirements).dir(&wit).file(&source).arg(&world);
        if !inputs.up_to_date(&wasm) {
            // componentize-py imports the app to snapshot it, which writes `__pycache__` next to
            // it: build from a copy, so the source tree stays clean.
            let stage = guests_dir.join("python-src").join(&name);
            std::fs::create_dir_all(&stage).unwrap_or_else(|e| panic!("create {}: {e}", stage.display()));
            let staged = stage.join(format!("{name}.py"));
            std::fs::copy(&source, &staged).unwrap_or_else(|e| panic!("copy {}: {e}", source.display()));
            let status = Command::new(&componentize_py)
                .arg("--wit-path")
                .arg(&wit)
                .args(["--world", &world, "componentize", "--python-path"])
                .arg(&stage)
                .arg("--output")
                .arg(&wasm)
                .arg(&name)
                .status()
                .unwrap_or_else(|e| panic!("failed to run {} ({e})", componentize_py.display()));
            assert!(status.success(), "componentize-py failed on the Python guest `{name}` ({})", source.display());
            inputs.record(&wasm);
        }
        built.push((name, wasm));
    }
    built
}

/// Installs the requirements into the venv `venv` unless it holds exactly them, and returns the
/// path of its `componentize-py`.
fn install(requirements: &Path, venv: &Path) -> PathBuf {
    let componentize_py = venv.join("bin/componentize-py");
    let wanted = std::fs::read(requirements).unwrap_or_else(|e| panic!("read {}: {e}", requirements.display()));
    let installed = venv.join("wrt-requirements.txt");
    if componentize_py.is_file() && std::fs::read(&installed).is_ok_and(|have| have == wanted) {
        return componentize_py;
    }
    if venv.exists() {
        std::fs::remove_dir_all(venv).unwrap_or_else(|e| panic!("remove {}: {e}", venv.display()));
    }
    let status = Command::new("python3").args(["-m", "venv"]).arg(venv).status().unwrap_or_else(|e| {
        panic!("failed to run `python3 -m venv` ({e}): the Python guests need Python >= 3.10 on PATH")
    });
    assert!(
        status.success(),
        "`python3 -m venv {}` failed (on Debian and Ubuntu, install python3-venv)",
        venv.display()
    );
    let status = Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"])
        .args(["--only-binary=:all:", "--require-hashes", "--requirement"])
        .arg(requirements)
        .status()
        .unwrap_or_else(|e| panic!("failed to run pip in {} ({e})", venv.display()));
    assert!(status.success(), "installing {} failed (is PyPI reachable?)", requirements.display());
    assert!(componentize_py.is_file(), "pip did not install {}", componentize_py.display());
    std::fs::write(&installed, wanted).unwrap_or_else(|e| panic!("write {}: {e}", installed.display()));
    componentize_py
}

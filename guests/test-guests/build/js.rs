//! Builds the JavaScript guests: every `guests/test-guests/js/src/<name>.js` becomes the component
//! `<guests dir>/<name>.wasm` (the build script's shared directory), built by componentize-js
//! against the WIT package in `wit/` (world `command`, or the one a `// world: NAME` line names).
//! componentize-js and jco are installed with `npm ci` from
//! `guests/test-guests/js/package-lock.json` into `<guests dir>/js-tools` on first use, and again
//! when either file changes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::stamp::Inputs;

/// The JavaScript guests, as (name, component path).
pub fn build(fixtures: &Path, wit: &Path, guests_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = fixtures.join("js");
    let wit = wit.to_owned();
    for watched in [dir.join("src"), dir.join("package.json"), dir.join("package-lock.json"), wit.clone()] {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    let tools = guests_dir.join("js-tools");
    let componentize_js = install(&dir, &tools);

    let mut built = Vec::new();
    for source in crate::read_dir_sorted(&dir.join("src")) {
        let Some(name) = crate::stem_with_ext(&source, "js") else { continue };
        let world = crate::world_of(&source, "//");
        let wasm = guests_dir.join(format!("{name}.wasm"));
        let inputs = Inputs::default().file(&dir.join("package-lock.json")).dir(&wit).file(&source).arg(&world);
        if !inputs.up_to_date(&wasm) {
            // `node <script>` rather than the script's `#!/usr/bin/env node`, so a missing node is
            // named. No `wasi:http`: wrt does not provide it, and the guests do not use `fetch`.
            let status = Command::new("node")
                .arg(&componentize_js)
                .arg(&source)
                .arg("--wit")
                .arg(&wit)
                .args(["--world-name", &world, "--disable", "http", "fetch-event", "--out"])
                .arg(&wasm)
                .status()
                .unwrap_or_else(|e| {
                    panic!("failed to run node ({e}): the JavaScript guests need Node.js >= 20 on PATH")
                });
            assert!(status.success(), "componentize-js failed on the JavaScript guest `{name}` ({})", source.display());
            inputs.record(&wasm);
        }
        built.push((name, wasm));
    }
    built
}

/// Runs `npm ci` in `tools` with `dir`'s package.json and lockfile unless it already installed
/// exactly those, and returns the path of componentize-js's command-line script.
fn install(dir: &Path, tools: &Path) -> PathBuf {
    let cli = tools.join("node_modules/@bytecodealliance/componentize-js/src/cli.js");
    let package = std::fs::read(dir.join("package.json")).expect("read guests/test-guests/js/package.json");
    let lock = std::fs::read(dir.join("package-lock.json")).expect("read guests/test-guests/js/package-lock.json");
    let wanted = [package.as_slice(), lock.as_slice()].concat();
    let installed = tools.join("wrt-installed");
    if cli.is_file() && std::fs::read(&installed).is_ok_and(|have| have == wanted) {
        return cli;
    }
    if tools.exists() {
        std::fs::remove_dir_all(tools).unwrap_or_else(|e| panic!("remove {}: {e}", tools.display()));
    }
    std::fs::create_dir_all(tools).unwrap_or_else(|e| panic!("create {}: {e}", tools.display()));
    std::fs::write(tools.join("package.json"), &package).expect("copy guests/test-guests/js/package.json");
    std::fs::write(tools.join("package-lock.json"), &lock).expect("copy guests/test-guests/js/package-lock.json");
    let status =
        Command::new("npm").current_dir(tools).args(["ci", "--no-audit", "--no-fund"]).status().unwrap_or_else(|e| {
            panic!("failed to run `npm ci` ({e}): the JavaScript guests need Node.js >= 20 and npm on PATH")
        });
    assert!(status.success(), "`npm ci` in {} failed (is the npm registry reachable?)", tools.display());
    assert!(cli.is_file(), "`npm ci` in {} did not install {}", tools.display(), cli.display());
    // Last: what was installed, which marks the install as complete.
    std::fs::write(&installed, wanted).unwrap_or_else(|e| panic!("write {}: {e}", installed.display()));
    cli
}

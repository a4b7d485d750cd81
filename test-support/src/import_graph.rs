//! The rule that keeps a crate's layers apart, for every crate of the workspace to check on
//! itself: no top-level module (a file beside the crate root and its folder) imports, directly
//! or through others, a module that imports it back; and inside every folder, no file (or
//! sub-folder) imports, directly or through others, one beside it that imports it back. A piece
//! two of them share lives in a file of its own below both.
//!
//! The checker reads the sources as the compiler finds them, from each root file of the
//! package (`src/lib.rs`, `src/main.rs`, `src/bin/`, `build.rs`, `tests/`, `benches/`,
//! `examples/` and the `path`s `Cargo.toml` gives its targets) through every `mod` line and its
//! `#[path]`, whatever `cfg` it is under. An import is a `crate::`, `super::` or `self::` path
//! that reaches another module, or a `use` of a child module; a name that a module's `use`
//! items bring in (the crate root's `pub use outcome::Outcome`) counts for the module it comes
//! from. Comments and string literals name nothing.
//!
//! # Examples
//!
//! ```no_run
//! // In a `#[cfg(test)]` module of the crate:
//! wrt_test_support::import_graph::assert_no_circles(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
//! ```

mod graph;
mod modules;
mod scan;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use graph::{Graph, circles_in, describe, folders, top_level};
pub use modules::{Crate, File};

/// The root files of the package at `manifest_dir`, relative to it: every crate of it, its
/// tests, benches and examples included.
pub fn crate_roots(manifest_dir: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for file in ["src/lib.rs", "src/main.rs", "build.rs"] {
        roots.push(PathBuf::from(file));
    }
    for folder in ["src/bin", "tests", "benches", "examples"] {
        let Ok(entries) = std::fs::read_dir(manifest_dir.join(folder)) else { continue };
        for entry in entries.flatten() {
            let name = PathBuf::from(folder).join(entry.file_name());
            if name.extension().is_some_and(|e| e == "rs") {
                roots.push(name);
            } else {
                roots.push(name.join("main.rs"));
            }
        }
    }
    // Targets at paths of their own: `path = "…"` under `[lib]`, `[[bin]]`, `[[test]]`, ….
    let manifest = std::fs::read_to_string(manifest_dir.join("Cargo.toml")).unwrap_or_default();
    let mut in_target = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_target = ["[lib]", "[[bin]]", "[[test]]", "[[bench]]", "[[example]]"].contains(&line);
        } else if let Some(value) = line.strip_prefix("path").map(str::trim_start).and_then(|l| l.strip_prefix('='))
            && in_target
        {
            roots.push(PathBuf::from(value.trim().trim_matches('"')));
        }
    }
    roots.retain(|root| manifest_dir.join(root).is_file());
    roots.sort();
    roots.dedup();
    roots
}

/// Every circle in the crates of the package at `manifest_dir`, at each crate's top level and
/// inside each folder, each described with the imports that close it; empty when there is none.
pub fn circles(manifest_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for root in crate_roots(manifest_dir) {
        let krate = Crate::read(manifest_dir, &root);
        let graph = top_level(&krate);
        let top = circles_in(&graph);
        if !top.is_empty() {
            found.push(format!("between the top-level modules of `{}`:\n{}", root.display(), describe(&graph, &top)));
        }
        for (folder, graph) in folders(&krate) {
            let inside = circles_in(&graph);
            if !inside.is_empty() {
                found.push(format!(
                    "between the files of `{folder}/` of `{}`:\n{}",
                    root.display(),
                    describe(&graph, &inside)
                ));
            }
        }
    }
    found
}

/// Panics naming every circle in the crates of the package at `manifest_dir` (see
/// [`circles`]).
///
/// # Panics
///
/// When there is a circle, or the package has no crate root.
pub fn assert_no_circles(manifest_dir: &Path) {
    assert!(!crate_roots(manifest_dir).is_empty(), "no crate root under `{}`", manifest_dir.display());
    let found = circles(manifest_dir);
    assert!(found.is_empty(), "import circles in `{}`:\n{}", manifest_dir.display(), found.join("\n"));
}

//! Skips rebuilding a component whose inputs did not change: the build script reruns whenever any
//! guest source changes, and a Python or JavaScript component takes seconds to build.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// What a component is built from: files (their paths and contents) and the build's arguments.
#[derive(Default)]
pub struct Inputs(DefaultHasher);

impl Inputs {
    /// Adds a file's path and bytes.
    pub fn file(mut self, path: &Path) -> Self {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        path.hash(&mut self.0);
        bytes.hash(&mut self.0);
        self
    }

    /// Adds every file under `dir`, in path order.
    pub fn dir(mut self, dir: &Path) -> Self {
        let mut files = Vec::new();
        walk(dir, &mut files);
        files.sort();
        for file in files {
            self = self.file(&file);
        }
        self
    }

    /// Adds a build argument.
    pub fn arg(mut self, arg: &str) -> Self {
        arg.hash(&mut self.0);
        self
    }

    /// True if `output` exists and was built from these inputs (its stamp file says so).
    pub fn up_to_date(&self, output: &Path) -> bool {
        output.is_file() && std::fs::read_to_string(stamp_path(output)).is_ok_and(|s| s == self.stamp())
    }

    /// Records that `output` was built from these inputs.
    pub fn record(&self, output: &Path) {
        let path = stamp_path(output);
        std::fs::write(&path, self.stamp()).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    fn stamp(&self) -> String {
        format!("{:016x}\n", self.0.finish())
    }
}

fn stamp_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().expect("output file name").to_owned();
    name.push(".stamp");
    output.with_file_name(name)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() { walk(&path, files) } else { files.push(path) }
    }
}

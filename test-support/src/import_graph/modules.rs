//! A crate's modules, found as the compiler finds them: from the root file, through every
//! `mod name;` line (and its `#[path]`), whatever `cfg` it is under; and what each path a file
//! names reaches, through the names that `use` items bring into a module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::scan::{PathUse, Start, scan};

/// The names each module's `use` items bring in: module -> name -> where the path starts and
/// its segments.
type Bindings = BTreeMap<Vec<String>, BTreeMap<String, (Start, Vec<String>)>>;

/// One file of a crate.
#[derive(Debug, Clone)]
pub struct File {
    /// Where it is, relative to the folder the checker was given.
    pub path: PathBuf,
    /// Its module, from the crate root (`["abi", "host"]` for `src/abi/host.rs`, `[]` for the
    /// root).
    pub module: Vec<String>,
    /// The paths it names.
    pub(crate) paths: Vec<PathUse>,
}

/// A crate: its files, each the text of one module.
#[derive(Debug, Clone)]
pub struct Crate {
    /// Its root file, relative to the folder the checker was given.
    pub root: PathBuf,
    /// Every file, the root first.
    pub files: Vec<File>,
    /// The names each module's `use` items bring in: module -> name -> path.
    bindings: Bindings,
    modules: BTreeSet<Vec<String>>,
}

impl Crate {
    /// Reads the crate whose root file is `base/root` (`src/lib.rs`, `src/main.rs`,
    /// `build.rs`) and every module file it declares.
    ///
    /// # Panics
    ///
    /// When a file cannot be read. A `mod` line whose file does not exist is left out (the
    /// compiler would have said so; such a line is in a `cfg` this checker does not read).
    pub fn read(base: &Path, root: &Path) -> Crate {
        let mut files = Vec::new();
        // The file, its module, and the folder its child modules' files are in.
        let root_dir = root.parent().unwrap_or(Path::new("")).to_owned();
        let mut pending = vec![(root.to_owned(), Vec::<String>::new(), root_dir)];
        while let Some((path, module, children)) = pending.pop() {
            let text = std::fs::read_to_string(base.join(&path))
                .unwrap_or_else(|e| panic!("cannot read `{}`: {e}", base.join(&path).display()));
            let found = scan(&text, &module);
            let here = path.parent().unwrap_or(Path::new("")).to_owned();
            for line in found.mods {
                let mut child_module = module.clone();
                child_module.extend(line.inside.iter().cloned());
                child_module.push(line.name.clone());
                // An inline module's children are in a folder named for it.
                let folder = line.inside.iter().fold(children.clone(), |dir, name| dir.join(name));
                let (file, grandchildren) = match &line.path {
                    // `#[path]` outside inline modules is relative to the file's own folder.
                    Some(attr) if line.inside.is_empty() => {
                        let file = here.join(attr);
                        let dir = file.parent().unwrap_or(Path::new("")).join(file.file_stem().unwrap_or_default());
                        let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
                            file.parent().unwrap_or(Path::new("")).to_owned()
                        } else {
                            dir
                        };
                        (file, dir)
                    }
                    Some(attr) => (folder.join(attr), folder.join(&line.name)),
                    None => {
                        let flat = folder.join(format!("{}.rs", line.name));
                        if base.join(&flat).is_file() {
                            (flat, folder.join(&line.name))
                        } else {
                            (folder.join(&line.name).join("mod.rs"), folder.join(&line.name))
                        }
                    }
                };
                if base.join(&file).is_file() {
                    pending.push((file, child_module, grandchildren));
                }
            }
            files.push(File { path, module, paths: found.paths });
        }
        files.sort_by(|a, b| a.module.cmp(&b.module));
        let modules = files.iter().map(|file| file.module.clone()).collect();
        let mut bindings = Bindings::new();
        for file in &files {
            for path in &file.paths {
                if let Some(name) = &path.binds {
                    bindings
                        .entry(path.scope.clone())
                        .or_default()
                        .entry(name.clone())
                        .or_insert_with(|| (path.start.clone(), path.segments.clone()));
                }
            }
        }
        Crate { root: root.to_owned(), files, bindings, modules }
    }

    /// Whether `module` has a file of its own.
    pub fn has_file(&self, module: &[String]) -> bool {
        self.modules.contains(module)
    }

    /// The modules (from the crate root) that `file` names, each the innermost module with a
    /// file of its own that holds what the path names: `crate::abi::host::io::read` reaches
    /// `abi/host/io`. A name that one of the file's ancestors (the crate root, the module of its
    /// folder) brings in with `use` counts for the module it comes from: `crate::Thing`,
    /// re-exported by the root from `outcome`, reaches `outcome`; a name another module
    /// re-exports counts for that module, whose name the path spells. A path to another crate
    /// reaches nothing.
    pub fn reached_by(&self, file: &File) -> BTreeSet<Vec<String>> {
        file.paths
            .iter()
            .filter_map(|path| self.reached(&path.start, &path.segments, &path.scope, &file.module, 0))
            .collect()
    }

    /// The innermost module with a file that `segments`, starting at `start` in `scope`,
    /// reaches from the file of the module `own`; `None` for another crate's path.
    fn reached(
        &self,
        start: &Start,
        segments: &[String],
        scope: &[String],
        own: &[String],
        hops: usize,
    ) -> Option<Vec<String>> {
        // A chain of re-exports longer than this is a loop (`use a::b; use b::a;` is an error).
        if hops > 16 {
            return None;
        }
        let mut at: Vec<String> = match start {
            Start::Root => Vec::new(),
            Start::Here => {
                let first = segments.first()?;
                let binding = self.bindings.get(scope).and_then(|names| names.get(first));
                let child = scope.iter().chain([first]).cloned().collect::<Vec<_>>();
                if self.modules.contains(&child) {
                    scope.to_vec()
                } else if let Some((start, target)) = binding.filter(|(_, target)| target.as_slice() != segments) {
                    let through: Vec<String> = target.iter().chain(&segments[1..]).cloned().collect();
                    return self.reached(start, &through, scope, own, hops + 1);
                } else {
                    // Another crate (`std::fmt`), or an item of this module.
                    return None;
                }
            }
        };
        // The inline modules a scope names have no file: a path from one starts in its file's
        // module.
        for (i, segment) in segments.iter().enumerate() {
            let next: Vec<String> = at.iter().chain([segment]).cloned().collect();
            if self.modules.contains(&next) {
                at = next;
                continue;
            }
            let binding = self.bindings.get(&at).and_then(|names| names.get(segment));
            if let Some((start, target)) = binding.filter(|_| own.starts_with(&at)) {
                let through: Vec<String> = target.iter().chain(&segments[i + 1..]).cloned().collect();
                return self.reached(start, &through, &at, own, hops + 1);
            }
            break;
        }
        Some(at)
    }
}

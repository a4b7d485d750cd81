//! The rule that keeps the crate's layers apart: no top-level module (a file under `src/` and
//! its folder) imports, directly or through others, a module that imports it back
//! (docs/design.md, "Inside `wrt-runtime`"); and inside every folder, no file (or sub-folder)
//! imports, directly or through others, one beside it that imports it back. The workspace's one
//! checker (`wrt_test_support::import_graph`) reads the sources and names every circle it
//! finds; the module table of docs/design.md is held to the same graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use wrt_test_support::import_graph::{self, Crate};

/// The crate's modules, read from `src/lib.rs`.
fn runtime() -> Crate {
    Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")), Path::new("src/lib.rs"))
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let krate = runtime();
    // The reader sees the imports at all: the embedding API reaches the adapters, and the
    // component layer reaches its WIT bindings.
    let graph = import_graph::top_level(&krate);
    assert!(graph.get("runtime").is_some_and(|edges| edges.contains_key("abi")), "{graph:#?}");
    let folders = import_graph::folders(&krate);
    assert!(folders.get("component").is_some_and(|graph| graph.contains_key("process")), "{folders:#?}");
    import_graph::assert_no_circles(Path::new(env!("CARGO_MANIFEST_DIR")));
}

/// The names in backticks in `cell`, without a trailing `.rs` or `/`.
fn names_in(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|name| name.trim_end_matches('/').trim_end_matches(".rs").to_owned())
        .collect()
}

/// docs/design.md's table of the runtime's modules lists, for each module, exactly the modules
/// it imports.
#[test]
fn the_design_table_lists_what_each_module_imports() {
    let graph = import_graph::top_level(&runtime());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(root.join("../docs/design.md")).expect("docs/design.md");
    let table = design.split("| module | owns | imports (within the crate) |").nth(1).expect("the module table");
    let mut listed = BTreeSet::new();
    for row in table.lines().skip(2).take_while(|line| line.starts_with('|')) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let (modules, imports) = (names_in(cells[0]), names_in(cells[cells.len() - 1]));
        for module in modules {
            let actual: BTreeSet<String> = graph.get(&module).into_iter().flat_map(BTreeMap::keys).cloned().collect();
            assert_eq!(imports, actual, "docs/design.md lists other imports for `{module}` than the code has");
            listed.insert(module);
        }
    }
    let unlisted: Vec<&String> =
        graph.keys().filter(|module| !listed.contains(*module) && *module != "import_graph").collect();
    assert!(unlisted.is_empty(), "docs/design.md's module table leaves out {unlisted:?}");
}

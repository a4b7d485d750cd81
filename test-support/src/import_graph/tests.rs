use std::path::{Path, PathBuf};

use super::{Crate, circles, circles_in, describe, folders, top_level};

/// A package in a fresh temporary folder, with `files` (path, text) written into it.
struct Package(PathBuf);

impl Package {
    fn new(files: &[(&str, &str)]) -> Package {
        let dir = std::env::temp_dir().join(format!("import-graph-{}", crate::token()));
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
            std::fs::write(path, text).expect("write the file");
        }
        Package(dir)
    }
}

impl Drop for Package {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn edge(graph: &super::Graph, from: &str, to: &str) -> bool {
    graph.get(from).is_some_and(|edges| edges.contains_key(to))
}

#[test]
fn a_back_edge_between_top_level_modules_is_named() {
    let package = Package::new(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use d::{g as Thing};\n"),
        ("src/a.rs", "use crate::b::Thing;\n"),
        ("src/b.rs", "mod inner;\n"),
        ("src/b/inner.rs", "use super::super::{c, a::Other};\n// crate::d is a comment\n"),
        ("src/c.rs", "fn f() { let _ = \"crate::d\"; let _ = '{'; }\nmod tests {\n    use super::d;\n}\n"),
        ("src/d.rs", "pub(crate) fn g() {}\n"),
        ("src/e.rs", "fn f() -> crate::Thing { todo!() }\npub(in crate::a) fn h() {}\n"),
    ]);
    let krate = Crate::read(&package.0, Path::new("src/lib.rs"));
    let graph = top_level(&krate);
    assert_eq!(circles_in(&graph), vec![vec!["a".to_owned(), "b".to_owned()]]);
    let text = describe(&graph, &circles_in(&graph));
    assert!(text.contains("a -> b (in src/a.rs)") && text.contains("b -> a (in src/b/inner.rs)"), "{text}");
    // Neither a comment, a string nor a `super::` inside an inline module of `c` leaves it.
    assert!(!edge(&graph, "c", "d"), "{graph:#?}");
    assert!(edge(&graph, "b", "c"), "{graph:#?}");
    // A name the crate root re-exports imports the module it comes from; a visibility is no
    // import.
    assert!(edge(&graph, "e", "d") && !edge(&graph, "e", "a"), "{graph:#?}");
    let found = circles(&package.0);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("between the top-level modules of `src/lib.rs`"), "{found:?}");
}

#[test]
fn a_back_edge_inside_a_folder_is_named() {
    let package = Package::new(&[
        ("src/main.rs", "mod x;\nmod y;\nfn main() {}\n"),
        ("src/x.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use e::Shared;\nconst MODULE: &str = \"x\";\n"),
        ("src/x/a.rs", "use super::b::Thing;\n"),
        ("src/x/b.rs", "mod inner;\n"),
        ("src/x/b/inner.rs", "use crate::x::{c, a::Other};\n"),
        ("src/x/c.rs", "use super::MODULE;\nfn f() { let _ = r#\"super::a\"#; }\nmod tests {\n    use super::*;\n}\n"),
        ("src/x/d.rs", "use super::super::y::Thing;\nuse super::Shared;\n"),
        ("src/x/e.rs", "pub struct Shared;\n"),
        ("src/y.rs", "pub(crate) struct Thing;\n"),
    ]);
    let krate = Crate::read(&package.0, Path::new("src/main.rs"));
    let graphs = folders(&krate);
    let graph = &graphs["x"];
    assert_eq!(circles_in(graph), vec![vec!["a".to_owned(), "b".to_owned()]]);
    let text = describe(graph, &circles_in(graph));
    assert!(text.contains("a -> b (in src/x/a.rs)") && text.contains("b -> a (in src/x/b/inner.rs)"), "{text}");
    assert!(edge(graph, "b", "c"), "{graph:#?}");
    // Neither the folder's own items, a string, an inline module's `super::` nor a path out of
    // the folder is an edge inside it; a name the folder's module re-exports is its file's.
    assert!(!graph.contains_key("c") && edge(graph, "d", "e") && !edge(graph, "d", "y"), "{graph:#?}");
    let found = circles(&package.0);
    assert!(found.len() == 1 && found[0].starts_with("between the files of `x/` of `src/main.rs`"), "{found:?}");
}

#[test]
fn modules_are_found_through_their_mod_lines_and_path_attributes() {
    let package = Package::new(&[
        ("Cargo.toml", "[package]\nname = \"p\"\n\n[[test]]\nname = \"all\"\npath = \"checks/all.rs\"\n"),
        ("build.rs", "#[path = \"build/helper.rs\"]\nmod helper;\nfn main() {}\n"),
        ("build/helper.rs", "use crate::other;\n"),
        ("src/lib.rs", "#[cfg(feature = \"x\")]\npub mod a;\nmod old;\n"),
        ("src/a.rs", "use crate::old::Thing;\n"),
        ("src/old/mod.rs", "mod inner;\n"),
        ("src/old/inner.rs", "use crate::a::Other;\n"),
        ("src/unlisted.rs", "use crate::a::Thing;\n"),
        ("checks/all.rs", "mod one;\n"),
        ("checks/one.rs", "\n"),
    ]);
    let roots = super::crate_roots(&package.0);
    let roots: Vec<&str> = roots.iter().filter_map(|p| p.to_str()).collect();
    assert_eq!(roots, ["build.rs", "checks/all.rs", "src/lib.rs"]);
    let krate = Crate::read(&package.0, Path::new("src/lib.rs"));
    let files: Vec<String> = krate.files.iter().map(|f| f.path.display().to_string()).collect();
    assert_eq!(files, ["src/lib.rs", "src/a.rs", "src/old/mod.rs", "src/old/inner.rs"]);
    let graph = top_level(&krate);
    assert_eq!(circles_in(&graph), vec![vec!["a".to_owned(), "old".to_owned()]], "{graph:#?}");
    let build = Crate::read(&package.0, Path::new("build.rs"));
    assert_eq!(build.files.len(), 2, "{build:#?}");
}

/// The checker holds itself to its rule.
#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graphs = folders(&Crate::read(dir, Path::new("src/lib.rs")));
    // The reader sees the imports at all: the module tree is read by the scanner.
    assert!(edge(&graphs["import_graph"], "modules", "scan"), "{graphs:#?}");
    super::assert_no_circles(dir);
}

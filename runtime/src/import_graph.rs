//! The rule that keeps the crate's layers apart: no top-level module (a file under `src/` and
//! its folder) imports, directly or through others, a module that imports it back
//! (docs/design.md, "Inside `wrt-runtime`"); and inside every folder, no file (or sub-folder)
//! imports, directly or through others, one beside it that imports it back. The tests read the
//! sources, collect the `crate::…` paths and the `super::…` paths, and name every circle they
//! find.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which top-level modules each top-level module imports, and from which file.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// `text` without comments, string literals and character literals (each replaced by a
/// space), so that neither a path in a comment nor a brace in a string counts.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && (i == 0 || !ident(chars[i - 1])) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() && !(chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#'))) {
                j += 1;
            }
            i = j + 1 + hashes;
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{7f}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The top-level modules that `text`, the file at module path `path` (`["abi", "host"]` for
/// `abi/host.rs`), names with `crate::…` or with `super::…` paths that reach the crate root.
fn imports_of(text: &str, path: &[String]) -> BTreeSet<String> {
    let code = code_only(text);
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_at = |i: usize| -> String { chars[i..].iter().take_while(|c| ident(**c)).collect() };
    let skip_space = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let path_sep = |i: usize| chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':');
    // The first name of each item of a path after `crate::` or the crate root: `a` of `a::b`,
    // `a` and `b` of `{a::x, b}`.
    let heads = |i: usize| -> Vec<String> {
        let i = skip_space(i);
        if chars.get(i) != Some(&'{') {
            return vec![word_at(i)];
        }
        let mut found = Vec::new();
        let (mut j, mut depth, mut item_start) = (i + 1, 1, true);
        while j < chars.len() && depth > 0 {
            match chars[j] {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 1 => item_start = true,
                c if item_start && ident(c) && depth == 1 => {
                    found.push(word_at(j));
                    item_start = false;
                    j += found.last().map_or(1, String::len);
                    continue;
                }
                _ => {}
            }
            j += 1;
        }
        found
    };
    let mut found = BTreeSet::new();
    // Inline modules (`mod tests { … }`) open and the brace depth at which each closes.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            depth = depth.saturating_sub(1);
            if inline.last() == Some(&depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        if !ident(c) || (i > 0 && ident(chars[i - 1])) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let after = i + word.len();
        if word == "mod" {
            let name_at = skip_space(after);
            let name = word_at(name_at);
            if !name.is_empty() && chars.get(skip_space(name_at + name.len())) == Some(&'{') {
                inline.push(depth);
            }
        } else if word == "crate" && path_sep(after) {
            found.extend(heads(after + 2));
        } else if word == "super" && path_sep(after) && !(i >= 2 && path_sep(i - 2)) {
            let mut ups = 0;
            let mut j = i;
            while word_at(j) == "super" && path_sep(j + 5) {
                ups += 1;
                j = skip_space(j + 7);
            }
            if ups >= path.len() + inline.len() {
                found.extend(heads(j));
            }
            i = j;
            continue;
        }
        i = after;
    }
    found
}

/// The module each name the crate root re-exports (`pub use a::b::{C, D}`) comes from: a path
/// through such a name (`crate::C`) imports that module.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for statement in code_only(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, rest)) = path.split_once("::") else { continue };
        let names = rest.rsplit_once('{').map_or(rest, |(_, inner)| inner);
        for item in names.trim_end_matches('}').split(',') {
            let name = item.split(" as ").last().unwrap_or(item).rsplit("::").next().unwrap_or(item).trim();
            if !name.is_empty() {
                found.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    found
}

/// The import graph of the top-level modules under `src`.
fn graph_of(files: &[(PathBuf, String)]) -> Graph {
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|(path, _)| path.components().next())
        .map(|first| first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned())
        .filter(|name| name != "lib")
        .collect();
    let reexported = reexports(files.iter().find(|(path, _)| path == Path::new("lib.rs")).map_or("", |(_, t)| t));
    let mut graph = Graph::new();
    for (path, text) in files {
        let module_path: Vec<String> =
            path.with_extension("").components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let Some(own) = module_path.first().filter(|own| modules.contains(*own)) else { continue };
        let edges = graph.entry(own.clone()).or_default();
        for name in imports_of(text, &module_path) {
            let target = reexported.get(&name).cloned().unwrap_or(name);
            if modules.contains(&target) && target != *own {
                edges.entry(target).or_insert_with(|| path.display().to_string());
            }
        }
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, module: &'a str) {
            let n = self.index.len();
            self.index.insert(module, n);
            self.low.insert(module, n);
            self.stack.push(module);
            for target in self.graph.get(module).into_iter().flat_map(BTreeMap::keys) {
                let target = target.as_str();
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[module].min(self.low[target]);
                    self.low.insert(module, low);
                } else if self.stack.contains(&target) {
                    let low = self.low[module].min(self.index[target]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(top.to_owned());
                    if top == module {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for module in graph.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found
}

/// Every circle, each with the imports that close it (`a -> b (in a/x.rs)`), one per line.
fn describe(graph: &Graph, circles: &[Vec<String>]) -> String {
    let mut text = String::new();
    for circle in circles {
        text.push_str(&format!("circle: {}\n", circle.join(", ")));
        for from in circle {
            for (to, file) in graph.get(from).into_iter().flatten() {
                if circle.contains(to) {
                    text.push_str(&format!("  {from} -> {to} (in {file})\n"));
                }
            }
        }
    }
    text
}

/// Every `.rs` file under `dir`, relative to `root`, with its text.
fn sources(root: &Path, dir: &Path, into: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).expect("a source folder").map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a source file");
            into.push((path.strip_prefix(root).expect("under the root").to_owned(), text));
        }
    }
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let graph = graph_of(&files);
    // The reader sees the imports at all: the embedding API reaches the adapters.
    assert!(graph.get("runtime").is_some_and(|edges| edges.contains_key("abi")), "{graph:#?}");
    let found = circles(&graph);
    assert!(found.is_empty(), "import circles between top-level modules of wrt-runtime:\n{}", describe(&graph, &found));
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &root.join("src"), &mut files);
    let graph = graph_of(&files);
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

#[test]
fn a_back_edge_is_named() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_owned());
    let files = [
        file("a.rs", "use crate::b::Thing;\n"),
        file("b.rs", "mod inner;\n"),
        file("b/inner.rs", "use super::super::{c, a::Other};\n// crate::d is a comment\n"),
        file("c.rs", "fn f() { let _ = \"crate::d\"; }\nmod tests {\n    use super::d;\n}\n"),
        file("d.rs", "pub(crate) fn g() {}\n"),
        file("e.rs", "fn f() -> crate::Thing { todo!() }\n"),
        file("lib.rs", "mod a;\npub use d::{g as Thing};\n"),
    ];
    let graph = graph_of(&files);
    assert_eq!(circles(&graph), vec![vec!["a".to_owned(), "b".to_owned()]]);
    let text = describe(&graph, &circles(&graph));
    assert!(text.contains("a -> b (in a.rs)") && text.contains("b -> a (in b/inner.rs)"), "{text}");
    // Neither a comment, a string nor a `super::` inside an inline module of `c` leaves it.
    assert!(!graph.get("c").is_some_and(|edges| edges.contains_key("d")), "{graph:#?}");
    assert!(graph.get("b").is_some_and(|edges| edges.contains_key("c")), "{graph:#?}");
    // A name the crate root re-exports imports the module it comes from.
    assert!(graph.get("e").is_some_and(|edges| edges.contains_key("d")), "{graph:#?}");
}

/// The modules that `text`, the file at module path `path`, names with `crate::…` and
/// `super::…` paths, each as its path from the crate root (`["abi", "host", "io"]` for
/// `crate::abi::host::io::read` or, in `abi/buffers.rs`, `super::host::io::read`); a path that
/// stays inside the file (`super::` of an inline module) is left out. The last name may be an
/// item rather than a module: the folder graphs keep only the names of a folder's files.
fn module_paths_of(text: &str, path: &[String]) -> BTreeSet<Vec<String>> {
    let code = code_only(text);
    let chars: Vec<char> = code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let word_at = |i: usize| -> String { chars[i..].iter().take_while(|c| ident(**c)).collect() };
    let skip_space = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let path_sep = |i: usize| chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':');
    // Every path of the use tree at `i` (`a::b`, `a::{b, c::d}`), each appended to `prefix`.
    fn tree(
        i: usize,
        prefix: &[String],
        chars: &[char],
        out: &mut Vec<Vec<String>>,
        word_at: &dyn Fn(usize) -> String,
        skip_space: &dyn Fn(usize) -> usize,
        path_sep: &dyn Fn(usize) -> bool,
    ) -> usize {
        let mut i = skip_space(i);
        let mut segments = prefix.to_vec();
        loop {
            if chars.get(i) == Some(&'{') {
                i += 1;
                loop {
                    i = skip_space(i);
                    match chars.get(i) {
                        None => return i,
                        Some('}') => return i + 1,
                        Some(',') => i += 1,
                        Some(_) => {
                            let before = i;
                            i = tree(i, &segments, chars, out, word_at, skip_space, path_sep);
                            // Skip what no path holds (`as x`, `*`).
                            while i < chars.len() && !matches!(chars[i], ',' | '}') {
                                i += 1;
                            }
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
            }
            let word = word_at(i);
            if word.is_empty() {
                out.push(segments);
                return i;
            }
            segments.push(word.clone());
            i = skip_space(i + word.len());
            if !path_sep(i) {
                out.push(segments);
                return i;
            }
            i = skip_space(i + 2);
        }
    }
    let mut found = BTreeSet::new();
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            depth = depth.saturating_sub(1);
            if inline.last() == Some(&depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        if !ident(c) || (i > 0 && ident(chars[i - 1])) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let after = i + word.len();
        if word == "mod" {
            let name_at = skip_space(after);
            let name = word_at(name_at);
            if !name.is_empty() && chars.get(skip_space(name_at + name.len())) == Some(&'{') {
                inline.push(depth);
            }
        } else if word == "crate" && path_sep(after) {
            let mut out = Vec::new();
            i = tree(after + 2, &[], &chars, &mut out, &word_at, &skip_space, &path_sep);
            found.extend(out);
            continue;
        } else if word == "super" && path_sep(after) && !(i >= 2 && path_sep(i - 2)) {
            let mut ups = 0;
            let mut j = i;
            while word_at(j) == "super" && path_sep(j + 5) {
                ups += 1;
                j = skip_space(j + 7);
            }
            // Inline modules are the innermost levels: going up through them stays in the file.
            let levels = path.len() + inline.len();
            if ups >= inline.len() && ups <= levels {
                let base = &path[..levels - ups];
                let mut out = Vec::new();
                i = tree(j, base, &chars, &mut out, &word_at, &skip_space, &path_sep);
                found.extend(out);
                continue;
            }
            i = j;
            continue;
        }
        i = after;
    }
    found
}

/// For every folder below `src` (`abi`, `abi/host`, …), the import graph of what it holds: its
/// files and sub-folders, each a node named as its module (`host` for `abi/host.rs` and
/// `abi/host/`), with an edge where a file of one names another by a `crate::` or `super::`
/// path. The folder's own module (`abi.rs`) is none of them: its items are the folder's.
fn folder_graphs(files: &[(PathBuf, String)]) -> BTreeMap<String, Graph> {
    let module_path = |path: &Path| -> Vec<String> {
        path.with_extension("").components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect()
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(path, _)| module_path(path)).collect();
    // A node of a folder: a file or sub-folder whose module path starts with `prefix`.
    let is_node = |prefix: &[String]| modules.iter().any(|module| module.starts_with(prefix));
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    for (path, text) in files {
        let own = module_path(path);
        for target in module_paths_of(text, &own) {
            for level in 1..own.len() {
                let folder = &own[..level];
                let is_sibling = target.len() > level && target[..level] == *folder && target[level] != own[level];
                if is_sibling && is_node(&target[..=level]) {
                    let graph = graphs.entry(folder.join("/")).or_default();
                    let edges = graph.entry(own[level].clone()).or_default();
                    edges.entry(target[level].clone()).or_insert_with(|| path.display().to_string());
                }
            }
        }
    }
    graphs
}

/// The rule of the crate's top level, inside every folder: no file (or sub-folder) of a folder
/// imports, directly or through others, one that imports it back; a piece two of them share
/// lives in a file of its own below both.
#[test]
fn no_file_in_a_folder_imports_a_file_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let graphs = folder_graphs(&files);
    // The reader sees the imports at all: the component layer reaches its WIT bindings.
    assert!(graphs.get("component").is_some_and(|graph| graph.contains_key("process")), "{graphs:#?}");
    let mut text = String::new();
    for (folder, graph) in &graphs {
        let found = circles(graph);
        if !found.is_empty() {
            text.push_str(&format!("in `{folder}/`:\n{}", describe(graph, &found)));
        }
    }
    assert!(text.is_empty(), "import circles between the files of a folder of wrt-runtime:\n{text}");
}

#[test]
fn a_back_edge_inside_a_folder_is_named() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_owned());
    let files = [
        file("x.rs", "mod a;\nmod b;\nmod c;\nconst MODULE: &str = \"x\";\n"),
        file("x/a.rs", "use super::b::Thing;\n"),
        file("x/b.rs", "mod inner;\n"),
        file("x/b/inner.rs", "use crate::x::{c, a::Other};\n"),
        file("x/c.rs", "use super::MODULE;\nfn f() { let _ = \"super::a\"; }\nmod tests {\n    use super::*;\n}\n"),
        file("x/d.rs", "use super::super::y::Thing;\n"),
        file("y.rs", "pub(crate) struct Thing;\n"),
    ];
    let graphs = folder_graphs(&files);
    let graph = &graphs["x"];
    assert_eq!(circles(graph), vec![vec!["a".to_owned(), "b".to_owned()]]);
    let text = describe(graph, &circles(graph));
    assert!(text.contains("a -> b (in x/a.rs)") && text.contains("b -> a (in x/b/inner.rs)"), "{text}");
    assert!(graph.get("b").is_some_and(|edges| edges.contains_key("c")), "{graph:#?}");
    // Neither the folder's own items, a string, an inline module's `super::` nor a path out of
    // the folder is an edge inside it.
    assert!(!graph.contains_key("c") && !graph.contains_key("d"), "{graph:#?}");
}

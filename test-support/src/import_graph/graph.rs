//! The import graphs of a crate, one for its top level and one for each folder, and the
//! circles in a graph.

use std::collections::BTreeMap;

use super::modules::Crate;

/// An import graph: for each node, the nodes it imports and the first file (as the checker was
/// given it) that does.
pub type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The graph of `krate`'s top-level modules (a file beside the root and its folder), each a
/// node even when it imports nothing.
pub fn top_level(krate: &Crate) -> Graph {
    let mut graph = Graph::new();
    for file in &krate.files {
        let Some(own) = file.module.first() else { continue };
        let edges = graph.entry(own.clone()).or_default();
        for target in krate.reached_by(file) {
            if let Some(to) = target.first().filter(|to| *to != own) {
                edges.entry(to.clone()).or_insert_with(|| file.path.display().to_string());
            }
        }
    }
    graph
}

/// For every folder of `krate` (`abi`, `abi/host`, …), the import graph of what it holds: its
/// files and sub-folders, each a node named as its module (`host` for `abi/host.rs` and
/// `abi/host/`), with an edge where a file of one names another. The folder's own module
/// (`abi.rs`) is none of them: its items are the folder's (a name it re-exports from one of its
/// files counts for that file).
pub fn folders(krate: &Crate) -> BTreeMap<String, Graph> {
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    for file in &krate.files {
        let own = &file.module;
        for target in krate.reached_by(file) {
            for level in 1..own.len() {
                let folder = &own[..level];
                let is_sibling = target.len() > level && target[..level] == *folder && target[level] != own[level];
                if is_sibling && krate.has_file(&target[..=level]) {
                    let graph = graphs.entry(folder.join("/")).or_default();
                    let edges = graph.entry(own[level].clone()).or_default();
                    edges.entry(target[level].clone()).or_insert_with(|| file.path.display().to_string());
                }
            }
        }
    }
    graphs
}

/// The strongly connected components of more than one node (Tarjan's algorithm), each sorted.
pub fn circles_in(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            for target in self.graph.get(node).into_iter().flat_map(BTreeMap::keys) {
                let target = target.as_str();
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[node].min(self.low[target]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&target) {
                    let low = self.low[node].min(self.index[target]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(top.to_owned());
                    if top == node {
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
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found.sort();
    walk.found
}

/// Every circle of `graph`, each with the imports that close it (`a -> b (in a/x.rs)`), one
/// per line.
pub fn describe(graph: &Graph, circles: &[Vec<String>]) -> String {
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

//! The component side of `wrt bench real`: `guests/test-guests/programs/src/bin/bench_tree_search.rs`, the
//! same source as the core module `bench_tree_search` (taken here as a module, so there is one
//! copy), built for wasm32-wasip2: `tree-search DIR NEEDLE`, `hexdump FILE`, `emit BYTES`.
#[path = "../../../programs/src/bin/bench_tree_search.rs"]
mod tree_search;

fn main() {
    tree_search::main();
}

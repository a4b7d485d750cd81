//! The component side of `wrt bench real` (wasm32-wasip2): the program of the crate
//! `tree-search` (`guests/test-guests/tree-search/`), as is the core module `bench_tree_search`:
//! `tree-search DIR NEEDLE`, `hexdump FILE`, `emit BYTES`.

fn main() {
    tree_search::main();
}

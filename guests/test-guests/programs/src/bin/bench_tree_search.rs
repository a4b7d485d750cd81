//! The guest of `wrt bench real` as a core module (wasm32-wasip1): the program of the crate
//! `tree-search` (`guests/test-guests/tree-search/`): `tree-search DIR NEEDLE`, `hexdump FILE`,
//! `emit BYTES`.

fn main() {
    tree_search::main();
}

//! Paths of wrt's test and benchmark guests, compiled from source by this crate's build script.
//!
//! Every guest is a `pub const <NAME>: &str` holding the absolute path of its `.wasm` (or
//! `.wat`) file and a `pub const <NAME>_BYTES: &[u8]` with its contents (how `wrt bench`
//! carries its guests), and every suite (`abi`, `cli`, `fs`, `trap`, `limits`, `mem`, `spawn`,
//! `buffer`, `ref`, `asc`, `contain`, and the components' `py` and `js`) has a
//! `foreach_<suite>!` macro that lists its guests, so a test module can check with
//! `foreach_cli!(assert_test_exists)` that each guest has a test.
#![deny(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/gen.rs"));

#[cfg(test)]
mod import_graph;

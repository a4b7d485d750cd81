//! The benchmark guests, built into the binary so that `wrt bench` runs anywhere `wrt` runs.
//!
//! The compiled guests are committed under `bench/guests/` so that building the CLI needs cargo
//! alone (no Node.js, no wasm32 target). They are reviewed binaries, not a second source: the
//! test suite rebuilds each one from its source in `guests/` and fails if the bytes differ
//! (`tests/all/bench_guests.rs`, which also says how to refresh them). The WAT guests are source
//! text and are included from `guests/test-guests/wat/` directly.

/// `guests/test-guests/wat/bench_spawn.wat`: touches memory, holds host buffers, spawns `/bin/true`.
pub const BENCH_SPAWN: &[u8] = include_bytes!("../../guests/test-guests/wat/bench_spawn.wat");
/// `guests/test-guests/programs/src/bin/buffer_burst.rs`, compiled: the burst workload in Rust.
pub const BUFFER_BURST: &[u8] = include_bytes!("../guests/buffer_burst.wasm");
/// `guests/test-guests/assemblyscript`, compiled: the AssemblyScript guest (`burst N BODY`).
pub const ASC_BUFFERS: &[u8] = include_bytes!("../guests/asc_buffers.wasm");
/// `guests/test-guests/wat/ref_burst.wat`: the burst workload with `externref` buffers.
pub const REF_BURST: &[u8] = include_bytes!("../../guests/test-guests/wat/ref_burst.wat");
/// `guests/test-guests/programs/src/bin/cli_hello.rs`, compiled: prints a line.
pub const CLI_HELLO: &[u8] = include_bytes!("../guests/cli_hello.wasm");

/// `guests/test-guests/programs/src/bin/bench_pipeline.rs`, compiled: `head | tr | wc` child to child.
pub const BENCH_PIPELINE: &[u8] = include_bytes!("../guests/bench_pipeline.wasm");

/// `guests/test-guests/programs/src/bin/bench_spawn_loop.rs`, compiled: spawns `/bin/true` N times through
/// `wrt_v1`.
pub const BENCH_SPAWN_LOOP: &[u8] = include_bytes!("../guests/bench_spawn_loop.wasm");

/// `guests/test-guests/components/src/bin/component_bench_spawn.rs`, compiled for wasm32-wasip2: spawns
/// `/bin/true` N times through `wrt:process`.
pub const COMPONENT_BENCH_SPAWN: &[u8] = include_bytes!("../guests/component_bench_spawn.wasm");

/// `guests/test-guests/components/src/bin/component_hello.rs`, compiled for wasm32-wasip2: prints `hello`.
pub const COMPONENT_HELLO: &[u8] = include_bytes!("../guests/component_hello.wasm");

/// `guests/test-guests/programs/src/bin/bench_tree_search.rs` (the crate `tree-search`), compiled:
/// the real-world-shaped program of `wrt bench real` (`tree-search DIR NEEDLE`, `hexdump FILE`,
/// `emit BYTES`).
pub const BENCH_TREE_SEARCH: &[u8] = include_bytes!("../guests/bench_tree_search.wasm");

/// `guests/test-guests/components/src/bin/component_bench_tree_search.rs`, compiled for
/// wasm32-wasip2: the same program as [`BENCH_TREE_SEARCH`] (the crate `tree-search`), as a
/// component.
pub const COMPONENT_BENCH_TREE_SEARCH: &[u8] = include_bytes!("../guests/component_bench_tree_search.wasm");

/// `guests/test-guests/wasip3/src/bin/bench_serve.rs`, compiled for wasm32-wasip2: a `wasi:http`
/// service of WASI 0.3 that answers `hello` to every request.
pub const BENCH_SERVE: &[u8] = include_bytes!("../guests/bench_serve.wasm");

/// The compiled guests committed under `bench/guests/`: file name and bytes.
pub const COMMITTED: [(&str, &[u8]); 10] = [
    ("buffer_burst.wasm", BUFFER_BURST),
    ("asc_buffers.wasm", ASC_BUFFERS),
    ("cli_hello.wasm", CLI_HELLO),
    ("bench_pipeline.wasm", BENCH_PIPELINE),
    ("bench_spawn_loop.wasm", BENCH_SPAWN_LOOP),
    ("component_bench_spawn.wasm", COMPONENT_BENCH_SPAWN),
    ("component_hello.wasm", COMPONENT_HELLO),
    ("bench_tree_search.wasm", BENCH_TREE_SEARCH),
    ("component_bench_tree_search.wasm", COMPONENT_BENCH_TREE_SEARCH),
    ("bench_serve.wasm", BENCH_SERVE),
];

//! The compiled benchmark guests committed under `bench/guests/` (so that the CLI builds with
//! cargo alone) are exactly what their sources build to today.
//!
//! After changing a benchmark guest, its source, the SDK or the toolchain, refresh them with
//! `WRT_BLESS=1 cargo test --release --workspace --test all bench_guests` and commit the new
//! files: the difference is then reviewed like any other change.

use std::path::Path;

/// The committed bytes and the fresh build of the same guest, by file name.
fn pairs() -> [(&'static str, &'static [u8], &'static [u8]); 10] {
    let fresh = |name: &str| match name {
        "buffer_burst.wasm" => wrt_test_guests::BUFFER_BURST_BYTES,
        "asc_buffers.wasm" => wrt_test_guests::ASC_BUFFERS_BYTES,
        "cli_hello.wasm" => wrt_test_guests::CLI_HELLO_BYTES,
        "bench_pipeline.wasm" => wrt_test_guests::BENCH_PIPELINE_BYTES,
        "bench_spawn_loop.wasm" => wrt_test_guests::BENCH_SPAWN_LOOP_BYTES,
        "component_bench_spawn.wasm" => wrt_test_guests::COMPONENT_BENCH_SPAWN_BYTES,
        "component_hello.wasm" => wrt_test_guests::COMPONENT_HELLO_BYTES,
        "bench_tree_search.wasm" => wrt_test_guests::BENCH_TREE_SEARCH_BYTES,
        "component_bench_tree_search.wasm" => wrt_test_guests::COMPONENT_BENCH_TREE_SEARCH_BYTES,
        "bench_serve.wasm" => wrt_test_guests::BENCH_SERVE_BYTES,
        other => panic!("no source known for the committed guest `{other}`"),
    };
    wrt_bench::guests::COMMITTED.map(|(name, committed)| (name, committed, fresh(name)))
}

#[test]
fn committed_bench_guests_match_their_sources() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/guests");
    let bless = std::env::var_os("WRT_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, committed, fresh) in pairs() {
        if committed == fresh {
            continue;
        }
        if bless {
            std::fs::write(dir.join(name), fresh).unwrap_or_else(|e| panic!("write {name}: {e}"));
        }
        stale.push(format!("{name} ({} bytes committed, {} built)", committed.len(), fresh.len()));
    }
    assert!(
        stale.is_empty() || bless,
        "committed benchmark guests differ from their sources: {}; refresh them with \
         `WRT_BLESS=1 cargo test --release --workspace --test all bench_guests` and commit bench/guests/",
        stale.join(", ")
    );
}

#[test]
fn the_wat_bench_guests_are_their_sources() {
    assert_eq!(wrt_bench::guests::BENCH_SPAWN, wrt_test_guests::BENCH_SPAWN_BYTES);
    assert_eq!(wrt_bench::guests::REF_BURST, wrt_test_guests::REF_BURST_BYTES);
}

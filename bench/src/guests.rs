//! The benchmark guests, built into the binary by `wrt-test-guests` so that `wrt bench` runs
//! anywhere `wrt` runs.

/// `guests/wat/bench_spawn.wat`: touches memory, holds host buffers, spawns `/bin/true`.
pub(crate) const BENCH_SPAWN: &[u8] = wrt_test_guests::BENCH_SPAWN_BYTES;
/// `guests/programs/src/bin/buffer_burst.rs`: the burst workload in Rust.
pub(crate) const BUFFER_BURST: &[u8] = wrt_test_guests::BUFFER_BURST_BYTES;
/// The AssemblyScript guest (`burst N BODY`).
pub(crate) const ASC_BUFFERS: &[u8] = wrt_test_guests::ASC_BUFFERS_BYTES;
/// `guests/wat/ref_burst.wat`: the burst workload with `externref` buffers.
pub(crate) const REF_BURST: &[u8] = wrt_test_guests::REF_BURST_BYTES;
/// `guests/programs/src/bin/cli_hello.rs`: prints a line.
pub(crate) const CLI_HELLO: &[u8] = wrt_test_guests::CLI_HELLO_BYTES;

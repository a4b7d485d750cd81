//! wrt-runtime's integration tests, through its embedding API as an embedder uses it: one
//! binary, one module per area. Guests come from `wrt_test_guests`, compiled from source by its
//! build script; the CLI's own tests are the root crate's (`tests/all/`).

mod cancel;
mod embed;
mod embed_audit;
mod embed_host;
mod embed_hostile;
mod embed_streams;
mod run_async;
mod serve;
mod util;
mod wasip3;

//! wrt's integration tests: one binary, one module per area. Guests come from
//! `wrt_test_guests`, compiled from source by its build script.

mod abi;
mod abi_consts;
mod asc;
mod bench;
mod bench_cmd;
mod bench_guests;
mod buffer;
mod cache;
mod child_sandbox;
mod cli;
mod component;
mod component_guests;
mod component_run;
mod containment;
mod everyday;
mod fs;
mod hostile_module;
mod import_graph;
mod js;
mod limits;
mod mem;
mod policy;
mod policy_escapes;
mod py;
mod refs;
mod serve;
mod serve_reuse;
mod spawn;
mod stdio;
mod trap;
mod trust;
mod util;
mod verified_code;
mod wasip3;

/// Fails to compile unless a test function named after the guest exists in the module.
macro_rules! assert_test_exists {
    ($name:ident) => {
        #[expect(unused_imports, reason = "only checks that the test exists")]
        use self::$name as _;
    };
}
pub(crate) use assert_test_exists;

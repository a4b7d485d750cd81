//! Host buffers (external memory) in Rust, AssemblyScript and `externref` guests beside Node
//! and an in-process floor: the `burst` (nodejs/node#63863), `chains` (nodejs/node#1671) and
//! `sweep` (Y/S) sections of `wrt_bench::buffer_suite`, which measures and checks them.
//!
//! Harness-less, but takes criterion's arguments: a full run only with `--bench` and without
//! `--test` (`cargo bench --bench buffer [burst|chains|sweep]`), which prints markdown tables and
//! writes `target/buffer-bench.json`; otherwise (`-- --test`, `cargo test --benches`) every
//! workload runs once with a tiny size and its output is checked.

use std::path::{Path, PathBuf};

use wrt_bench::buffer_suite::{self, Paths, SECTIONS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // As criterion: `cargo bench` passes `--bench`; `--test` (or neither) makes it a check.
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--list") {
        for section in SECTIONS {
            println!("{section}: benchmark");
        }
        return;
    }
    let paths = Paths {
        wrt: PathBuf::from(env!("CARGO_BIN_EXE_wrt")),
        buffer_burst: PathBuf::from(wrt_test_guests::BUFFER_BURST),
        buffer_chains: PathBuf::from(wrt_test_guests::BUFFER_CHAINS),
        asc_buffers: PathBuf::from(wrt_test_guests::ASC_BUFFERS),
        ref_burst: PathBuf::from(wrt_test_guests::REF_BURST),
    };
    let filters: Vec<&str> = args.iter().filter(|a| !a.starts_with('-')).map(String::as_str).collect();
    // `target/` (this executable is `target/<profile>/deps/buffer-<hash>`).
    let exe = std::env::current_exe().expect("current exe");
    let target: &Path = exe.ancestors().nth(3).expect("target dir");
    buffer_suite::run(&paths, has("--bench") && !has("--test"), &filters, &target.join("buffer-bench.json"));
}

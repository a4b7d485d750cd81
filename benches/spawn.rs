//! Spawn + wait of `/bin/true`: wrt-host-spawn against `std::process::Command` and direct
//! `posix_spawn` calls, in one run (docs/benchmarks.md records the ratios). The variants are
//! `wrt_bench::host_spawn`'s.
//!
//! Each iteration of a variant is paired with an untimed call of the baseline (`posix_spawn`;
//! the baseline itself is paired with `host_spawn`), so drift on a shared machine hits every
//! variant and its baseline alike (`wrt_bench::paired`).

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use wrt_bench::host_spawn::HostSpawn;
use wrt_bench::paired::paired;

fn spawn(c: &mut Criterion) {
    let h = HostSpawn::new().expect("spawn variants");
    let pair = |measured: fn(&HostSpawn), partner: fn(&HostSpawn)| {
        let h = &h;
        move |b: &mut Bencher<'_>| b.iter_custom(|iters| paired(iters, &|| measured(h), &|| partner(h)))
    };
    let mut group = c.benchmark_group("spawn");
    group.bench_function("posix_spawn", pair(HostSpawn::posix_spawn_bare, HostSpawn::host_spawn));
    group.bench_function("host_spawn", pair(HostSpawn::host_spawn, HostSpawn::posix_spawn_bare));
    group.bench_function("std_command", pair(HostSpawn::std_command, HostSpawn::posix_spawn_bare));
    group
        .bench_function("posix_spawn_same_attrs", pair(HostSpawn::posix_spawn_same_attrs, HostSpawn::posix_spawn_bare));
    group.bench_function("host_spawn_fork_exec", pair(HostSpawn::host_spawn_fork_exec, HostSpawn::posix_spawn_bare));
    group.bench_function("host_spawn_confined", pair(HostSpawn::host_spawn_confined, HostSpawn::posix_spawn_bare));
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);

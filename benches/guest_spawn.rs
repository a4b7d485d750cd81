//! A guest spawning `/bin/true` through the `wrt_v1` ABI (spawn+wait, one-shot run with
//! capture, `/bin/sh -c exec`) while it holds 0 / 600 MiB / 2 GiB of touched linear memory, and
//! spawn+wait while it holds 600 MiB of written host buffers (external memory), beside the floor
//! (a bare `posix_spawn` + `waitpid` from the host process holding the same memory) in the same
//! run; and, when `node` is on PATH, Node spawning from a process that holds a touched
//! WebAssembly.Memory of the same size (`bench/peers/spawn_heap.js`). The guest, the
//! floor and the peer are `wrt_bench`'s.
//!
//! `guest_spawn_cpu` measures CPU time instead of wall-clock time (this process's and its
//! reaped children's): the guest's spawn + wait, host-spawn's, and the floor's, each side's
//! iterations in a row (`wrt bench spawn-overhead` runs the same sides interleaved
//! round by round and prints the ratios).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_bench::floor::PosixSpawnWait;
use wrt_bench::host_spawn::HostSpawn;
use wrt_bench::overhead::cpu_time;
use wrt_bench::peers::{self, Script};
use wrt_bench::{Method, SpawnGuest, SpawnParams, Strategy};

const HEAPS_MIB: [u64; 3] = [0, 600, 2048];
const METHODS: [Method; 3] = [Method::Spawn, Method::Run, Method::Shell];
/// Host buffers (1 MiB each) held by the guest in the external-memory case.
const EXTERNAL_MIB: u64 = 600;

fn guest(heap: u64, external: u64) -> SpawnGuest {
    let p = SpawnParams {
        n: 1,
        heap,
        external,
        strategy: Strategy::PosixSpawn,
        dontfork: true,
        method: Method::Spawn,
        sandbox: false,
        view: true,
    };
    let guest = SpawnGuest::new(&p).expect("spawn guest");
    // The buffers are resident in this process, not just reserved.
    let rss = wrt_bench::child::own_rss().expect("VmRSS");
    assert!(rss >= external, "{external} bytes of buffers but {rss} resident");
    guest
}

fn guest_spawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("guest_spawn_true");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    let floor = PosixSpawnWait::new("/bin/true").unwrap();
    let cases = HEAPS_MIB.iter().flat_map(|&mib| {
        // Host buffers instead of linear memory, right after the empty case it is read against.
        let external =
            (mib == 0).then_some((format!("{EXTERNAL_MIB}MiB_external"), 0, EXTERNAL_MIB << 20, &METHODS[..1]));
        std::iter::once((format!("{mib}MiB"), mib << 20, 0, &METHODS[..])).chain(external)
    });
    for (memory, heap, external, methods) in cases {
        let mut guest = guest(heap, external);
        for &method in methods {
            let id = BenchmarkId::new(format!("guest/{}", method.export()), &memory);
            group.bench_with_input(id, &method, |b, &method| {
                b.iter_custom(|iters| guest.spawn(method, iters).expect("guest spawns"))
            });
        }
        group.bench_with_input(BenchmarkId::new("floor/posix_spawn", &memory), &(), |b, _| {
            b.iter(|| floor.run(black_box(1)).unwrap())
        });
    }
    group.finish();
    node_peer();
}

/// Node spawning from a process that holds the same touched WebAssembly.Memory. Not a
/// criterion measurement (it is another process): printed beside the table, skipped in
/// `--test` runs and when `node` is missing.
fn node_peer() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    if peers::node_version().is_none() {
        println!("SKIPPED: node peer (node is not on PATH)");
        return;
    }
    for mib in HEAPS_MIB {
        let env = [("N", "1000".to_owned()), ("HEAP_MB", mib.to_string()), ("KIND", "wasm".to_owned())];
        match peers::node(Script::SpawnHeap, &[], &env) {
            Ok(run) => println!("peer node spawn /bin/true, {mib}MiB wasm memory: {}", run.run.stdout.trim()),
            Err(e) => println!("peer node failed at {mib}MiB: {e}"),
        }
    }
}

/// CPU time per spawn + wait of `/bin/true`: the guest (0 MiB), host-spawn and the floor, each
/// measured over a sample's iterations in a row (as the guest runs its loop), so that every
/// side is measured in its steady state.
fn guest_spawn_cpu(c: &mut Criterion) {
    let mut group = c.benchmark_group("guest_spawn_cpu");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    let floor = PosixSpawnWait::new("/bin/true").unwrap();
    let host = HostSpawn::new().unwrap();
    let mut guest = guest(0, 0);
    let spawns = |iters: u64| u32::try_from(iters).expect("fewer than 2^32 iterations");
    group.bench_function("guest/spawn_wait", |b| {
        b.iter_custom(|iters| cpu_time(|| guest.spawn(Method::Spawn, iters).map(drop)).expect("guest spawns"))
    });
    group.bench_function("host_spawn", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                (0..iters).for_each(|_| host.host_spawn());
                Ok(())
            })
            .unwrap()
        })
    });
    group
        .bench_function("floor/posix_spawn", |b| b.iter_custom(|iters| cpu_time(|| floor.run(spawns(iters))).unwrap()));
    group.finish();
}

criterion_group!(benches, guest_spawn, guest_spawn_cpu);
criterion_main!(benches);

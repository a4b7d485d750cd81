//! What a fork+exec+wait of `/bin/true` by the host costs while a guest holds 0 / 600 MiB /
//! 2 GiB of touched linear memory, with MADV_DONTFORK on and off, beside posix_spawn (which
//! never copies page tables) as the floor. The guest and both calls are `wrt_bench`'s.

use std::ffi::CString;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_bench::floor::{self, PosixSpawnWait};
use wrt_bench::{Method, SpawnGuest, SpawnParams, Strategy};

const HEAPS_MIB: [u64; 3] = [0, 600, 2048];

/// The spawn guest holding `mib` MiB of touched linear memory, or nothing for 0.
fn guest_holding(mib: u64, dontfork: bool) -> Option<SpawnGuest> {
    let p = SpawnParams {
        n: 1,
        heap: mib << 20,
        external: 0,
        strategy: Strategy::PosixSpawn,
        dontfork,
        method: Method::Spawn,
        sandbox: false,
        view: true,
    };
    (mib > 0).then(|| SpawnGuest::new(&p).expect("spawn guest"))
}

fn fork_exec(c: &mut Criterion) {
    let mut group = c.benchmark_group("fork_exec_true");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    let true_path = CString::new("/bin/true").unwrap();
    let posix_spawn = PosixSpawnWait::new("/bin/true").unwrap();
    for mib in HEAPS_MIB {
        for dontfork in [true, false] {
            let guest = guest_holding(mib, dontfork);
            let id = BenchmarkId::new(if dontfork { "fork/dontfork" } else { "fork/plain" }, format!("{mib}MiB"));
            group.bench_with_input(id, &mib, |b, _| b.iter(|| floor::fork_exec_wait(black_box(&true_path)).unwrap()));
            drop(guest);
        }
        let guest = guest_holding(mib, true);
        group.bench_with_input(BenchmarkId::new("posix_spawn", format!("{mib}MiB")), &mib, |b, _| {
            b.iter(|| posix_spawn.run(black_box(1)).unwrap())
        });
        drop(guest);
    }
    group.finish();
}

criterion_group!(benches, fork_exec);
criterion_main!(benches);

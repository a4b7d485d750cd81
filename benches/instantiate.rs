//! Instantiate + run in process: `Guest::run` of a trivial, a WASI-importing and a hello guest
//! loaded once into one shared `Runtime`, under each configuration of `wrt bench instantiate`
//! (defaults, timeout, policy, all), beside plain wasmtime with the pooling allocator and
//! copy-on-write memory (the floor) and with the on-demand allocator, in one run; and the hello
//! guest from 1 to `available_parallelism()` threads sharing the runtime (and the floor's
//! engine). The guests, options and references are `wrt_bench::instantiate`'s.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_bench::instantiate::{InstantiateBench, Reference, timed};
use wrt_bench::{InstantiateGuest, RunConfig};

/// `iters` runs of `run` spread over `threads` threads; the time of `iters` runs.
fn spread(threads: u32, iters: u64, run: impl Fn() + Sync) -> Duration {
    let per_thread = u32::try_from(iters.div_ceil(u64::from(threads))).unwrap_or(u32::MAX).max(1);
    let elapsed = timed(threads, per_thread, || {
        run();
        Ok(())
    })
    .expect("timed runs");
    let done = u64::from(per_thread) * u64::from(threads);
    elapsed.mul_f64(iters as f64 / done as f64)
}

fn instantiate(c: &mut Criterion) {
    let bench = InstantiateBench::shared().expect("instantiate bench");
    for guest in InstantiateGuest::ALL {
        let mut group = c.benchmark_group(format!("instantiate_{}", guest.name()));
        group.measurement_time(Duration::from_secs(3));
        for config in RunConfig::ALL {
            group.bench_function(BenchmarkId::new("wrt", config.name()), |b| {
                b.iter(|| bench.run_wrt(guest, config).expect("wrt run"));
            });
        }
        for (name, reference) in [("wasmtime_pooling", Reference::Pooling), ("wasmtime_ondemand", Reference::OnDemand)]
        {
            group.bench_function(name, |b| b.iter(|| bench.run_reference(guest, reference).expect("wasmtime run")));
        }
        group.finish();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1));
    let mut group = c.benchmark_group("instantiate_hello_threads");
    group.measurement_time(Duration::from_secs(3));
    let hello = InstantiateGuest::Hello;
    for threads in (1..=cores).filter(|t| t.is_power_of_two() || *t == cores) {
        group.bench_with_input(BenchmarkId::new("wrt_all", threads), &threads, |b, &threads| {
            b.iter_custom(|iters| spread(threads, iters, || bench.run_wrt(hello, RunConfig::All).expect("wrt run")));
        });
        group.bench_with_input(BenchmarkId::new("wasmtime_pooling", threads), &threads, |b, &threads| {
            b.iter_custom(|iters| {
                spread(threads, iters, || bench.run_reference(hello, Reference::Pooling).expect("wasmtime run"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, instantiate);
criterion_main!(benches);

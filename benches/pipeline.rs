//! Pipelines: `head -c 64MiB /dev/zero | tr '\0' a | wc -c` run by the `bench_pipeline` guest child
//! to child, against the same pipeline run by `sh -c`; the throughput of each, from `wrt-bench`'s
//! pipeline workload (`wrt bench pipeline`).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use wrt_bench::pipeline;

const BYTES: u64 = 64 << 20;

fn pipelines(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10).measurement_time(Duration::from_secs(10)).throughput(Throughput::Bytes(BYTES));
    group.bench_with_input(BenchmarkId::new("wrt", BYTES), &BYTES, |b, &bytes| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (elapsed, stream_bytes) = pipeline::wrt(bytes).unwrap();
                    std::hint::black_box(stream_bytes);
                    elapsed
                })
                .sum()
        });
    });
    group.bench_with_input(BenchmarkId::new("native_sh", BYTES), &BYTES, |b, &bytes| {
        b.iter_custom(|iters| (0..iters).map(|_| pipeline::native(bytes).unwrap()).sum());
    });
    group.finish();
}

criterion_group!(benches, pipelines);
criterion_main!(benches);

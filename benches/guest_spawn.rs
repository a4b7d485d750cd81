//! A guest spawning `/bin/true` through the `wrt_v1` ABI (spawn+wait, one-shot run with
//! capture, `/bin/sh -c exec`) while it holds 0 / 600 MiB / 2 GiB of touched linear memory,
//! beside the floor (a bare `posix_spawn` + `waitpid` from the host process holding the same
//! memory) in the same run; and, when `node` is on PATH, Node spawning from a process that
//! holds a touched WebAssembly.Memory of the same size (`benches/peers/spawn_heap.js`).

use std::ffi::CString;
use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{Instance, Outcome, Sandbox, WasmValue};

#[path = "common/floor.rs"]
#[allow(dead_code, reason = "shared by several benches, each using a part")]
mod floor;

const HEAPS_MIB: [u32; 3] = [0, 600, 2048];
const METHODS: [&str; 3] = ["spawn_wait", "run_capture", "sh_exec"];

fn guest_holding(mib: u32) -> Instance {
    let policy = Policy::deny_all().allow_program("/bin/true").allow_program("/bin/sh");
    let sandbox = Sandbox::builder().spawn_policy(policy).build().expect("sandbox");
    let guest = sandbox.load_file(wrt_test_guests::BENCH_SPAWN).expect("bench_spawn guest");
    let mut instance = sandbox.instantiate(&guest).expect("instantiate");
    let outcome = instance.invoke("touch", &[mib.to_string()]).expect("touch");
    assert!(matches!(outcome, Outcome::Returned(ref v) if v[0] != WasmValue::I32(-1)), "{outcome:?}");
    instance
}

fn guest_spawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("guest_spawn_true");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    let true_path = CString::new("/bin/true").unwrap();
    for mib in HEAPS_MIB {
        let mut instance = guest_holding(mib);
        let heap = format!("{mib}MiB");
        for method in METHODS {
            group.bench_with_input(BenchmarkId::new(format!("guest/{method}"), &heap), &mib, |b, _| {
                b.iter_custom(|iters| {
                    let start = Instant::now();
                    let outcome = instance.invoke(method, &[iters.to_string()]).expect("invoke");
                    let elapsed = start.elapsed();
                    assert_eq!(outcome, Outcome::Returned(vec![WasmValue::I32(0)]), "{method}");
                    elapsed
                })
            });
        }
        group.bench_with_input(BenchmarkId::new("floor/posix_spawn", &heap), &mib, |b, _| {
            b.iter(|| floor::posix_spawn_wait(black_box(&true_path)))
        });
        drop(instance);
    }
    group.finish();
    node_peer();
}

/// Node 20 spawning from a process that holds the same touched WebAssembly.Memory. Not a
/// criterion measurement (it is another process): printed beside the table, skipped in
/// `--test` runs and when `node` is missing.
fn node_peer() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers/spawn_heap.js");
    for mib in HEAPS_MIB {
        let out = Command::new("node")
            .arg(script)
            .env("N", "1000")
            .env("HEAP_MB", mib.to_string())
            .env("KIND", "wasm")
            .output();
        match out {
            Ok(out) if out.status.success() => {
                println!(
                    "peer node spawn /bin/true, {mib}MiB wasm memory: {}",
                    String::from_utf8_lossy(&out.stdout).trim()
                );
            }
            Ok(out) => println!("peer node failed at {mib}MiB: {}", String::from_utf8_lossy(&out.stderr).trim()),
            Err(_) => {
                println!("SKIPPED: node peer (node is not on PATH)");
                return;
            }
        }
    }
}

criterion_group!(benches, guest_spawn);
criterion_main!(benches);

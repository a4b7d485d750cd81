//! A guest spawning `/bin/true` through the `wrt_v1` ABI (spawn+wait, one-shot run with
//! capture, `/bin/sh -c exec`) while it holds 0 / 600 MiB / 2 GiB of touched linear memory, and
//! spawn+wait while it holds 600 MiB of written host buffers (external memory), beside the floor
//! (a bare `posix_spawn` + `waitpid` from the host process holding the same memory) in the same
//! run; and, when `node` is on PATH, Node spawning from a process that holds a touched
//! WebAssembly.Memory of the same size (`benches/peers/spawn_heap.js`).

use std::ffi::CString;
use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{Instance, Outcome, RunOptions, Runtime, WasmValue};

#[path = "common/floor.rs"]
#[allow(dead_code, reason = "shared by several benches, each using a part")]
mod floor;

const HEAPS_MIB: [u32; 3] = [0, 600, 2048];
const METHODS: [&str; 3] = ["spawn_wait", "run_capture", "sh_exec"];
/// Host buffers (1 MiB each) held by the guest in the external-memory case.
const EXTERNAL_MIB: u32 = 600;

fn bench_spawn_instance() -> Instance {
    let policy = Policy::deny_all().allow_program("/bin/true").allow_program("/bin/sh");
    let options = RunOptions::new().spawn_policy(&policy).expect("spawn policy");
    let guest = Runtime::new().expect("runtime").load_file(wrt_test_guests::BENCH_SPAWN).expect("bench_spawn guest");
    guest.instantiate(&options).expect("instantiate")
}

fn guest_holding(mib: u32) -> Instance {
    let mut instance = bench_spawn_instance();
    let outcome = instance.invoke("touch", &[mib.to_string()]).expect("touch");
    assert!(matches!(outcome, Outcome::Returned(ref v) if v[0] != WasmValue::I32(-1)), "{outcome:?}");
    instance
}

/// A guest holding `mib` host buffers of 1 MiB, every byte written.
fn guest_holding_buffers(mib: u32) -> Instance {
    let mut instance = bench_spawn_instance();
    let outcome = instance.invoke("hold_buffers", &[mib.to_string()]).expect("hold_buffers");
    let held = i32::try_from(mib).expect("MiB");
    assert_eq!(outcome, Outcome::Returned(vec![WasmValue::I32(held)]), "hold_buffers({mib})");
    let stats = instance.stats();
    assert_eq!(stats.peak_external, u64::from(mib) << 20, "{stats:?}");
    // The buffers are resident in this process, not just reserved.
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS");
    assert!(rss_kib >= u64::from(mib) << 10, "{mib} MiB of buffers but {rss_kib} KiB resident");
    instance
}

fn bench_spawn_wait(group: &mut BenchmarkGroup<'_, WallTime>, instance: &mut Instance, heap: &str) {
    group.bench_with_input(BenchmarkId::new("guest/spawn_wait", heap), &(), |b, _| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let outcome = instance.invoke("spawn_wait", &[iters.to_string()]).expect("invoke");
            let elapsed = start.elapsed();
            assert_eq!(outcome, Outcome::Returned(vec![WasmValue::I32(0)]), "spawn_wait");
            elapsed
        })
    });
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
        if mib == 0 {
            // Host buffers instead of linear memory, right after the empty case it is read against.
            let mut instance = guest_holding_buffers(EXTERNAL_MIB);
            let heap = format!("{EXTERNAL_MIB}MiB_external");
            bench_spawn_wait(&mut group, &mut instance, &heap);
            group.bench_with_input(BenchmarkId::new("floor/posix_spawn", &heap), &(), |b, _| {
                b.iter(|| floor::posix_spawn_wait(black_box(&true_path)))
            });
            drop(instance);
        }
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

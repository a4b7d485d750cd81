//! Holds `MIB` MiB of host buffers (1 MiB each, every page written) and prints
//! `holding MIB MiB`; then, if `SPAWNS` (default 0) is positive, runs `true` that many times and
//! prints `{"mib":..,"spawns":..,"us_per_spawn":..}` (mean wall time of a `status()` call).
//! It keeps the buffers until its stdin ends, then exits 0: with stdin from /dev/null it exits
//! at once, with a pipe it holds them while the host is inspected (`VmFlags` of their memory,
//! spawn latency). Needs `true` when `SPAWNS` is positive.
use std::io::Read;
use std::process::ExitCode;
use std::time::Instant;

use wrt_guest::{Buffer, Command};

const MIB: usize = 1 << 20;

fn arg(index: usize, default: Option<usize>) -> usize {
    match std::env::args().nth(index) {
        Some(arg) => arg.parse().expect("a count"),
        None => default.expect("usage: buffer_hold MIB [SPAWNS]"),
    }
}

fn main() -> ExitCode {
    let (mib, spawns) = (arg(1, None), arg(2, Some(0)));
    // A different byte on every page, so no page can stay shared or zero.
    let pattern: Vec<u8> = (0..MIB).map(|i| (i / 4096 + 1) as u8).collect();
    let mut held = Vec::with_capacity(mib);
    for i in 0..mib {
        let buffer = Buffer::zeroed(MIB).and_then(|mut buffer| buffer.write_at(0, &pattern).map(|()| buffer));
        match buffer {
            Ok(buffer) => held.push(buffer),
            Err(err) => {
                println!("cannot hold buffer {i}: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("holding {mib} MiB");

    if spawns > 0 {
        let started = Instant::now();
        for i in 0..spawns {
            match Command::new("true").status() {
                Ok(status) if status.success() => {}
                Ok(status) => {
                    println!("spawn {i}: true ended with {status}");
                    return ExitCode::FAILURE;
                }
                Err(err) => {
                    println!("spawn {i}: {err}");
                    return ExitCode::FAILURE;
                }
            }
        }
        let us = started.elapsed().as_secs_f64() * 1e6 / spawns as f64;
        println!(r#"{{"mib":{mib},"spawns":{spawns},"us_per_spawn":{us:.1}}}"#);
    }

    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(held);
    ExitCode::SUCCESS
}

//! Memory limit, fuel, timeout, and guard regions that fault.

use std::time::{Duration, Instant};

use wrt_runtime::{ConfigError, Outcome, RunOptions, Runtime, WasmValue};
use wrt_test_guests::*;

use crate::util::{assert_code, run, stderr, stdout};

foreach_limits!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn limits_memory_grow() {
    // 64 MiB limit: memory.grow returns -1 at 64 MiB, and the guest carries on.
    let out = run(["run", "--max-memory", "64MiB", LIMITS_MEMORY_GROW]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "memory.grow failed at 64 MiB\n");
    // Without a limit the same growth (to 128 MiB) succeeds.
    let out = run(["run", LIMITS_MEMORY_GROW, "2048"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("stopped at"), "{}", stdout(&out));
}

#[test]
fn limits_spin() {
    // Timeout: exit 124 and a message, well before the guest would ever finish.
    let start = Instant::now();
    let out = run(["run", "--timeout", "300ms", LIMITS_SPIN]);
    assert_code(&out, 124);
    assert!(stderr(&out).contains("timed out after 300ms"), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(60), "the timeout did not stop the guest");
    // Fuel: a trap exit code and a message saying so.
    let out = run(["run", "--fuel", "1000000", LIMITS_SPIN]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("ran out of fuel"), "{}", stderr(&out));
}

/// The report says when the memory limit refused the guest, and how much time and fuel the run
/// took.
#[test]
fn reports_say_what_the_limits_refused_and_what_the_run_took() {
    let runtime = Runtime::builder().fuel(true).build().unwrap();
    let grow = |pages: u32, declared: &str| {
        let wat =
            format!("(module (memory {declared}) (func (export \"_start\") (drop (memory.grow (i32.const {pages})))))");
        runtime.load_bytes("grow.wat", wat.as_bytes()).unwrap()
    };
    let limited = RunOptions::new().max_memory(1 << 20);
    // Past the memory limit: refused, and said so.
    let report = grow(32, "1").run(&limited).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    assert!(report.hit_memory_limit());
    assert_eq!(report.stats.memory_refusals, 1);
    // Within it, or past the module's own maximum only: no refusal of the sandbox's.
    assert!(!grow(1, "1").run(&limited).unwrap().hit_memory_limit());
    assert!(!grow(4, "1 2").run(&RunOptions::new()).unwrap().hit_memory_limit());

    let spin = runtime.load_file(LIMITS_SPIN).unwrap();
    let report = spin.run(&RunOptions::new().fuel(10_000)).unwrap();
    assert_eq!((report.outcome, report.stats.fuel_consumed), (Outcome::OutOfFuel(10_000), 10_000));
    let timeout = Duration::from_millis(100);
    let report = spin.run(&RunOptions::new().timeout(timeout)).unwrap();
    assert_eq!((report.outcome, report.stats.cpu_time), (Outcome::TimedOut(timeout), Duration::ZERO));
    let report = spin.run(&RunOptions::new().timeout(timeout).measure_cpu_time(true)).unwrap();
    assert_eq!(report.outcome, Outcome::TimedOut(timeout));
    let stats = report.stats;
    assert!(stats.wall_time >= timeout, "{stats:?}");
    // The guest spun on its thread for most of it (the machine may be busy).
    assert!(stats.cpu_time >= Duration::from_millis(10) && stats.cpu_time <= stats.wall_time, "{stats:?}");
    // A guest that exits burned some of a large budget.
    let exits = runtime.load_file(CLI_EXIT_CODE).unwrap();
    let report = exits.run(&RunOptions::new().fuel(1 << 40).arg("0")).unwrap();
    let burned = report.stats.fuel_consumed;
    assert!(report.outcome == Outcome::Exited(0) && burned > 0 && burned < 1 << 40, "{burned}");
    // A runtime without fuel metering burns none.
    let unmetered = Runtime::new().unwrap().load_file(CLI_EXIT_CODE).unwrap();
    assert_eq!(unmetered.run(&RunOptions::new().arg("0")).unwrap().stats.fuel_consumed, 0);
}

#[test]
fn limits_outcomes_through_the_api() {
    let runtime = Runtime::builder().fuel(true).build().unwrap();
    let spin = runtime.load_file(LIMITS_SPIN).unwrap();
    let report = spin.run(&RunOptions::new().timeout(Duration::from_millis(100))).unwrap();
    assert_eq!(report.outcome, Outcome::TimedOut(Duration::from_millis(100)));
    assert_eq!(spin.run(&RunOptions::new().fuel(10_000)).unwrap().outcome, Outcome::OutOfFuel(10_000));
    // Fuel and timeout enough for a guest that finishes: it exits normally.
    let options = RunOptions::new().fuel(1 << 40).timeout(Duration::from_secs(60)).arg("7");
    let guest = runtime.load_file(CLI_EXIT_CODE).unwrap();
    assert_eq!(guest.run(&options).unwrap().outcome, Outcome::Exited(7));
    // On a runtime that meters fuel, a run without a limit is not starved.
    assert_eq!(guest.run(&RunOptions::new().arg("3")).unwrap().outcome, Outcome::Exited(3));
    for bad in [RunOptions::new().fuel(0), RunOptions::new().max_memory(0), RunOptions::new().timeout(Duration::ZERO)] {
        let err = guest.run(&bad).unwrap_err();
        assert!(matches!(err.downcast_ref::<ConfigError>(), Some(ConfigError::BadLimit { .. })), "{err:#}");
    }
    // Fuel needs a runtime that meters it: refused, not ignored.
    let unmetered = Runtime::new().unwrap().load_file(LIMITS_SPIN).unwrap();
    let err = unmetered.run(&RunOptions::new().fuel(10_000)).unwrap_err();
    assert!(err.to_string().contains("without fuel metering"), "{err:#}");
    // A timeout needs a runtime that compiles the checks in: refused, not ignored.
    let unchecked = Runtime::builder().timeouts(false).build().unwrap();
    assert!(!unchecked.timeouts());
    let spin = unchecked.load_file(LIMITS_SPIN).unwrap();
    let err = spin.run(&RunOptions::new().timeout(Duration::from_millis(100))).unwrap_err();
    assert!(err.to_string().contains("without timeouts"), "{err:#}");
    assert_eq!(guest.run(&RunOptions::new().arg("5")).unwrap().outcome, Outcome::Exited(5));
    let guest = unchecked.load_file(CLI_EXIT_CODE).unwrap();
    assert_eq!(guest.run(&RunOptions::new().arg("4")).unwrap().outcome, Outcome::Exited(4));
}

#[test]
fn limits_oob_guard() {
    // One 64 KiB page: the last byte reads, every address past it traps, whether it falls in
    // the PROT_NONE reservation or in the guard region past it.
    let guest = Runtime::new().unwrap().load_file(LIMITS_OOB_GUARD).unwrap();
    let options = RunOptions::new();
    let report = guest.invoke(&options, "load", &[WasmValue::I32(0xffff)]).unwrap();
    assert_eq!(report.outcome, Outcome::Returned(vec![WasmValue::I32(0)]));
    for addr in [0x10000u32, 0x1000000, 0x7fffffff, 0xfffffff0, 0xffffffff] {
        let report = guest.invoke(&options, "load", &[WasmValue::I32(addr as i32)]).unwrap();
        let Outcome::Trapped(trap) = report.outcome else { panic!("{addr:#x}: {:?}", report.outcome) };
        assert_eq!(trap.trap, Some(wrt_runtime::wasmtime::Trap::MemoryOutOfBounds), "{addr:#x}");
    }
}

/// `--timeout` and `--fuel` cover the start function, with the exit codes and messages of a
/// spinning `_start`.
#[test]
fn limits_start_spin() {
    let start = Instant::now();
    let out = run(["run", "--timeout", "1s", LIMITS_START_SPIN]);
    assert_code(&out, 124);
    assert!(stderr(&out).contains("timed out after 1s"), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(30), "the timeout did not stop the start function");
    let out = run(["run", "--fuel", "1000000", LIMITS_START_SPIN]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("ran out of fuel (all 1000000 units used)"), "{}", stderr(&out));
    // Through the API: a report with the outcome, not an error.
    let guest = Runtime::builder().fuel(true).build().unwrap().load_file(LIMITS_START_SPIN).unwrap();
    let fuel = RunOptions::new().fuel(10_000);
    assert_eq!(guest.run(&fuel).unwrap().outcome, Outcome::OutOfFuel(10_000));
    assert_eq!(guest.invoke(&fuel, "_start", &[]).unwrap().outcome, Outcome::OutOfFuel(10_000));
    let mut instance = guest.instantiate(&RunOptions::new().timeout(Duration::from_millis(200))).unwrap();
    assert_eq!(instance.ended(), Some(&Outcome::TimedOut(Duration::from_millis(200))));
    // The instance ended during instantiation: nothing more runs in it.
    assert_eq!(instance.run_start().unwrap(), Outcome::TimedOut(Duration::from_millis(200)));
    assert_eq!(instance.memory_range(), None);
}

/// A trap in the start function exits 134 with the trap's message, not 2.
#[test]
fn limits_start_trap() {
    let out = run(["run", LIMITS_START_TRAP]);
    assert_code(&out, 134);
    let err = stderr(&out);
    assert!(err.contains("trapped: wasm trap: wasm `unreachable` instruction executed"), "{err}");
    assert!(!err.contains("failed to instantiate"), "{err}");
    let report = Runtime::new().unwrap().load_file(LIMITS_START_TRAP).unwrap().run(&RunOptions::new()).unwrap();
    let Outcome::Trapped(trap) = report.outcome else { panic!("{:?}", report.outcome) };
    assert_eq!(trap.trap, Some(wrt_runtime::wasmtime::Trap::UnreachableCodeReached));
}

/// A start function's `proc_exit` is the guest's exit, and `_start` (which traps) never runs.
#[test]
fn limits_start_exit() {
    let out = run(["run", LIMITS_START_EXIT]);
    assert_code(&out, 7);
    assert!(crate::util::wrt_lines(&out).is_empty(), "{}", stderr(&out));
}

/// A guest sleeping 10 s in `poll_oneoff` stops at a 1 s timeout; a blocking WASI call used to
/// run past the deadline.
#[test]
fn limits_sleep() {
    let start = Instant::now();
    let out = run(["run", "--timeout", "1s", LIMITS_SLEEP]);
    let took = start.elapsed();
    assert_code(&out, 124);
    assert!(stderr(&out).contains("timed out after 1s"), "{}", stderr(&out));
    assert!(took < Duration::from_secs(8), "stopped after {took:?}, not at the deadline");
    // A sleep that ends before the deadline returns normally (one event).
    let out = run(["run", "--timeout", "20s", "--invoke", "sleep", LIMITS_SLEEP, "0"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "1\n");
    // Hostile subscription pointers and counts: with a timeout, the same errno or trap as WASI's
    // own `poll_oneoff` without one, and no host panic.
    let guest = Runtime::new().unwrap().load_file(LIMITS_SLEEP).unwrap();
    let plain = RunOptions::new();
    let timed = RunOptions::new().timeout(Duration::from_secs(20));
    for args in [[0xfffffff0u32, 1], [65520, 1], [0, 0x7fffffff], [0, 0xffffffff], [0, 0]] {
        let args = args.map(|arg| WasmValue::I32(arg as i32));
        let outcome = |options: &RunOptions| match guest.invoke(options, "poll", &args).unwrap().outcome {
            Outcome::Trapped(trap) => Err(trap.message),
            other => Ok(other),
        };
        assert_eq!(outcome(&timed), outcome(&plain), "{args:?}");
    }
}

/// A guest writing to a stdout pipe that nobody reads stops at the deadline; it was held until the
/// reader went away. (The same holds for stderr, but wrt's own message about the timeout then waits
/// for room in that pipe too.)
#[test]
fn limits_stdout_flood() {
    use std::process::Stdio;
    let start = Instant::now();
    let mut child = crate::util::wrt()
        .args(["run", "--timeout", "1s", LIMITS_STDOUT_FLOOD])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Hold stdout open and unread for at most 30 s (then drain it, so that a guest the timeout
    // does not stop fails the test instead of hanging it).
    let mut out = child.stdout.take().unwrap();
    let mut status = None;
    while status.is_none() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
        status = child.try_wait().unwrap();
    }
    let took = start.elapsed();
    let drain = std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let output = child.wait_with_output().unwrap();
    drain.join().unwrap().unwrap();
    assert_code(&output, 124);
    assert!(took < Duration::from_secs(8), "stopped after {took:?}, not at the deadline");
    assert!(stderr(&output).contains("timed out after 1s"), "{}", stderr(&output));
}

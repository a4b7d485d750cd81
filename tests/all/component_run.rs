//! `wasi:cli/command` components run like core modules: exit codes, traps, timeout, fuel, memory
//! limit, cache, and refusals. These guests are components written in WebAssembly text, so each
//! test shows exactly what the guest does; guests built from Rust, Python and JavaScript are in
//! `component.rs`, `py.rs` and `js.rs`.

use std::time::Duration;

use wrt_runtime::{InstantiateError, Outcome, RunOptions, Runtime};

use crate::util::{assert_code, run, stderr, wrt_lines};

/// A command component whose `run` executes `body` (core wasm returning the `result`
/// discriminant: 0 ok, 1 err), with one page of memory.
fn command(body: &str) -> String {
    format!(
        r#"(component
  (core module $m
    (memory (export "memory") 1)
    (func (export "run") (result i32) {body}))
  (core instance $i (instantiate $m))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $run (export "run" (func $run)))
  (export "wasi:cli/run@0.2.12" (instance $run)))"#
    )
}

/// A command of WASI 0.3 whose async `run` (lifted with a callback, the stackless form) executes
/// `body`, core wasm that calls `$ret` (`task.return` of the `result`: 0 ok, 1 err) and returns
/// the callback code 0 (exit).
fn command_p3(body: &str) -> String {
    format!(
        r#"(component
  (core func $ret (canon task.return (result (result))))
  (core module $m
    (import "" "ret" (func $ret (param i32)))
    (func (export "run") (result i32) {body})
    (func (export "cb") (param i32 i32 i32) (result i32) unreachable))
  (core instance $i (instantiate $m (with "" (instance (export "ret" (func $ret))))))
  (func $run async (result (result)) (canon lift (core func $i "run") async (callback (core func $i "cb"))))
  (instance $run (export "run" (func $run)))
  (export "wasi:cli/run@0.3.0" (instance $run)))"#
    )
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn run_returning_ok_and_err_exits_0_and_1() {
    let runtime = Runtime::new().unwrap();
    for (body, code) in [("i32.const 0", 0), ("i32.const 1", 1)] {
        let guest = runtime.load_bytes("cmd.wat", command(body).as_bytes()).unwrap();
        assert!(guest.is_component());
        let report = guest.run(&RunOptions::new()).unwrap();
        assert_eq!(report.outcome, Outcome::Exited(code), "{body}");
    }
}

/// A component with an async export (WASI 0.3's `run`) loads and runs; its trap, timeout and fuel end it as they end a WASI 0.2 command.
#[test]
fn an_async_run_of_wasi_0_3_is_called_and_ends_as_a_0_2_run_ends() {
    let runtime = Runtime::builder().fuel(true).build().unwrap();
    for (body, code) in [("(call $ret (i32.const 0)) (i32.const 0)", 0), ("(call $ret (i32.const 1)) (i32.const 0)", 1)]
    {
        let guest = runtime.load_bytes("p3.wat", command_p3(body).as_bytes()).unwrap();
        assert_eq!(guest.wasi_version(), wrt_runtime::WasiVersion::P3);
        assert_eq!(guest.run(&RunOptions::new()).unwrap().outcome, Outcome::Exited(code), "{body}");
    }
    trap_timeout_and_fuel_end(command_p3);
    // A `run` that exits without `task.return` breaks the component model's rules: a trap.
    let guest = runtime.load_bytes("no-return.wat", command_p3("(i32.const 0)").as_bytes()).unwrap();
    assert!(matches!(guest.run(&RunOptions::new()).unwrap().outcome, Outcome::Trapped(_)));
}

#[test]
fn trap_timeout_and_fuel_end_a_component_as_they_end_a_module() {
    trap_timeout_and_fuel_end(command);
}

/// Under `wrt run`, the command that `text` makes of a body that traps exits 134 naming the
/// trap, and of one that spins is stopped by `--timeout` (124, in time) and by `--fuel` (134,
/// saying so).
fn trap_timeout_and_fuel_end(text: fn(&str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let trap = write(&dir, "trap.wat", &text("unreachable"));
    let out = run(["run".as_ref(), trap.as_os_str()]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("wasm `unreachable` instruction executed"), "{}", stderr(&out));

    let spin = write(&dir, "spin.wat", &text("(loop (br 0)) i32.const 0"));
    let started = std::time::Instant::now();
    let out = run(["run", "--timeout", "300ms", spin.to_str().unwrap()]);
    assert_code(&out, 124);
    assert!(started.elapsed() < Duration::from_secs(10));

    let out = run(["run", "--fuel", "100000", spin.to_str().unwrap()]);
    assert_code(&out, 134);
    assert!(wrt_lines(&out).iter().any(|l| l.contains("ran out of fuel")), "{}", stderr(&out));
}

#[test]
fn the_memory_limit_holds_for_every_memory_of_a_component() {
    // Two core instances, each with 2 MiB of memory: 4 MiB in all.
    let text = r#"(component
  (core module $a (memory (export "memory") 32))
  (core module $m
    (memory (export "memory") 32)
    (func (export "run") (result i32) (i32.const 0)))
  (core instance $ia (instantiate $a))
  (core instance $i (instantiate $m))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $run (export "run" (func $run)))
  (export "wasi:cli/run@0.2.12" (instance $run)))"#;
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_bytes("two.wat", text.as_bytes()).unwrap();
    assert_eq!(guest.run(&RunOptions::new().max_memory(4 << 20)).unwrap().outcome, Outcome::Exited(0));
    let err = guest.run(&RunOptions::new().max_memory(3 << 20)).unwrap_err();
    assert!(matches!(err.downcast_ref::<InstantiateError>(), Some(InstantiateError::MemoryLimit { .. })), "{err:#}");
}

#[test]
fn a_component_that_is_no_command_and_invoke_are_refused_by_name() {
    let runtime = Runtime::new().unwrap();
    let err = runtime.load_bytes("lib.wat", b"(component)").unwrap_err();
    assert!(matches!(err.downcast_ref::<InstantiateError>(), Some(InstantiateError::NotACommand { .. })), "{err:#}");
    assert!(format!("{err:#}").starts_with("component `lib.wat` is not a command: "), "{err:#}");

    let dir = tempfile::tempdir().unwrap();
    let ok = write(&dir, "ok.wat", &command("i32.const 0"));
    let out = run(["run", "--invoke", "run", ok.to_str().unwrap()]);
    assert_code(&out, 2);
    assert_eq!(wrt_lines(&out), ["wrt: guest `ok.wat` is a component: `--invoke` calls exports of core modules only"]);
}

#[test]
fn an_unknown_layer_is_neither_module_nor_component() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("layer2.wasm");
    std::fs::write(&path, b"\0asm\x0d\0\x02\0").unwrap();
    let out = run(["run".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        [
            "wrt: `layer2.wasm` is not a WebAssembly module or component (no `\\0asm` header with a known layer, and not WebAssembly text)"
        ]
    );
}

#[test]
fn components_are_cached_and_loaded_back_as_components() {
    let dir = tempfile::tempdir().unwrap();
    let cache = wrt_runtime::CacheMode::Dir(dir.path().join("cache"));
    let runtime = Runtime::builder().cache(cache.clone()).build().unwrap();
    let text = command("i32.const 1");
    let first = runtime.load_bytes("c.wat", text.as_bytes()).unwrap();
    assert!(!first.from_cache());
    assert_eq!(cache.usage().unwrap().entries, 1);
    let second = runtime.load_bytes("c.wat", text.as_bytes()).unwrap();
    assert!(second.from_cache() && second.is_component());
    assert_eq!(second.run(&RunOptions::new()).unwrap().outcome, Outcome::Exited(1));
}

/// A core module's start function runs while the component is instantiated: under the same
/// timeout and fuel as `run`.
#[test]
fn a_start_function_that_spins_is_stopped_by_the_timeout_and_fuel() {
    let text = r#"(component
  (core module $m
    (func $spin (loop (br 0)))
    (start $spin)
    (func (export "run") (result i32) (i32.const 0)))
  (core instance $i (instantiate $m))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $run (export "run" (func $run)))
  (export "wasi:cli/run@0.2.12" (instance $run)))"#;
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "start.wat", text);
    let started = std::time::Instant::now();
    let out = run(["run", "--timeout", "300ms", path.to_str().unwrap()]);
    assert_code(&out, 124);
    assert!(started.elapsed() < Duration::from_secs(10));
    let out = run(["run", "--fuel", "100000", path.to_str().unwrap()]);
    assert_code(&out, 134);
    assert!(wrt_lines(&out).iter().any(|l| l.contains("ran out of fuel")), "{}", stderr(&out));
}

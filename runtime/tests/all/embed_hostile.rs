//! An embedder's inputs and host functions turned against the sandbox: labels full of control
//! bytes in the audit log, and host functions that call back into the guest that called them,
//! in synchronous and asynchronous runs.

use wrt_runtime::wasmtime::{self, Caller, Linker, Trap};
use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{GuestOutput, GuestState, Outcome, RunOptions, Runtime, TrapInfo};
use wrt_test_guests::BENCH_SPAWN_LOOP;

use crate::util::Collected;

/// A request id and a guest name that try to end their record, start a forged one, and move a
/// terminal's cursor: each record stays one line of JSON, holds no raw control byte, and gives
/// both labels back exactly as the embedder set them.
#[test]
fn labels_with_control_bytes_stay_inside_their_records() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let request = "req\n{\"event\":\"decision\",\"decision\":\"allow\"}\r\u{1b}[2J\u{7}\u{0}\u{7f}\u{9b}31m\u{2028}end";
    let name = "guest\n\u{1b}]0;owned\u{7}.wasm";
    let bytes = std::fs::read(BENCH_SPAWN_LOOP).unwrap();
    let guest = Runtime::new().unwrap().load_bytes(name, &bytes).unwrap();
    let collected = Collected::default();
    let options = RunOptions::new()
        .spawn_policy(&Policy::deny_all().allow_program("/bin/true"))
        .unwrap()
        .audit_sink(AuditSink::new(collected.clone()))
        .request_id(request)
        .args(["1", "/bin/false"]);
    let report = guest.run(&options).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(1), "the spawn was denied");
    let text = collected.text();
    assert!(!text.is_empty(), "no record");
    for line in text.lines() {
        assert!(!line.chars().any(|c| c.is_control() || c == '\u{2028}'), "a raw control character: {line:?}");
        let record: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(record["request"], request, "{line}");
        assert_eq!(record["guest"], name, "{line}");
    }
    assert!(text.lines().all(|line| !line.contains(r#""decision":"allow""#)), "a forged decision: {text}");
}

/// `host::again` calls the guest's `down`, which calls `host::again`: with a synchronous host
/// function, each call goes one level deeper.
fn link_reentering(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.func_wrap("host", "again", |mut caller: Caller<'_, GuestState>, depth: i32| {
        let down = caller.get_export("down").and_then(|e| e.into_func()).expect("an export `down`");
        let down = down.typed::<i32, i32>(&caller)?;
        down.call(&mut caller, depth + 1)
    })?;
    Ok(())
}

/// The same with an asynchronous host function, which calls back with `call_async`.
fn link_reentering_async(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.func_wrap_async("host", "again", |mut caller: Caller<'_, GuestState>, (depth,): (i32,)| {
        Box::new(async move {
            let down = caller.get_export("down").and_then(|e| e.into_func()).expect("an export `down`");
            let down = down.typed::<i32, i32>(&caller)?;
            down.call_async(&mut caller, depth + 1).await
        })
    })?;
    Ok(())
}

/// `down(depth)` returns `depth` at 100 and calls the host again below that; `forever` calls
/// the host with no end.
const REENTERING: &str = r#"(module
  (import "host" "again" (func $again (param i32) (result i32)))
  (func (export "down") (param i32) (result i32)
    (if (result i32) (i32.ge_s (local.get 0) (i32.const 100))
      (then (local.get 0))
      (else (call $again (local.get 0)))))
  (func (export "forever") (param i32) (result i32)
    (drop (call $again (i32.const -2147483648)))
    (i32.const 0))
  (func (export "_start") (drop (call $again (i32.const 0)))))"#;

/// How a re-entering guest's calls end, in one kind of run: `deep` levels return their depth;
/// without an end, the guest traps as `bounded` says (no host panic, no hang, no memory or
/// mappings taken without bound), and the instance stays usable.
fn assert_reentry_is_bounded(
    results: Vec<wasmtime::Result<Result<Vec<wasmtime::Val>, Outcome>>>,
    bounded: impl Fn(&TrapInfo) -> bool,
) {
    let [deep, forever, again]: [_; 3] = results.try_into().expect("three calls");
    assert_eq!(deep.unwrap().unwrap()[0].unwrap_i32(), 100);
    match forever.unwrap() {
        Err(Outcome::Trapped(info)) => assert!(bounded(&info), "{info:?}"),
        other => panic!("an endless re-entry ended otherwise: {other:?}"),
    }
    assert_eq!(again.unwrap().unwrap()[0].unwrap_i32(), 100, "the instance still answers after the overflow");
}

/// A synchronous host function that calls back into its guest, in a synchronous run.
#[test]
fn a_reentering_host_function_is_bounded_by_the_guests_stack() {
    let runtime = Runtime::builder().link_modules(link_reentering).build().unwrap();
    let guest = runtime.load_bytes("reenter.wat", REENTERING.as_bytes()).unwrap();
    let mut instance = guest.instantiate(&RunOptions::new()).unwrap();
    let results = [("down", 0), ("forever", 0), ("down", 0)]
        .map(|(name, arg)| instance.call(name, &[wasmtime::Val::I32(arg)]))
        .into_iter()
        .collect();
    assert_reentry_is_bounded(results, |info| info.trap == Some(Trap::StackOverflow));
    let report = guest.run(&RunOptions::new().stderr(GuestOutput::Null)).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0), "_start re-enters 100 levels and returns");
}

/// An asynchronous host function that calls back into its guest with `call_async`, in an
/// asynchronous run: each level is a fiber of its own (a fresh stack), so the wasm stack never
/// overflows; the run's share of fibers bounds it instead, and the deep but bounded calls fit.
#[test]
fn a_reentering_async_host_function_is_bounded_by_the_runs_fibers() {
    let runtime = Runtime::builder().link_modules(link_reentering_async).build().unwrap();
    let guest = runtime.load_bytes("reenter.wat", REENTERING.as_bytes()).unwrap();
    let executor = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let results = executor.block_on(async {
        let mut instance = guest.instantiate_async(&RunOptions::new()).await.unwrap();
        let mut results = Vec::new();
        // 20 levels deep: within the run's share of fibers.
        for (name, arg) in [("down", 80), ("forever", 0), ("down", 80)] {
            results.push(instance.call_async(name, &[wasmtime::Val::I32(arg)]).await);
        }
        results
    });
    assert_reentry_is_bounded(results, |info| info.message.contains("nested more than"));
}

/// A synchronous host function that calls back into its guest in an asynchronous run (where
/// wasmtime wants `call_async`): the guest traps with wasmtime's reason, the host never panics.
#[test]
fn a_synchronous_reentry_in_an_async_run_fails_without_a_panic() {
    let runtime = Runtime::builder().link_modules(link_reentering).build().unwrap();
    let guest = runtime.load_bytes("reenter.wat", REENTERING.as_bytes()).unwrap();
    let executor = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        executor.block_on(async {
            let mut instance = guest.instantiate_async(&RunOptions::new()).await.unwrap();
            instance.call_async("down", &[wasmtime::Val::I32(0)]).await
        })
    }));
    let called = called.unwrap_or_else(|_| panic!("the host panicked"));
    match called {
        Ok(Err(Outcome::Trapped(info))) => assert!(info.message.contains("blocking `call`"), "{info:?}"),
        other => panic!("ended otherwise: {other:?}"),
    }
}

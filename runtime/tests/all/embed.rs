//! The embedding API: one shared `Runtime`, guests compiled once, per-run options; errors that name
//! the thing, with the reason in their chain (on one line with `{err:#}`).

use std::time::Duration;

use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{ConfigError, GuestOutput, InstantiateError, LoadError, Outcome, RunOptions, Runtime, WasmValue};
use wrt_test_guests::{CLI_ECHO, CLI_EXIT_CODE};

/// `err`'s whole chain (`{err:#}`), checked to be one line.
fn one_line(err: &wrt_runtime::Error) -> String {
    let shown = format!("{err:#}");
    assert!(!shown.contains('\n'), "{shown}");
    shown
}

#[test]
fn errors_name_the_thing_and_the_reason() {
    let runtime = Runtime::new().unwrap();
    let err = runtime.load_file("/nonexistent/x.wasm").unwrap_err();
    assert!(matches!(err.downcast_ref::<LoadError>(), Some(LoadError::Read { .. })), "{err:#}");
    let shown = one_line(&err);
    assert!(shown.contains("`/nonexistent/x.wasm`") && shown.contains("No such file"), "{shown}");
    // The outermost message says what failed; the cause follows it in the chain, typed.
    assert_eq!(err.to_string(), "failed to read `/nonexistent/x.wasm`");
    let Some(LoadError::Read { reason, .. }) = err.downcast_ref::<LoadError>() else { unreachable!() };
    assert_eq!(reason.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(format!("{err:?}").matches("No such file").count(), 1, "{err:?}");

    // A module header with garbage after it.
    let err = runtime.load_bytes("bad.wasm", b"\0asm\x01\0\0\0\x01\xff\xff").unwrap_err();
    assert!(matches!(err.downcast_ref::<LoadError>(), Some(LoadError::Compile { .. })), "{err:#}");
    let shown = one_line(&err);
    assert!(shown.starts_with("failed to compile guest `bad.wasm`: ") && shown.len() > 40, "{shown}");
    // The chain adds nothing twice.
    assert_eq!(err.to_string(), "failed to compile guest `bad.wasm`");
    for cause in err.chain().skip(1) {
        assert_eq!(shown.matches(&cause.to_string()).count(), 1, "{cause} in {shown}");
    }
    assert_eq!(wrt_text::error_chain(&*err), shown);

    let err = RunOptions::new().spawn_policy(&Policy::deny_all().allow_program("no-such-program-wrt")).unwrap_err();
    let shown = wrt_text::error_chain(&err);
    assert!(shown.starts_with("invalid spawn policy: ") && shown.contains("no-such-program-wrt"), "{shown}");
    // The I/O error inside a policy error is kept.
    let err = RunOptions::new().spawn_policy(&Policy::deny_all().sandbox_read("/nonexistent-dir")).unwrap_err();
    let shown = wrt_text::error_chain(&err);
    assert_eq!(
        shown,
        "invalid spawn policy: sandbox path `/nonexistent-dir` cannot be resolved: No such file or directory (os error 2)"
    );

    let guest = runtime.load_file(CLI_EXIT_CODE).unwrap();
    let options = RunOptions::new().preopen("/nonexistent-dir", "/d", wrt_runtime::DirAccess::ReadOnly);
    let err = guest.run(&options).unwrap_err();
    assert!(matches!(err.downcast_ref::<ConfigError>(), Some(ConfigError::Preopen { .. })), "{err:#}");
    let shown = one_line(&err);
    assert!(shown.contains("`/nonexistent-dir`") && shown.contains("No such file"), "{shown}");

    let err = guest.run(&RunOptions::new().audit_log("/nonexistent-dir/audit.jsonl")).unwrap_err();
    let shown = one_line(&err);
    assert!(shown.contains("audit log `/nonexistent-dir/audit.jsonl`") && shown.contains("No such file"), "{shown}");
}

#[test]
fn initial_memory_over_the_limit_is_an_error_that_says_so() {
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_bytes("big.wat", b"(module (memory 32) (func (export \"_start\")))").unwrap();
    let err = guest.run(&RunOptions::new().max_memory(1 << 20)).unwrap_err();
    let Some(InstantiateError::MemoryLimit { minimum, limit, .. }) = err.downcast_ref::<InstantiateError>() else {
        panic!("{err:#}");
    };
    assert_eq!((*minimum, *limit), (2 << 20, 1 << 20));
    assert!(one_line(&err).contains("needs 2 MiB of memory to start"), "{err}");
    // Within the limit it runs.
    assert_eq!(guest.run(&RunOptions::new().max_memory(2 << 20)).unwrap().outcome, Outcome::Exited(0));
}

#[test]
fn one_guest_many_options_many_threads() {
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(CLI_ECHO).unwrap();
    let base = RunOptions::new().stdout(GuestOutput::Capture { limit: 1 << 16 }).timeout(Duration::from_secs(60));
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (guest, base) = (&guest, &base);
            scope.spawn(move || {
                for run in 0..25 {
                    let arg = format!("t{thread}-r{run}");
                    let report = guest.run(&base.clone().arg(&arg)).unwrap();
                    assert_eq!(report.outcome, Outcome::Exited(0));
                    let out = String::from_utf8(report.stdout).unwrap();
                    assert!(out.contains(&format!("arg: {arg}\n")), "{out}");
                }
            });
        }
    });
    // A guest keeps its runtime alive.
    drop(runtime);
    assert_eq!(guest.run(&base).unwrap().outcome, Outcome::Exited(0));
}

#[test]
fn unknown_imports_fail_at_load_and_trap_when_allowed() {
    let wat = br#"(module (import "env" "nope" (func $nope)) (func (export "_start") (call $nope)))"#;
    let err = Runtime::new().unwrap().load_bytes("imports.wat", wat).unwrap_err();
    assert!(matches!(err.downcast_ref::<InstantiateError>(), Some(InstantiateError::UnknownImport { .. })));
    assert!(one_line(&err).contains("`env::nope`"), "{err}");
    let lenient = Runtime::builder().unknown_imports_trap(true).build().unwrap();
    let report = lenient.load_bytes("imports.wat", wat).unwrap().run(&RunOptions::new()).unwrap();
    assert!(matches!(report.outcome, Outcome::Trapped(_)), "{:?}", report.outcome);
    // wrt's internal module stays out of reach, even with unknown imports allowed.
    let internal = br#"(module (import "wrt internal: wasi_snapshot_preview1" "poll_oneoff" (func (param i32 i32 i32 i32) (result i32))))"#;
    let err = lenient.load_bytes("internal.wat", internal).unwrap_err();
    assert!(matches!(err.downcast_ref::<InstantiateError>(), Some(InstantiateError::UnknownImport { .. })));
}

/// An instance whose guest exited (`_start` returned, or `proc_exit`) runs nothing more: a
/// second `run_start` or an `invoke` returns how it ended without running the guest again. A
/// trap does not end it: wasm lets it run again.
#[test]
fn an_ended_instance_returns_its_outcome_and_runs_nothing_more() {
    let runtime = Runtime::new().unwrap();
    for path in [wrt_test_guests::CLI_HELLO, wrt_test_guests::COMPONENT_HELLO] {
        let guest = runtime.load_file(path).unwrap();
        let options = RunOptions::new().stdout(GuestOutput::Capture { limit: 1 << 16 });
        let mut instance = guest.instantiate(&options).unwrap();
        assert_eq!(instance.ended(), None, "{path}");
        assert_eq!(instance.run_start().unwrap(), Outcome::Exited(0), "{path}");
        assert_eq!(instance.ended(), Some(&Outcome::Exited(0)), "{path}");
        assert_eq!(instance.run_start().unwrap(), Outcome::Exited(0), "{path}");
        assert_eq!(instance.invoke("_start", &[]).unwrap(), Outcome::Exited(0), "{path}");
        let once = guest.run(&options).unwrap().stdout;
        assert!(!once.is_empty(), "{path}");
        assert_eq!(instance.into_report(Outcome::Exited(0)).stdout, once, "{path}: the guest ran twice");
    }
    // A trap leaves it to run again (and trap again).
    let trap = runtime.load_bytes("trap.wat", b"(module (func (export \"_start\") unreachable))").unwrap();
    let mut instance = trap.instantiate(&RunOptions::new()).unwrap();
    for _ in 0..2 {
        let outcome = instance.run_start().unwrap();
        assert!(matches!(outcome, Outcome::Trapped(_)), "{outcome:?}");
        assert_eq!(instance.ended(), None);
    }
    // An invoked export that returns leaves the instance ready for the next call.
    let add = runtime.load_bytes("one.wat", b"(module (func (export \"one\") (result i32) i32.const 1))").unwrap();
    let mut instance = add.instantiate(&RunOptions::new()).unwrap();
    for _ in 0..2 {
        assert_eq!(instance.invoke("one", &[]).unwrap(), Outcome::Returned(vec![WasmValue::I32(1)]));
    }
    assert_eq!(instance.ended(), None);
}

/// The sync API works inside tokio, where blocking is forbidden: from many tasks of a
/// multi-thread runtime at once and from its `block_on`, and from a current-thread runtime;
/// core modules and components alike, and a timeout still ends a spinning guest.
#[test]
fn guests_run_from_inside_tokio_runtimes() {
    let runtime = Runtime::new().unwrap();
    let guests = [
        runtime.load_file(wrt_test_guests::CLI_HELLO).unwrap(),
        runtime.load_file(wrt_test_guests::COMPONENT_HELLO).unwrap(),
    ];
    let spin = runtime.load_file(wrt_test_guests::LIMITS_SPIN).unwrap();
    let capture = RunOptions::new().stdout(GuestOutput::Capture { limit: 1 << 16 });
    // What each prints, run outside any runtime.
    let expected: Vec<Vec<u8>> = guests.iter().map(|guest| guest.run(&capture).unwrap().stdout).collect();
    assert!(expected.iter().all(|out| out.starts_with(b"hello")), "{expected:?}");
    let run_all = {
        let (guests, spin, capture) = (guests.clone(), spin.clone(), capture.clone());
        move || {
            for (guest, expected) in guests.iter().zip(&expected) {
                let report = guest.run(&capture).unwrap();
                assert_eq!((report.outcome, &report.stdout), (Outcome::Exited(0), expected));
            }
            let timeout = Duration::from_millis(50);
            assert_eq!(spin.run(&RunOptions::new().timeout(timeout)).unwrap().outcome, Outcome::TimedOut(timeout));
        }
    };
    let multi = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    multi.block_on(async {
        run_all();
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                tokio::spawn({
                    let run_all = run_all.clone();
                    async move { run_all() }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    let current = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    current.block_on(async { run_all() });
    current.block_on(async { tokio::spawn(async move { run_all() }).await.unwrap() });
}

/// The capture limit behaves as documented, and the report says what was cut.
#[test]
fn capture_limit_keeps_what_fits_and_reports_truncation() {
    let guest = Runtime::new().unwrap().load_file(wrt_test_guests::CLI_HELLO).unwrap();
    let full = guest.run(&RunOptions::new().stdout(GuestOutput::Capture { limit: 1 << 16 })).unwrap();
    assert_eq!(full.outcome, Outcome::Exited(0));
    assert!(!full.stdout_truncated && !full.stderr_truncated);
    let small =
        RunOptions::new().stdout(GuestOutput::Capture { limit: 5 }).stderr(GuestOutput::Capture { limit: 4096 });
    let report = guest.run(&small).unwrap();
    assert_eq!(report.stdout, &full.stdout[..5]);
    assert!(report.stdout_truncated && !report.stderr_truncated);
    // The guest's next write failed with an I/O error, not a trap of wrt's: Rust's `println!`
    // panics on it, which the guest reports on stderr.
    let err = String::from_utf8_lossy(&report.stderr);
    assert!(err.contains("failed printing to stdout"), "{:?}: {err}", report.outcome);
}

/// A guest that imports no WASI function gets no WASI context (it costs about a microsecond per
/// run), yet its runs fail and succeed as any guest's do.
#[test]
fn guests_without_wasi_imports_run_the_same_without_a_context() {
    let runtime = Runtime::new().unwrap();
    let trivial = runtime.load_bytes("trivial.wat", br#"(module (func (export "_start")))"#).unwrap();
    let captured = RunOptions::new().stdout(GuestOutput::Capture { limit: 64 });
    let report = trivial.run(&captured).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    assert!(report.stdout.is_empty() && !report.stdout_truncated);
    // The same options fail the same way: a missing preopen is still an error.
    let options = RunOptions::new().preopen("/nonexistent-dir", "/d", wrt_runtime::DirAccess::ReadOnly);
    let err = trivial.run(&options).unwrap_err();
    assert!(matches!(err.downcast_ref::<ConfigError>(), Some(ConfigError::Preopen { .. })), "{err:#}");
}

#[test]
fn the_entry_point_is_the_first_of_start_and_the_empty_name_that_takes_and_returns_nothing() {
    let runtime = Runtime::new().unwrap();
    let run = |wat: &str| runtime.load_bytes("entry.wat", wat.as_bytes()).unwrap().run(&RunOptions::new());
    // `_start` with a parameter is not an entry point: the empty name is, and it runs (and traps).
    let report = run(r#"(module (func (export "_start") (param i32)) (func (export "") unreachable))"#).unwrap();
    assert!(matches!(report.outcome, Outcome::Trapped(_)), "{:?}", report.outcome);
    // A `_start` that takes and returns nothing runs, whatever the empty name is.
    let report = run(r#"(module (func (export "_start")) (func (export "") unreachable))"#).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    // Neither takes and returns nothing: no entry point, an error that says so.
    let err = run(r#"(module (func (export "_start") (result i32) i32.const 1))"#).unwrap_err();
    assert!(matches!(err.downcast_ref(), Some(InstantiateError::NoSuchExport { .. })), "{err:#}");
}

#[test]
fn a_guests_first_buffer_counts_against_the_memory_limit_from_then_on() {
    // A buffer of 3 MiB, then 2 MiB more linear memory under a 4 MiB limit: refused while the
    // buffer lives, granted once it is released.
    let wat = r#"(module
      (import "wrt_v1" "buffer_alloc" (func $alloc (param i32) (result i32)))
      (import "wrt_v1" "buffer_release" (func $release (param i32) (result i32)))
      (memory 1)
      (func (export "grow_beside_a_buffer") (result i32 i32)
        (local $buf i32)
        (local.set $buf (call $alloc (i32.const 3145728)))
        (memory.grow (i32.const 32))
        (drop (call $release (local.get $buf)))
        (memory.grow (i32.const 32))))"#;
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_bytes("grow.wat", wat.as_bytes()).unwrap();
    let report = guest.invoke(&RunOptions::new().max_memory(4 << 20), "grow_beside_a_buffer", &[]).unwrap();
    assert_eq!(report.outcome, Outcome::Returned(vec![WasmValue::I32(-1), WasmValue::I32(1)]));
    assert_eq!(report.stats.peak_external, 3 << 20, "{:?}", report.stats);
    // A run whose guest takes no buffer reports none.
    let trivial = runtime.load_bytes("trivial.wat", br#"(module (func (export "_start")))"#).unwrap();
    let stats = trivial.run(&RunOptions::new()).unwrap().stats;
    assert_eq!((stats.peak_external, stats.peak_buffer_memory, stats.final_external), (0, 0, 0));
}

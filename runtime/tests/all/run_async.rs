//! Asynchronous runs (`Guest::run_async`, `Instance::*_async`): many runs in flight on two
//! executor threads, core modules and components, the guest's collector called from an
//! asynchronous host call, the embedder's asynchronous host functions, children spawned from a
//! fiber, timeouts and cancels that reach a run waiting in an asynchronous call, guests that
//! compute yielding to the executor, instances refusing the other kind of call, a cancel of a
//! spinning start function, a FIFO's open abandoned at the deadline, and directories read a
//! buffer at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wrt_runtime::wasmtime::Val;
use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{CancelToken, DirAccess, GuestOutput, InstantiateError, Outcome, RunOptions, Runtime, WasmValue};
use wrt_test_guests::{
    CLI_HELLO, COMPONENT_HELLO, FS_OPEN_FIFO, FS_READ_DIR, FS_READ_DIR_PASSES, LIMITS_SLEEP, LIMITS_SPIN,
    LIMITS_START_SPIN, MEM_GC_HOOK, SPAWN_INHERIT,
};

/// An executor of `workers` threads that never starts a blocking thread for a run: every run
/// below shares those workers.
fn executor(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap()
}

fn captured() -> RunOptions {
    let capture = GuestOutput::Capture { limit: 1 << 16 };
    RunOptions::new().stdout(capture.clone()).stderr(capture)
}

/// 1,000 runs at once on two worker threads: each sleeps a second in `poll_oneoff`, so the
/// runs finish within a minute only if they wait side by side (one after another they would
/// take 1,000 s); and 1,000 runs of hello print what a synchronous run prints.
#[test]
fn a_thousand_async_runs_share_two_worker_threads() {
    let runtime = Runtime::new().unwrap();
    let sleep = runtime.load_file(LIMITS_SLEEP).unwrap();
    let hello = runtime.load_file(CLI_HELLO).unwrap();
    let expected = hello.run(&captured()).unwrap();
    let exec = executor(2);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let slept: Vec<_> = exec.block_on(async {
        let tasks: Vec<_> = (0..1000)
            .map(|_| {
                let (sleep, in_flight, most) = (sleep.clone(), Arc::clone(&in_flight), Arc::clone(&most));
                tokio::spawn(async move {
                    let mut instance = sleep.instantiate_async(&RunOptions::new()).await.unwrap();
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    let result = instance.call_async("sleep", &[Val::I64(1)]).await.unwrap();
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    result.map(|values| values[0].unwrap_i32())
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        results
    });
    let took = started.elapsed();
    // One event: the clock subscription fired.
    assert!(slept.iter().all(|result| *result == Ok(1)), "{:?}", &slept[..4]);
    assert!(took < Duration::from_secs(60), "1,000 sleeps of a second took {took:?}: they did not overlap");
    assert!(most.load(Ordering::SeqCst) > 100, "at most {} runs were in flight", most.load(Ordering::SeqCst));

    let reports = exec.block_on(async {
        let tasks: Vec<_> = (0..1000)
            .map(|_| {
                let hello = hello.clone();
                tokio::spawn(async move { hello.run_async(&captured()).await.unwrap() })
            })
            .collect();
        let mut reports = Vec::new();
        for task in tasks {
            reports.push(task.await.unwrap());
        }
        reports
    });
    for report in reports {
        assert_eq!(report.outcome, expected.outcome);
        assert_eq!(report.stdout, expected.stdout);
    }
}

/// A component runs asynchronously as it runs synchronously, on a current-thread executor.
#[test]
fn a_component_runs_asynchronously_as_it_runs_synchronously() {
    let guest = Runtime::new().unwrap().load_file(COMPONENT_HELLO).unwrap();
    let expected = guest.run(&captured()).unwrap();
    let exec = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let report = exec.block_on(guest.run_async(&captured())).unwrap();
    assert_eq!(report.outcome, expected.outcome);
    assert_eq!(report.stdout, expected.stdout);
    assert!(!report.stdout.is_empty());
}

/// The guest's collector hook is called from asynchronous host calls too: `buffer_alloc` runs
/// `wrt_gc` with `call_async`, as often as a synchronous run calls it.
#[test]
fn the_collector_hook_runs_in_async_runs() {
    let guest = Runtime::new().unwrap().load_file(MEM_GC_HOOK).unwrap();
    let sync = guest.invoke(&RunOptions::new(), "run", &[WasmValue::I32(500)]).unwrap();
    let Outcome::Returned(values) = &sync.outcome else { panic!("{:?}", sync.outcome) };
    let [WasmValue::I32(calls)] = values[..] else { panic!("{values:?}") };
    assert!(calls > 0, "no collection in 500 buffers of 128 KiB");
    let exec = executor(2);
    let (result, stats) = exec.block_on(async {
        let mut instance = guest.instantiate_async(&RunOptions::new()).await.unwrap();
        let result = instance.call_async("run", &[Val::I32(500)]).await.unwrap();
        (result, instance.stats())
    });
    assert_eq!(result.unwrap()[0].unwrap_i32(), calls);
    assert_eq!(stats.young_collections, sync.stats.young_collections);
}

/// An embedder's asynchronous host function (`func_wrap_async`) runs in an asynchronous run;
/// a synchronous run of the same guest fails with an error, not a panic.
#[test]
fn an_async_host_function_runs_in_async_runs() {
    let runtime = Runtime::builder()
        .link_modules(|linker| {
            linker.func_wrap_async("host", "later", |_caller, (x,): (i32,)| {
                Box::new(async move {
                    tokio::task::yield_now().await;
                    Ok(x + 1)
                })
            })?;
            Ok(())
        })
        .build()
        .unwrap();
    let wat = r#"(module (import "host" "later" (func $later (param i32) (result i32)))
        (func (export "run") (result i32) (call $later (i32.const 41))))"#;
    let guest = runtime.load_bytes("later.wat", wat.as_bytes()).unwrap();
    let exec = executor(2);
    let results = exec.block_on(async {
        let mut instance = guest.instantiate_async(&RunOptions::new()).await.unwrap();
        instance.call_async("run", &[]).await.unwrap()
    });
    assert_eq!(results.unwrap()[0].unwrap_i32(), 42);
    let sync = guest.instantiate(&RunOptions::new()).and_then(|mut instance| instance.call("run", &[]));
    assert!(!matches!(sync, Ok(Ok(_))), "a synchronous call ran an asynchronous host function: {sync:?}");
}

/// A guest run asynchronously spawns a child and waits for it, from its fiber.
#[test]
fn an_async_run_spawns_and_waits_for_a_child() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let guest = Runtime::new().unwrap().load_file(SPAWN_INHERIT).unwrap();
    let policy = Policy::deny_all().allow_program("sh");
    let options = captured().spawn_policy(&policy).unwrap();
    let exec = executor(2);
    let report = exec.block_on(guest.run_async(&options)).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(3));
    assert_eq!(String::from_utf8_lossy(&report.stdout), "guest before\nchild out\nguest after\n");
    assert_eq!(String::from_utf8_lossy(&report.stderr), "child err\n");
    assert_eq!(report.stats.spawns, 1);
}

/// A guest that computes yields at every epoch tick: on a current-thread executor a short run
/// finishes while a spinning one is still running, and the spinning one stops at its timeout.
#[test]
fn a_computing_guest_yields_to_other_runs() {
    let runtime = Runtime::new().unwrap();
    let spin = runtime.load_file(LIMITS_SPIN).unwrap();
    let hello = runtime.load_file(CLI_HELLO).unwrap();
    let exec = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (spun, hello_done_while_spinning) = exec.block_on(async {
        let spinning = Arc::new(AtomicUsize::new(1));
        let flag = Arc::clone(&spinning);
        let spin_options = RunOptions::new().timeout(Duration::from_secs(2));
        let spin_run = async move {
            let report = spin.run_async(&spin_options).await.unwrap();
            flag.store(0, Ordering::SeqCst);
            report
        };
        let spin_task = tokio::spawn(spin_run);
        // Let the spinning run start first.
        tokio::task::yield_now().await;
        let report = hello.run_async(&captured()).await.unwrap();
        assert_eq!(report.outcome, Outcome::Exited(0));
        let hello_done_while_spinning = spinning.load(Ordering::SeqCst) == 1;
        (spin_task.await.unwrap(), hello_done_while_spinning)
    });
    assert_eq!(spun.outcome, Outcome::TimedOut(Duration::from_secs(2)));
    assert!(hello_done_while_spinning, "hello waited for the spinning guest to stop");
}

/// A timeout ends a run sleeping in `poll_oneoff`, and a cancel ends one sleeping with no
/// timeout, from another thread, promptly (the fastest of three within 50 ms); a spinning
/// guest is cancelled the same way.
#[test]
fn deadlines_and_cancels_reach_a_waiting_async_run() {
    let runtime = Runtime::new().unwrap();
    let sleep = runtime.load_file(LIMITS_SLEEP).unwrap();
    let spin = runtime.load_file(LIMITS_SPIN).unwrap();
    let exec = executor(2);
    let report = exec.block_on(sleep.run_async(&RunOptions::new().timeout(Duration::from_millis(200)))).unwrap();
    assert_eq!(report.outcome, Outcome::TimedOut(Duration::from_millis(200)));

    for guest in [&sleep, &spin] {
        let mut took = Vec::new();
        for _ in 0..3 {
            let token = CancelToken::new();
            let options = RunOptions::new().cancel_token(token.clone());
            let run = {
                let guest = guest.clone();
                exec.spawn(async move {
                    let report = guest.run_async(&options).await.unwrap();
                    (report.outcome, Instant::now())
                })
            };
            std::thread::sleep(Duration::from_millis(100));
            let cancelled_at = Instant::now();
            token.cancel();
            let (outcome, returned_at) = exec.block_on(run).unwrap();
            assert_eq!(outcome, Outcome::Cancelled);
            took.push(returned_at.saturating_duration_since(cancelled_at));
        }
        assert!(took.iter().all(|t| *t < Duration::from_secs(1)), "{}: {took:?}", guest.name());
        assert!(*took.iter().min().unwrap() < Duration::from_millis(50), "{}: {took:?}", guest.name());
    }
}

/// An instance is made for one kind of call: the other kind fails with `WrongMode`.
#[test]
fn instances_refuse_the_other_kind_of_call() {
    let guest = Runtime::new().unwrap().load_file(CLI_HELLO).unwrap();
    let exec = executor(1);
    let mut sync = guest.instantiate(&captured()).unwrap();
    let err = exec.block_on(sync.run_start_async()).unwrap_err();
    assert!(matches!(err.downcast_ref(), Some(InstantiateError::WrongMode { asynchronous: false, .. })), "{err:#}");
    let mut asynchronous = exec.block_on(guest.instantiate_async(&captured())).unwrap();
    let err = asynchronous.run_start().unwrap_err();
    assert!(matches!(err.downcast_ref(), Some(InstantiateError::WrongMode { asynchronous: true, .. })), "{err:#}");
    assert!(err.to_string().contains("*_async"), "{err}");
    // Neither refusal ran or spoiled anything.
    assert_eq!(sync.run_start().unwrap(), Outcome::Exited(0));
    assert_eq!(exec.block_on(asynchronous.run_start_async()).unwrap(), Outcome::Exited(0));
}

/// The futures cross threads, as `tokio::spawn` needs.
#[test]
fn async_runs_are_send() {
    fn send<T: Send>(_: &T) {}
    let guest = Runtime::new().unwrap().load_file(CLI_HELLO).unwrap();
    let options = RunOptions::new();
    send(&guest.run_async(&options));
    send(&guest.instantiate_async(&options));
}

/// A start function that spins is stopped by a cancel during instantiation, in both kinds of
/// run: the instance comes back ended, cancelled, and runs nothing more.
#[test]
fn a_cancel_stops_a_spinning_start_function() {
    let guest = Runtime::new().unwrap().load_file(LIMITS_START_SPIN).unwrap();
    let exec = executor(2);
    for asynchronous in [false, true] {
        let token = CancelToken::new();
        let canceller = {
            let token = token.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                token.cancel();
            })
        };
        let options = RunOptions::new().cancel_token(token);
        let mut instance = match asynchronous {
            true => exec.block_on(guest.instantiate_async(&options)).unwrap(),
            false => guest.instantiate(&options).unwrap(),
        };
        canceller.join().unwrap();
        assert_eq!(instance.ended(), Some(&Outcome::Cancelled), "asynchronous: {asynchronous}");
        let again = match asynchronous {
            true => exec.block_on(instance.run_start_async()).unwrap(),
            false => instance.run_start().unwrap(),
        };
        assert_eq!(again, Outcome::Cancelled);
    }
}

/// A FIFO's open waits for the other end on one of wrt's blocking threads in an asynchronous
/// run: the deadline abandons it there and the run ends timed out, its instance ended.
#[test]
fn a_deadline_abandons_an_async_fifo_open() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let guest = Runtime::new().unwrap().load_file(FS_OPEN_FIFO).unwrap();
    let exec = executor(2);
    let options = RunOptions::new().preopen(dir.path(), "/", DirAccess::ReadOnly).timeout(Duration::from_millis(200));
    let (outcome, ended) = exec.block_on(async {
        let mut instance = guest.instantiate_async(&options).await.unwrap();
        let outcome = instance.call_async("open", &[Val::I32(0)]).await.unwrap();
        (outcome, instance.ended().cloned())
    });
    assert_eq!(outcome.unwrap_err(), Outcome::TimedOut(Duration::from_millis(200)));
    assert_eq!(ended, Some(Outcome::TimedOut(Duration::from_millis(200))));
    // The abandoned open is still waiting for a writer: give it one, so it ends.
    let writer = std::fs::OpenOptions::new().write(true).open(&fifo);
    assert!(writer.is_ok(), "{writer:?}");
}

/// Stray interrupts: wrt's interrupt signal (`SIGURG`, whose handler is in place once a
/// synchronous run has had a deadline) sent to the whole process again and again while 200
/// asynchronous runs read a preopened directory and file on two workers. Each run prints what
/// a quiet synchronous run prints: a signal that lands on a worker, or on a thread doing the
/// runs' file I/O, costs at most a retried call.
#[test]
fn stray_interrupt_signals_leave_async_runs_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.txt"), "line one\nline two\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(FS_READ_DIR).unwrap();
    let options = captured().preopen(dir.path(), "/data", DirAccess::ReadOnly).timeout(Duration::from_secs(20));
    let quiet = guest.run(&options).unwrap();
    assert_eq!(quiet.outcome, Outcome::Exited(0), "{}", String::from_utf8_lossy(&quiet.stderr));
    assert!(String::from_utf8_lossy(&quiet.stdout).contains("line two"));

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut sent = 0u32;
            while !done.load(Ordering::Relaxed) {
                nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGURG).unwrap();
                sent += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
            sent
        })
    };
    let exec = executor(2);
    let reports = exec.block_on(async {
        let runs = (0..200).map(|_| {
            let (guest, options) = (guest.clone(), options.clone());
            tokio::spawn(async move { guest.run_async(&options).await.unwrap() })
        });
        let mut reports = Vec::new();
        for run in runs.collect::<Vec<_>>() {
            reports.push(run.await.unwrap());
        }
        reports
    });
    done.store(true, Ordering::Relaxed);
    let sent = sender.join().unwrap();
    assert!(sent > 10, "only {sent} signals were sent");
    for report in reports {
        assert_eq!(report.outcome, Outcome::Exited(0), "{}", String::from_utf8_lossy(&report.stderr));
        assert_eq!(report.stdout, quiet.stdout);
    }
}

/// An asynchronous run reads a directory of 2,000 files 4 KiB at a time as a synchronous one
/// does, and removes every file it lists while it reads on (`wasi::readdir` lists the directory
/// on wrt's blocking thread once a pass).
#[test]
fn async_runs_read_directories_a_buffer_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("many")).unwrap();
    for i in 0..2000 {
        std::fs::write(dir.path().join("many").join(format!("f{i}")), b"").unwrap();
    }
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(FS_READ_DIR_PASSES).unwrap();
    let options = |args: &[&str]| captured().preopen(dir.path(), "/d", DirAccess::ReadWrite).args(args.iter().copied());
    let listed = guest.run(&options(&["list", "many", "4096"])).unwrap();
    assert_eq!(listed.outcome, Outcome::Exited(0), "{}", String::from_utf8_lossy(&listed.stderr));
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 2002);
    let exec = executor(2);
    let async_listed = exec.block_on(guest.run_async(&options(&["list", "many", "4096"]))).unwrap();
    assert_eq!(async_listed.stdout, listed.stdout);
    let removed = exec.block_on(guest.run_async(&options(&["unlink", "many", "4096"]))).unwrap();
    assert_eq!(String::from_utf8_lossy(&removed.stdout), "removed 2000\n");
    assert_eq!(std::fs::read_dir(dir.path().join("many")).unwrap().count(), 0);
}

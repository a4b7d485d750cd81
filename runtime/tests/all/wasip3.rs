//! Commands of WASI 0.3 (`wasi:cli/run@0.3.0`, an async function) through the library: run
//! synchronously (the calling thread waits for the async `run`), instantiated then run,
//! asynchronously side by side on one executor thread, and cancelled while they wait. Their
//! options under `wrt run` are the CLI's tests (`tests/all/wasip3.rs`).

use std::time::{Duration, Instant};

use wrt_runtime::{CancelToken, GuestOutput, GuestStdin, Outcome, RunOptions, Runtime};
use wrt_test_guests::P3_COMMAND;

#[test]
fn the_library_runs_it_synchronously_asynchronously_and_cancels_it() {
    let guest = Runtime::new().unwrap().load_file(P3_COMMAND).unwrap();
    let options = RunOptions::new().args(["hello"]).stdout(GuestOutput::Capture { limit: 1 << 10 });
    // Synchronously: the calling thread waits for the async `run`.
    let report = guest.run(&options).unwrap();
    assert_eq!((report.outcome, report.stdout.as_slice()), (Outcome::Exited(0), &b"hello from WASI 0.3\n"[..]));
    let mut instance = guest.instantiate(&options).unwrap();
    assert_eq!(instance.run_start().unwrap(), Outcome::Exited(0));
    // Asynchronously, several at once on one thread, with stdin.
    let executor = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let cat = RunOptions::new()
        .args(["cat"])
        .stdin(GuestStdin::Bytes(b"in and out".to_vec()))
        .stdout(GuestOutput::Capture { limit: 1 << 10 });
    let reports = executor.block_on(async {
        let runs = [0, 1].map(|_| {
            let (guest, cat) = (guest.clone(), cat.clone());
            tokio::spawn(async move { guest.run_async(&cat).await.unwrap() })
        });
        let mut reports = Vec::new();
        for run in runs {
            reports.push(run.await.unwrap());
        }
        reports
    });
    for report in reports {
        assert_eq!((report.outcome, report.stdout.as_slice()), (Outcome::Exited(0), &b"in and out"[..]));
    }
    // A cancel token ends a run that waits.
    let token = CancelToken::new();
    let sleeper = RunOptions::new().args(["sleep", "60000"]).cancel_token(token.clone());
    let started = Instant::now();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        token.cancel();
    });
    let report = guest.run(&sleeper).unwrap();
    canceller.join().unwrap();
    assert_eq!(report.outcome, Outcome::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(30));
}

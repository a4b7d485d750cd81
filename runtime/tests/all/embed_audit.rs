//! One audit sink shared by concurrent runs (`RunOptions::audit_sink`), each record whole and
//! naming its guest and its request (`RunOptions::request_id`).

use std::collections::BTreeMap;

use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
use wrt_test_guests::BENCH_SPAWN_LOOP;

use crate::util::Collected;

/// Eight runs on four threads, each spawning `/bin/true` three times and asking once for a
/// program the policy denies, into one sink: per request, three allowed decisions, three exits
/// and one denial, every line a whole JSON record naming the guest and the request.
#[test]
fn concurrent_runs_share_one_audit_sink_with_their_request_ids() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(BENCH_SPAWN_LOOP).unwrap();
    let collected = Collected::default();
    let sink = AuditSink::new(collected.clone());
    let base = RunOptions::new()
        .spawn_policy(&Policy::deny_all().allow_program("/bin/true"))
        .unwrap()
        .stderr(GuestOutput::Capture { limit: 4096 })
        .audit_sink(sink);
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (guest, base) = (guest.clone(), base.clone());
            scope.spawn(move || {
                for run in 0..2 {
                    let id = format!("req-{thread}-{run}");
                    let report = guest.run(&base.clone().request_id(&id).args(["3"])).unwrap();
                    assert_eq!(report.outcome, Outcome::Exited(0), "{}", String::from_utf8_lossy(&report.stderr));
                    let denied = guest.run(&base.clone().request_id(&id).args(["1", "/bin/false"])).unwrap();
                    assert_eq!(denied.outcome, Outcome::Exited(1));
                }
            });
        }
    });
    let text = collected.text();
    let mut per_request: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(record["guest"].as_str().unwrap().ends_with("bench_spawn_loop.wasm"), "{line}");
        let request = record["request"].as_str().unwrap_or_else(|| panic!("no request: {line}")).to_owned();
        let kind = format!("{} {}", record["event"].as_str().unwrap(), record["decision"].as_str().unwrap_or(""));
        per_request.entry(request).or_default().push(kind.trim().to_owned());
    }
    assert_eq!(per_request.len(), 8, "{per_request:?}");
    for (request, kinds) in per_request {
        let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
        assert_eq!((count("decision allow"), count("exit"), count("decision deny")), (3, 3, 1), "{request}: {kinds:?}");
    }
}

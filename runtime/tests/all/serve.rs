//! `wasi:http` services through the library: `ServicePool` (and `Instance::serve_async` under
//! it) answers requests in instances that answered cleanly before, up to its `reuse` count, and
//! in fresh ones after anything else; `serve_p3`'s `/count` says how many requests the instance
//! that answered has answered. The CLI's tests (`tests/all/serve_reuse.rs`) drive the same
//! through `wrt serve --reuse`.

use std::num::NonZeroU32;
use std::time::Duration;

use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{Answered, InstantiateError, Outcome, RunOptions, Runtime, ServicePool};
use wrt_test_guests::{P3_HELLO, SERVE_P3};

use crate::util::Collected;

/// `GET path`, answered by `pool`: how the request ended and the response's status and body.
fn get(executor: &tokio::runtime::Runtime, pool: &ServicePool, path: &str) -> (Outcome, Option<(u16, String)>) {
    let request = http::Request::get(format!("http://localhost{path}")).body(String::new()).unwrap();
    let Answered { outcome, response, .. } = executor.block_on(pool.serve_async(request, Some("7"))).unwrap();
    let response = response.ok().map(|r| (r.status().as_u16(), String::from_utf8_lossy(r.body()).into_owned()));
    (outcome, response)
}

#[test]
fn a_pool_reuses_an_instance_only_after_a_clean_request_and_up_to_its_count() {
    let executor = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let guest = Runtime::new().unwrap().load_service_file(SERVE_P3).unwrap();
    let pool = ServicePool::new(guest, RunOptions::new(), NonZeroU32::new(3).unwrap()).unwrap();
    let count = |pool: &ServicePool| match get(&executor, pool, "/count") {
        (Outcome::Exited(0), Some((200, body))) => body.trim().parse::<u32>().unwrap(),
        other => panic!("{other:?}"),
    };
    let counts: Vec<u32> = (0..4).map(|_| count(&pool)).collect();
    assert_eq!(counts, [1, 2, 3, 1]);
    assert_eq!(pool.idle(), 1);
    // A trap ends the instance that answered: it is not kept.
    let (outcome, response) = get(&executor, &pool, "/trap");
    assert!(matches!(outcome, Outcome::Trapped(_)), "{outcome:?}");
    assert_eq!(response, None);
    assert_eq!(pool.idle(), 0);
    assert_eq!(count(&pool), 1);
    // An error code is a clean end of the call, but no answer: the instance is not kept either.
    let (outcome, response) = get(&executor, &pool, "/error");
    assert_eq!((outcome, response), (Outcome::Exited(0), None));
    assert_eq!(count(&pool), 1);
    // Idle instances past the idle timeout end.
    let pool = pool.idle_timeout(Duration::ZERO);
    assert_eq!(pool.retire_idle(), 1);
    assert_eq!(pool.idle(), 0);
}

#[test]
fn a_pool_of_reuse_one_answers_each_request_in_a_fresh_instance() {
    let executor = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let guest = Runtime::new().unwrap().load_service_file(SERVE_P3).unwrap();
    let pool = ServicePool::new(guest, RunOptions::new(), NonZeroU32::MIN).unwrap();
    for _ in 0..3 {
        assert_eq!(get(&executor, &pool, "/count"), (Outcome::Exited(0), Some((200, "1\n".to_owned()))));
    }
    assert_eq!(pool.idle(), 0);
}

#[test]
fn a_pool_answers_on_a_current_thread_runtime_where_done_instances_wait_for_its_next_turn() {
    // A done instance is dropped in a task of the runtime that awaits the request: on a
    // current-thread runtime that task runs only at its next `block_on`, or at its shutdown.
    let executor = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let guest = Runtime::new().unwrap().load_service_file(SERVE_P3).unwrap();
    for reuse in [1, 2] {
        let pool = ServicePool::new(guest.clone(), RunOptions::new(), NonZeroU32::new(reuse).unwrap()).unwrap();
        let counts: Vec<String> = (0..4)
            .map(|_| match get(&executor, &pool, "/count") {
                (Outcome::Exited(0), Some((200, body))) => body.trim().to_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        let expected: Vec<&str> = if reuse == 1 { vec!["1"; 4] } else { vec!["1", "2", "1", "2"] };
        assert_eq!(counts, expected, "reuse {reuse}");
    }
    drop(executor);
}

#[test]
fn a_reused_instance_labels_each_requests_spawns_with_that_request_only() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let executor = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let guest = Runtime::new().unwrap().load_service_file(SERVE_P3).unwrap();
    let collected = Collected::default();
    let options = RunOptions::new()
        .spawn_policy(&Policy::deny_all().allow_program("sleep"))
        .unwrap()
        .audit_sink(AuditSink::new(collected.clone()));
    let labelled = |label: &str| options.clone().request_id(label);
    // Without an id, a request carries the options' label (here none, then "base"), never the
    // label of the request the instance answered before it.
    for (options, expected) in [(options.clone(), None), (labelled("base"), Some("base"))] {
        let pool = ServicePool::new(guest.clone(), options, NonZeroU32::new(3).unwrap()).unwrap();
        for id in [Some("first"), None, Some("third")] {
            let request = http::Request::get("http://localhost/spawn-linger").body(String::new()).unwrap();
            let answered = executor.block_on(pool.serve_async(request, id)).unwrap();
            assert_eq!(answered.outcome, Outcome::Exited(0), "{answered:?}");
            // Kept for the next request: the three are one instance's.
            assert_eq!(pool.idle(), usize::from(id != Some("third")), "{id:?}");
        }
        let requests: Vec<Option<String>> = std::mem::take(&mut *collected.0.lock().unwrap())
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice::<serde_json::Value>(line).unwrap())
            .filter(|record| record["event"] == "decision")
            .map(|record| record["request"].as_str().map(str::to_owned))
            .collect();
        let expected = [Some("first"), expected, Some("third")].map(|label| label.map(str::to_owned));
        assert_eq!(requests, expected);
    }
}

#[test]
fn an_ended_instance_answers_with_the_outcome_that_ended_it() {
    let executor = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let guest = Runtime::new().unwrap().load_service_file(SERVE_P3).unwrap();
    executor.block_on(async {
        let mut instance = guest.instantiate_async(&RunOptions::new()).await.unwrap();
        let request = |path: &str| http::Request::get(format!("http://localhost{path}")).body(String::new()).unwrap();
        let answered = instance.serve_async(request("/trap")).await.unwrap();
        assert!(matches!(answered.outcome, Outcome::Trapped(_)), "{answered:?}");
        assert!(instance.ended().is_some());
        // Nothing runs: the counter would say 2.
        let answered = instance.serve_async(request("/count")).await.unwrap();
        assert!(matches!(answered.outcome, Outcome::Trapped(_)), "{answered:?}");
        assert!(answered.response.is_err());
    });
}

#[test]
fn a_pool_refuses_a_guest_that_is_no_service() {
    let runtime = Runtime::new().unwrap();
    let command = runtime.load_file(P3_HELLO).unwrap();
    let err = ServicePool::new(command, RunOptions::new(), NonZeroU32::MIN).unwrap_err();
    assert!(matches!(err.downcast_ref::<InstantiateError>(), Some(InstantiateError::NotAService { .. })), "{err:#}");
}

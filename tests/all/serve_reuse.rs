//! `wrt serve --reuse N`: one instance answers up to N requests, one after another, each under
//! its own timeout and fuel, its children ending with it, and its audit records naming it; any
//! request that fails (a trap, the timeout, no fuel, a bad answer, a task left running) ends its
//! instance, as does an idle second. `serve_p3`'s `/count` says how many requests its instance
//! has answered, so every test reads which instance answered.

use std::time::Duration;

use nix::sys::signal::Signal;
use wrt_test_guests::*;

use crate::serve::Server;

/// The counter `/count` answers with.
fn count(server: &Server) -> u32 {
    let (status, body) = server.get("/count");
    assert_eq!(status, 200, "{body}");
    body.trim().parse().unwrap()
}

#[test]
fn an_instance_answers_up_to_n_requests_then_a_fresh_one_takes_over() {
    let server = Server::start(&["--reuse", "3"], SERVE_P3);
    let counts: Vec<u32> = (0..7).map(|_| count(&server)).collect();
    assert_eq!(counts, [1, 2, 3, 1, 2, 3, 1]);
    // A body written after `handle` returned is read whole, and the instance goes on.
    let expected: String = (0..10).map(|line| format!("line {line}\n")).collect();
    assert_eq!(server.get("/stream").1, expected);
    assert_eq!(count(&server), 3);
    assert_eq!(server.logged(), Vec::<String>::new());
    assert_eq!(server.stop(Signal::SIGTERM).code(), Some(0));
}

#[test]
fn a_request_that_fails_ends_its_instance() {
    let server = Server::start(&["--reuse", "100", "--timeout", "1s"], SERVE_P3);
    for (path, status) in [("/trap", 500), ("/error", 500), ("/sleep", 504), ("/spin", 504), ("/missing", 404)] {
        assert_eq!(count(&server), 1, "before {path}");
        assert_eq!(count(&server), 2, "before {path}");
        assert_eq!(server.get(path).0, status, "{path}");
    }
    // A 404 is an answer like any other: its instance goes on.
    assert_eq!(count(&server), 4);
    let logged = server.logged();
    assert_eq!(logged.len(), 4, "one line a failed request: {logged:?}");

    let server = Server::start(&["--reuse", "100", "--fuel", "1000000"], SERVE_P3);
    assert_eq!(count(&server), 1);
    assert_eq!(server.get("/spin").0, 500);
    assert!(server.logged().iter().any(|line| line.contains("ran out of fuel")));
    assert_eq!(count(&server), 1, "the instance that ran out of fuel answered again");
}

/// `--max-memory` holds for a reused instance, not for each request: memory one request keeps
/// counts against the next, so requests that each keep 1 MiB more fail once the instance holds
/// 16 MiB; the instance that failed ends, and the next request's fresh one starts from nothing.
#[test]
fn the_memory_limit_holds_for_a_reused_instance_across_its_requests() {
    let server = Server::start(&["--reuse", "100", "--max-memory", "16M"], SERVE_P3);
    let mut kept = 0;
    let failed_at = loop {
        let (status, body) = server.get("/grow");
        if status != 200 {
            assert_eq!(status, 500, "{body}");
            break kept + 1;
        }
        // One instance answers every request until one fails: each keeps 1 MiB more.
        assert_eq!(body.trim().parse::<u32>().unwrap(), kept + 1, "another instance answered");
        kept += 1;
        assert!(kept < 16, "an instance kept {kept} MiB under a limit of 16");
    };
    assert!(failed_at > 4, "the limit held for each request, not the instance: failed at {failed_at}");
    // wrt's one line for the request, beside what the guest wrote to its stderr as it failed.
    let logged = server.logged();
    let wrt: Vec<&String> = logged.iter().filter(|line| line.starts_with("wrt: ")).collect();
    assert_eq!(wrt.len(), 1, "{logged:?}");
    assert!(wrt[0].contains(&format!("request {failed_at}: trapped")), "{logged:?}");
    assert_eq!(server.get("/grow"), (200, "1\n".to_owned()), "a fresh instance after the one that failed");
    assert_eq!(count(&server), 2);
}

/// A reused instance's requests each get the whole timeout: four requests that wait 400 ms
/// each are answered by one instance under a timeout of 1 s.
#[test]
fn each_request_of_a_reused_instance_has_its_own_timeout() {
    let server = Server::start(&["--reuse", "100", "--timeout", "1s"], SERVE_P3);
    for _ in 0..4 {
        assert_eq!(server.get("/nap"), (200, "napped\n".to_owned()));
    }
    assert_eq!(count(&server), 5, "the naps were answered by more than one instance");
    assert_eq!(server.logged(), Vec::<String>::new());
}

/// A guest whose task outlives its request must not run on into the next one: its instance
/// ends, and the next request gets a fresh one (the task would add 1,000 to the counter).
#[test]
fn a_task_left_running_ends_its_instance() {
    let server = Server::start(&["--reuse", "100"], SERVE_P3);
    assert_eq!(count(&server), 1);
    assert_eq!(server.get("/linger"), (200, "lingering\n".to_owned()));
    assert_eq!(count(&server), 1);
    assert_eq!(count(&server), 2);
    assert_eq!(server.logged(), Vec::<String>::new());
}

#[test]
fn concurrent_requests_never_share_an_instance() {
    let server = Server::start(&["--reuse", "100"], SERVE_P3);
    let addr = server.addr();
    let clients: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || (0..5).map(|_| crate::serve::get(addr, "/inflight")).collect::<Vec<_>>()))
        .collect();
    for client in clients {
        for answer in client.join().unwrap() {
            assert_eq!(answer, (200, "1\n".to_owned()), "two requests in one instance at once");
        }
    }
}

#[test]
fn an_idle_instance_ends() {
    let server = Server::start(&["--reuse", "100"], SERVE_P3);
    assert_eq!(count(&server), 1);
    assert_eq!(count(&server), 2);
    std::thread::sleep(wrt_runtime::DEFAULT_IDLE_TIMEOUT + Duration::from_millis(600));
    assert_eq!(count(&server), 1, "an instance idle past the timeout answered");
}

/// Under reuse, the children a request started end with it (its `sleep 30` is killed when its
/// response is ready, not when the instance ends), and the audit records of each request's
/// spawns name that request, not the one the instance was made for.
#[test]
fn children_end_with_their_request_and_audit_records_name_it() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let log_arg = log.display().to_string();
    let flags = ["--reuse", "5", "--allow-run", "echo", "--allow-run", "sleep", "--audit-log", &log_arg];
    let server = Server::start(&flags, SERVE_P3);
    assert_eq!(server.get("/spawn"), (200, "from a child\n".to_owned()));
    assert_eq!(server.get("/spawn"), (200, "from a child\n".to_owned()));
    assert_eq!(server.get("/spawn-linger"), (200, "started\n".to_owned()));
    let records = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    // Read before the server stops: the child ended with its request.
    let sleep_exit = records()
        .into_iter()
        .find(|r| r["event"] == "exit" && r["path"].as_str().is_some_and(|p| p.ends_with("/sleep")))
        .unwrap_or_else(|| panic!("no exit record of `sleep` once its request was answered: {:?}", records()));
    assert_eq!(sleep_exit["request"], "3", "{sleep_exit}");
    assert_eq!(sleep_exit["signal"], 9, "{sleep_exit}");
    assert_eq!(count(&server), 4, "the requests were answered by more than one instance");
    assert!(server.stop(Signal::SIGTERM).success());
    let records = records();
    let requests: Vec<&str> =
        records.iter().filter(|r| r["event"] == "decision").map(|r| r["request"].as_str().unwrap_or("none")).collect();
    assert_eq!(requests, ["1", "2", "3"], "{records:?}");
}

#[test]
fn a_wasi_0_2_service_can_be_reused() {
    let server = Server::start(&["--reuse", "3"], SERVE_P2);
    for _ in 0..4 {
        assert_eq!(server.get("/"), (200, "hello from a WASI 0.2 proxy\n".to_owned()));
    }
    assert_eq!(server.get("/trap").0, 500);
    assert_eq!(server.get("/").0, 200);
    assert_eq!(server.logged().len(), 1);
}

#[test]
fn reuse_of_zero_is_refused() {
    let out = crate::util::run(["serve", "--addr", "127.0.0.1:0", "--reuse", "0", SERVE_P3]);
    crate::util::assert_code(&out, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--reuse"), "{stderr}");
}

//! The example server end to end over loopback, with a plain HTTP/1.1 client on a socket: a
//! guest's output as the answer, 100 requests at once each getting its own arguments back, a
//! client that hangs up mid-run (its run cancelled, its child gone), a timeout (the child gone
//! too), a profile that allows a program and the default that denies it, and bad requests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use wrt_example_server::{Config, Profile, Service};
use wrt_runtime::wrt_host_spawn::Policy;
use wrt_test_guests::{CLI_ECHO, CLI_HELLO, SPAWN_HANG};
use wrt_test_support::processes::live_with_arg as processes_with;
use wrt_test_support::token;

/// A server of `config` on a loopback port, on an executor of two threads kept for the
/// process.
fn start(config: Config) -> (SocketAddr, Arc<Service>) {
    let service = Arc::new(Service::new(&config).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let served = Arc::clone(&service);
    std::thread::spawn(move || {
        let executor = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        executor.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            wrt_example_server::serve(listener, served).await.unwrap();
        });
    });
    (rx.recv().unwrap(), service)
}

/// An answer: status, headers (lower-case names), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The request line and headers of a request to `path` with `body`.
fn request_text(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut text = format!("{method} {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    text
}

fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(request_text(method, path, headers, body).as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(": "))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

/// Waits up to 20 s for `done`.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "never: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_request_gets_the_guests_output() {
    let (addr, service) = start(Config::new(CLI_HELLO));
    let answer = request(addr, "POST", "/run", &[], "");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("x-wrt-outcome"), Some("exited 0"));
    assert_eq!(answer.header("x-wrt-exit-code"), Some("0"));
    assert!(answer.body.contains("hello"), "{answer:?}");
    assert_eq!(service.counters().exited.load(Ordering::SeqCst), 1);
}

#[test]
fn a_hundred_requests_at_once_each_get_their_own_answer() {
    let (addr, service) = start(Config::new(CLI_ECHO));
    let answers: Vec<(usize, Answer)> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..100)
            .map(|i| scope.spawn(move || (i, request(addr, "POST", &format!("/run?request-{i}&x+y"), &[], ""))))
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for (i, answer) in answers {
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(answer.body.contains(&format!("arg: request-{i}\narg: x y\n")), "request {i}: {answer:?}");
        // No other request's argument.
        assert_eq!(answer.body.matches("arg: request-").count(), 1, "request {i}: {answer:?}");
    }
    assert_eq!(service.counters().exited.load(Ordering::SeqCst), 100);
}

/// A client that hangs up while its guest waits for a child: the run is cancelled at once and
/// the child is gone.
#[test]
fn a_client_that_hangs_up_cancels_its_run_and_its_child() {
    let config = Config::new(SPAWN_HANG).profile(Profile::new("sleep", Policy::deny_all().allow_program("sleep")));
    let (addr, service) = start(config);
    let mark = token();
    let mut stream = TcpStream::connect(addr).unwrap();
    let text = request_text("POST", &format!("/run?{mark}"), &[("x-wrt-profile", "sleep")], "");
    stream.write_all(text.as_bytes()).unwrap();
    let needle = format!("1000.{mark}");
    eventually("the guest's child started", || !processes_with(&needle).is_empty());
    drop(stream);
    eventually("the run was cancelled", || service.counters().cancelled.load(Ordering::SeqCst) == 1);
    eventually("the child is gone", || processes_with(&needle).is_empty());
    assert_eq!(service.counters().timed_out.load(Ordering::SeqCst), 0);
}

/// A request's timeout ends its run (504) and the run's child; the default profile denies the
/// program the guest asks for.
#[test]
fn timeouts_and_profiles_hold_per_request() {
    let config = Config::new(SPAWN_HANG).profile(Profile::new("sleep", Policy::deny_all().allow_program("sleep")));
    let (addr, service) = start(config);
    let mark = token();
    let answer =
        request(addr, "POST", &format!("/run?{mark}"), &[("x-wrt-profile", "sleep"), ("x-wrt-timeout-ms", "300")], "");
    assert_eq!(answer.status, 504, "{answer:?}");
    assert_eq!(answer.header("x-wrt-outcome"), Some("timed out"));
    assert!(answer.body.starts_with("waiting for child"), "{answer:?}");
    assert!(processes_with(&format!("1000.{mark}")).is_empty(), "the child outlived its timed-out run");
    // Under the default profile the spawn is denied, and the guest (which expects it) fails.
    let answer = request(addr, "POST", &format!("/run?{}", token()), &[("x-wrt-timeout-ms", "5000")], "");
    assert_eq!(answer.status, 500, "{answer:?}");
    assert_eq!(answer.header("x-wrt-outcome"), Some("trapped"));
    assert_eq!(service.counters().timed_out.load(Ordering::SeqCst), 1);
}

#[test]
fn bad_requests_get_clear_statuses() {
    let mut config = Config::new(CLI_HELLO);
    config.max_body = 16;
    let (addr, service) = start(config);
    assert_eq!(request(addr, "POST", "/elsewhere", &[], "").status, 404);
    assert_eq!(request(addr, "GET", "/run", &[], "").status, 405);
    let unknown = request(addr, "POST", "/run", &[("x-wrt-profile", "root")], "");
    assert_eq!((unknown.status, unknown.body.as_str()), (400, "no such profile\n"));
    for bad in ["0", "-5", "soon"] {
        assert_eq!(request(addr, "POST", "/run", &[("x-wrt-timeout-ms", bad)], "").status, 400, "{bad}");
    }
    assert_eq!(request(addr, "POST", "/run", &[], "a body over sixteen bytes").status, 413);
    // None of them ran the guest.
    assert_eq!(service.counters().runs.load(Ordering::SeqCst), 0);
}

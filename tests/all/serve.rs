//! `wrt serve`: `wasi:http` services (the WASI 0.3 `serve_p3` and the WASI 0.2 `serve_p2`)
//! answer requests over loopback, each in a fresh instance (`serve_reuse` tests `--reuse`); failures
//! of the guest are answered with 5xx and logged while the server goes on; hostile requests
//! get an HTTP error, not a crash; `SIGINT` and `SIGTERM` shut it down gracefully with status 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use wrt_test_guests::*;

use crate::util::wrt;

foreach_serve!(assert_test_exists);
use crate::assert_test_exists;

/// A `wrt serve` started on port 0 of loopback, killed when dropped.
pub(crate) struct Server {
    child: Child,
    addr: SocketAddr,
    /// What the server wrote to stderr after its first line, read by a thread.
    log: std::sync::mpsc::Receiver<String>,
}

impl Server {
    /// `wrt serve --addr 127.0.0.1:0 FLAGS GUEST`, once it listens: the first line of its
    /// stderr names the URL.
    pub(crate) fn start(flags: &[&str], guest: &str) -> Self {
        let mut child = wrt()
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(flags)
            .arg(guest)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let url = first.strip_prefix("Serving HTTP on http://").unwrap_or_else(|| panic!("first line: {first:?}"));
        let addr = url.trim_end().trim_end_matches('/').parse().unwrap();
        let (tx, log) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self { child, addr, log }
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// [`send`] to this server.
    fn send(&self, raw: &[u8]) -> (u16, String) {
        send(self.addr, raw)
    }

    /// `GET path`: its status and body.
    pub(crate) fn get(&self, path: &str) -> (u16, String) {
        get(self.addr, path)
    }

    /// The lines the server logged until now.
    pub(crate) fn logged(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(100));
        self.log.try_iter().collect()
    }

    /// Sends `signal` and waits (at most 20 s) for the server to exit: its status.
    pub(crate) fn stop(self, signal: Signal) -> std::process::ExitStatus {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
        self.wait()
    }

    /// Waits (at most 20 s) for the server to exit: its status.
    fn wait(mut self) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `raw` (a whole HTTP/1.1 request) to `addr` on a new connection and returns the status
/// and body of the response (the server closes the connection after it: `Connection: close`),
/// the body unchunked.
fn send(addr: SocketAddr, raw: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(raw).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    match head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        true => (status, unchunked(body)),
        false => (status, body.to_owned()),
    }
}

/// `GET path` of the server at `addr`: its status and body.
pub(crate) fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    send(addr, format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes())
}

/// A thread that sends `GET /sleep` (which waits 60 s) on a new connection to `addr` and
/// returns what the server answered; `must_read` fails it if the read itself fails.
fn sleep_in_flight(addr: SocketAddr, must_read: bool) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /sleep HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        let read = stream.read_to_string(&mut response);
        assert!(!must_read || read.is_ok(), "{read:?}");
        response
    })
}

/// The body of a chunked response, unchunked.
fn unchunked(body: &str) -> String {
    let mut rest = body;
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    out
}

#[test]
fn serve_p3() {
    let server = Server::start(&[], SERVE_P3);
    let (status, body) = server.get("/");
    assert_eq!((status, body.as_str()), (200, "hello from a WASI 0.3 service\n"));
    let (status, body) = server
        .send(b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9\r\nConnection: close\r\n\r\nbody data");
    assert_eq!((status, body.as_str()), (200, "Method::Post\nbody data"));
    // A fresh instance per request: the guest's counter starts again each time.
    for _ in 0..3 {
        assert_eq!(server.get("/count").1, "1\n");
    }
    // A body the guest writes after `handle` returned.
    let expected: String = (0..10).map(|line| format!("line {line}\n")).collect();
    assert_eq!(server.get("/stream").1, expected);
    assert_eq!(server.get("/missing").0, 404);
    assert_eq!(server.logged(), Vec::<String>::new());
    assert_eq!(server.stop(Signal::SIGTERM).code(), Some(0));
}

#[test]
fn serve_p2() {
    let server = Server::start(&[], SERVE_P2);
    let (status, body) = server.get("/");
    assert_eq!((status, body.as_str()), (200, "hello from a WASI 0.2 proxy\n"));
    assert_eq!(server.get("/trap").0, 500);
    assert_eq!(server.get("/error").0, 500);
    assert_eq!(server.get("/elsewhere").0, 404);
    let logged = server.logged();
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(logged[0].contains("trapped: wasm trap"), "{logged:?}");
    assert!(logged[1].starts_with("wrt: request 3: the guest answered with error code"), "{logged:?}");
    assert_eq!(server.stop(Signal::SIGINT).code(), Some(0));
}

#[test]
fn guest_failures_are_answered_with_5xx_and_logged_and_the_server_goes_on() {
    let server = Server::start(&["--timeout", "1s"], SERVE_P3);
    assert_eq!(server.get("/error").0, 500);
    assert_eq!(server.get("/trap").0, 500);
    let started = Instant::now();
    assert_eq!(server.get("/spin").0, 504, "a guest that computes past the timeout");
    assert_eq!(server.get("/sleep").0, 504, "a guest that waits past the timeout");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(server.get("/").0, 200, "the server still answers");
    let logged = server.logged();
    assert_eq!(logged.len(), 4, "one line a failed request: {logged:?}");
    assert!(logged[0].starts_with("wrt: request 1: the guest answered with error code"), "{logged:?}");
    assert!(logged[1].starts_with("wrt: request 2: trapped: wasm trap"), "{logged:?}");
    assert_eq!(logged[2], "wrt: request 3: timed out after 1s");
    assert_eq!(logged[3], "wrt: request 4: timed out after 1s");

    // A message of the guest's own is shown escaped and capped, on its one line.
    assert_eq!(server.get("/error-hostile").0, 500);
    let logged = server.logged();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].starts_with("wrt: request 6: the guest answered with error code"), "{logged:?}");
    assert!(!logged[0].contains('\x1b') && logged[0].len() < 1024, "{logged:?}");

    let server = Server::start(&["--fuel", "1000000"], SERVE_P3);
    assert_eq!(server.get("/spin").0, 500);
    assert!(server.logged().iter().any(|line| line.contains("ran out of fuel")));
    assert_eq!(server.get("/").0, 200, "each request has fuel of its own");
}

#[test]
fn hostile_requests_get_an_http_error_not_a_crash() {
    let server = Server::start(&[], SERVE_P3);
    // Not HTTP at all; a request line too long; a header without a colon; a body shorter than
    // its length, cut off by the client.
    for raw in [
        &b"\x00\x01\x02 not http\r\n\r\n"[..],
        format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(1 << 20)).as_bytes(),
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
    ] {
        let (status, _) = server.send(raw);
        assert!(status == 0 || (400..500).contains(&status), "{status}");
    }
    {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nshort").unwrap();
    }
    assert_eq!(server.get("/").0, 200, "the server still answers");
    assert_eq!(server.stop(Signal::SIGTERM).code(), Some(0));
}

#[test]
fn wrt_process_in_a_service_follows_the_spawn_policy() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let server = Server::start(&["--allow-run", "echo", "--env", "GREETING=hi"], SERVE_P3);
    assert_eq!(server.get("/spawn").1, "from a child\n");
    assert_eq!(server.get("/env").1, "hi\n");
    drop(server);
    // Deny by default.
    let server = Server::start(&[], SERVE_P3);
    let (status, body) = server.get("/spawn");
    assert_eq!(status, 200);
    assert!(body.starts_with("spawn failed: "), "{body}");
    assert!(server.logged().iter().any(|line| line.contains("`--allow-run echo`")));
}

/// What `serve_p3`'s `/fetch` answers when wrt refuses its request: the request's transmission
/// future fails too, since it was never sent.
const REFUSED_UNSENT: &str = "refused: ErrorCode::HttpRequestDenied; transmitted: Err(ErrorCode::HttpRequestDenied)\n";

#[test]
fn a_services_outgoing_requests_are_refused_before_any_connection() {
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    target.set_nonblocking(true).unwrap();
    let env = format!("TARGET={}", target.local_addr().unwrap());
    let server = Server::start(&["--env", &env], SERVE_P3);
    let (status, body) = server.get("/fetch");
    assert_eq!((status, body.as_str()), (200, REFUSED_UNSENT));
    // The same request with its transmission future dropped by the guest before the send:
    // refused the same way, and the server goes on.
    assert_eq!(server.get("/fetch-dropped"), (200, "refused: ErrorCode::HttpRequestDenied\n".to_owned()));
    assert_eq!(server.get("/").0, 200);
    assert_eq!(server.logged(), Vec::<String>::new());
    let accepted = target.accept();
    assert!(
        matches!(&accepted, Err(err) if err.kind() == std::io::ErrorKind::WouldBlock),
        "the guest reached the target: {accepted:?}"
    );
}

/// An outgoing request to a server that `--allow-http` names goes out over plain HTTP/1.1, its
/// request line naming the path alone, and the answer (status and body) comes back to the
/// guest, also when the guest dropped the request's transmission future before sending it and
/// the body comes well after the head; a request to another port of the same host is still
/// refused before any connection.
#[test]
fn outgoing_requests_reach_the_servers_allow_http_names_only() {
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = target.local_addr().unwrap();
    // Answers two requests, one connection each: the heads it read.
    let answered = std::thread::spawn(move || {
        let mut heads = Vec::new();
        for _ in 0..2 {
            let (stream, _) = target.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            while !head.ends_with("\r\n\r\n") {
                assert!(reader.read_line(&mut head).unwrap() > 0, "the request ended early: {head:?}");
            }
            // The head first, the body later: the guest holds the response before its body
            // has come, so the connection must outlive the request's transmission future.
            let body = "from the target";
            write!(reader.get_mut(), "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).unwrap();
            reader.get_mut().flush().unwrap();
            std::thread::sleep(Duration::from_millis(200));
            reader.get_mut().write_all(body.as_bytes()).unwrap();
            heads.push(head);
        }
        heads
    });
    let (allow, env) = (addr.to_string(), format!("TARGET={addr}"));
    let server = Server::start(&["--allow-http", &allow, "--env", &env], SERVE_P3);
    assert_eq!(server.get("/fetch"), (200, "sent: 200 from the target; transmitted: Ok(())\n".to_owned()));
    assert_eq!(server.get("/fetch-dropped"), (200, "sent: 200 from the target\n".to_owned()));
    assert_eq!(server.logged(), Vec::<String>::new());
    let heads = answered.join().unwrap();
    let head = &heads[0];
    assert!(head.starts_with("GET / HTTP/1.1\r\n"), "{head}");
    assert!(head.to_ascii_lowercase().contains(&format!("host: {addr}\r\n")), "{head}");
    drop(server);
    // The same host on another port: refused, and nothing connects to it.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let env = format!("TARGET={}", other.local_addr().unwrap());
    let server = Server::start(&["--allow-http", &allow, "--env", &env], SERVE_P3);
    assert_eq!(server.get("/fetch"), (200, REFUSED_UNSENT.to_owned()));
    let accepted = other.accept();
    assert!(matches!(&accepted, Err(err) if err.kind() == std::io::ErrorKind::WouldBlock), "{accepted:?}");
}

/// A second `SIGTERM` while requests are draining ends the server at once, with 128 + 15,
/// without waiting for the request in flight.
#[test]
fn a_second_signal_during_the_drain_ends_the_server_at_once() {
    let server = Server::start(&["--timeout", "30s"], SERVE_P3);
    let addr = server.addr;
    let in_flight = sleep_in_flight(addr, false);
    std::thread::sleep(Duration::from_millis(500));
    let pid = Pid::from_raw(server.child.id() as i32);
    kill(pid, Signal::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    kill(pid, Signal::SIGTERM).unwrap();
    assert_eq!(server.wait().code(), Some(128 + 15));
    assert!(started.elapsed() < Duration::from_secs(10), "waited for the request: {:?}", started.elapsed());
    assert_eq!(in_flight.join().unwrap(), "", "the request in flight got an answer");
}

/// With `--audit-log`, the records of each request's spawns name the request, by the id that
/// the server's log lines use; requests are numbered from 1.
#[test]
fn audit_records_name_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let log_arg = log.display().to_string();
    let server = Server::start(&["--allow-run", "echo", "--audit-log", &log_arg], SERVE_P3);
    assert_eq!(server.get("/"), (200, "hello from a WASI 0.3 service\n".to_owned()));
    assert_eq!(server.get("/spawn"), (200, "from a child\n".to_owned()));
    assert!(server.stop(Signal::SIGTERM).success());
    let records: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!records.is_empty());
    for record in &records {
        assert_eq!(record["request"], "2", "{record}");
    }
    assert!(records.iter().any(|r| r["event"] == "decision" && r["decision"] == "allow"), "{records:?}");
}

/// At shutdown, a kept-alive connection takes no new request, even while another request is
/// still being answered: it is closed, and the request in flight finishes.
#[test]
fn shutdown_closes_kept_alive_connections() {
    let server = Server::start(&["--timeout", "4s"], SERVE_P3);
    let addr = server.addr;
    let in_flight = sleep_in_flight(addr, false);
    let mut kept = TcpStream::connect(server.addr).unwrap();
    kept.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = BufReader::new(kept.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    std::thread::sleep(Duration::from_millis(1000));
    kill(Pid::from_raw(server.child.id() as i32), Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The server is still answering `/sleep`; the kept-alive connection answers nothing new.
    let _ = kept.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    kept.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    assert_eq!(rest.matches("HTTP/1.1 200").count(), 0, "a request after the signal was answered: {rest}");
    let answered = in_flight.join().unwrap();
    assert!(answered.starts_with("HTTP/1.1 504"), "{answered:?}");
    assert_eq!(server.wait().code(), Some(0));
}

/// `--header-timeout`: a connection that sends nothing, or stays idle after its request, is
/// closed once the timeout has passed, and its slot serves the next connection.
#[test]
fn silent_connections_are_closed_at_the_header_timeout() {
    let server = Server::start(&["--max-connections", "1", "--header-timeout", "500ms"], SERVE_P3);
    let closed_within = |stream: &mut TcpStream| {
        let started = Instant::now();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        started.elapsed()
    };
    // Nothing sent at all.
    let mut silent = TcpStream::connect(server.addr).unwrap();
    assert!(closed_within(&mut silent) < Duration::from_secs(10));
    // Half a request head.
    let mut half = TcpStream::connect(server.addr).unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    assert!(closed_within(&mut half) < Duration::from_secs(10));
    // Idle after a request it kept alive.
    let mut idle = TcpStream::connect(server.addr).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut status = String::new();
    BufReader::new(idle.try_clone().unwrap()).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(closed_within(&mut idle) < Duration::from_secs(10));
    // The one slot is free again.
    assert_eq!(server.get("/"), (200, "hello from a WASI 0.3 service\n".to_owned()));
}

/// `--max-connections 1`: a second connection waits in the listen queue while the first is
/// open, and is served once it closes.
#[test]
fn connections_past_the_cap_wait_until_one_closes() {
    let server = Server::start(&["--max-connections", "1"], SERVE_P3);
    let mut first = TcpStream::connect(server.addr).unwrap();
    first.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut reader = BufReader::new(first.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // The first connection stays open (keep-alive): the second is not served.
    let mut second = TcpStream::connect(server.addr).unwrap();
    second.set_read_timeout(Some(Duration::from_millis(700))).unwrap();
    second.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut byte = [0u8; 1];
    let waited = second.read(&mut byte);
    assert!(matches!(&waited, Err(err) if err.kind() == std::io::ErrorKind::WouldBlock), "{waited:?}");
    drop((reader, first));
    second.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut response = String::new();
    second.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[test]
fn shutdown_lets_requests_in_flight_finish_and_refuses_new_ones() {
    // The request must be in flight when the signal comes: on a loaded machine the server may
    // take a while to accept it, so the signal comes 1.5 s after it, well before its timeout.
    let server = Server::start(&["--timeout", "5s"], SERVE_P3);
    let addr = server.addr;
    let in_flight = sleep_in_flight(addr, true);
    std::thread::sleep(Duration::from_millis(1500));
    kill(Pid::from_raw(server.child.id() as i32), Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(addr).is_err(), "a new connection after the signal");
    let response = in_flight.join().unwrap();
    assert!(response.starts_with("HTTP/1.1 504"), "{response}");
    assert_eq!(server.wait().code(), Some(0));
}

#[test]
fn a_guest_that_is_no_service_is_refused_by_name() {
    let out = crate::util::run(["serve", "--addr", "127.0.0.1:0", P3_HELLO]);
    crate::util::assert_code(&out, 2);
    let lines = crate::util::wrt_lines(&out);
    assert!(lines[0].starts_with("wrt: guest `p3_hello.wasm` is no HTTP service"), "{lines:?}");
    let out = crate::util::run(["serve", "--addr", "127.0.0.1:0", SERVE_P3, "an-argument"]);
    crate::util::assert_code(&out, 2);
    assert_eq!(crate::util::wrt_lines(&out), ["wrt: `wrt serve` takes one component and no arguments for it"]);
}

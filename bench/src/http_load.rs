//! HTTP/1.1 load for `wrt bench serve`: keep-alive clients that each send `GET /` one request
//! after another and time every request, and the native server that is the workload's floor.
//!
//! Both run on a current-thread tokio runtime, so that the load takes one core at most and the
//! server under test has the other (the machines are 2-core VMs); every server measured meets
//! the same client.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use crate::BenchError;

/// What the requests of one load took.
#[derive(Debug, Clone)]
pub struct Load {
    /// From the first request sent to the last response read.
    pub elapsed: Duration,
    /// Each request's time, from sending it to having read its whole response, sorted.
    pub latencies: Vec<Duration>,
}

impl Load {
    /// Requests per second, over all clients.
    pub fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    /// The `p`-th percentile latency (`p` in 0..=100), nearest rank.
    pub fn percentile(&self, p: f64) -> Duration {
        percentile(&self.latencies, p)
    }
}

/// The `p`-th percentile (nearest rank) of sorted `values`, or zero when there are none.
fn percentile(values: &[Duration], p: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p / 100.0 * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// A current-thread runtime with I/O and timers.
fn runtime() -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::Child(format!("cannot start the load's runtime: {e}")))
}

/// `clients` connections to `addr`, each sending `requests` `GET /` one after another on one
/// keep-alive connection and checking that every answer is 200 with the body `expect`.
///
/// # Errors
///
/// When a connection fails or an answer is not the one expected.
pub fn run(addr: SocketAddr, clients: u32, requests: u32, expect: &'static [u8]) -> Result<Load, BenchError> {
    runtime()?.block_on(async move {
        // Every connection is made before the clock starts.
        let mut senders = Vec::new();
        for _ in 0..clients {
            senders.push(connect(addr).await?);
        }
        let start = Instant::now();
        let tasks: Vec<_> = senders.into_iter().map(|sender| tokio::spawn(client(sender, requests, expect))).collect();
        let mut latencies = Vec::with_capacity(clients as usize * requests as usize);
        for task in tasks {
            latencies.extend(task.await.map_err(|e| BenchError::Child(format!("a load client failed: {e}")))??);
        }
        let elapsed = start.elapsed();
        latencies.sort_unstable();
        Ok(Load { elapsed, latencies })
    })
}

/// An HTTP/1.1 connection to `addr`, its connection task running.
async fn connect(addr: SocketAddr) -> Result<hyper::client::conn::http1::SendRequest<Empty<Bytes>>, BenchError> {
    let stream =
        TcpStream::connect(addr).await.map_err(|e| BenchError::Child(format!("cannot connect to {addr}: {e}")))?;
    stream.set_nodelay(true).map_err(|e| BenchError::Child(format!("cannot set TCP_NODELAY: {e}")))?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| BenchError::Child(format!("HTTP handshake with {addr} failed: {e}")))?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Sends `requests` requests on `sender`, one after another; returns each one's time.
async fn client(
    mut sender: hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    requests: u32,
    expect: &'static [u8],
) -> Result<Vec<Duration>, BenchError> {
    let failed = |what: String| BenchError::Child(format!("a request of the load failed: {what}"));
    let mut latencies = Vec::with_capacity(requests as usize);
    for _ in 0..requests {
        let request = http::Request::get("/")
            .header(http::header::HOST, "localhost")
            .body(Empty::<Bytes>::new())
            .map_err(|e| failed(e.to_string()))?;
        let start = Instant::now();
        sender.ready().await.map_err(|e| failed(e.to_string()))?;
        let response = sender.send_request(request).await.map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let body = response.into_body().collect().await.map_err(|e| failed(e.to_string()))?.to_bytes();
        latencies.push(start.elapsed());
        if status != http::StatusCode::OK || body != expect {
            return Err(failed(format!("answered {status} with `{}`", String::from_utf8_lossy(&body).trim())));
        }
    }
    Ok(latencies)
}

/// The floor: a native hyper HTTP/1.1 server answering every request 200 with `body`, on a
/// thread of its own, until dropped.
#[derive(Debug)]
pub struct NativeServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl NativeServer {
    /// Starts it on a port of 127.0.0.1 the system picks.
    ///
    /// # Errors
    ///
    /// When the runtime or the listener cannot be made.
    pub fn start(body: &'static [u8]) -> Result<Self, BenchError> {
        let failed = |e: std::io::Error| BenchError::Floor(format!("cannot start the native server: {e}"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let addr = listener.local_addr().map_err(failed)?;
        let runtime = runtime()?;
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else { return };
                tokio::select! {
                    () = accept(listener, body) => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(Self { addr, stop: Some(stop), thread: Some(thread) })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Serves every connection `listener` accepts, each on a task of its own.
async fn accept(listener: TcpListener, body: &'static [u8]) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        let service = hyper::service::service_fn(move |_request| async move {
            Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from_static(body))))
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

impl Drop for NativeServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let ms = |v: u64| Duration::from_millis(v);
        let values: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&values, 50.0), ms(50));
        assert_eq!(percentile(&values, 99.0), ms(99));
        assert_eq!(percentile(&values, 100.0), ms(100));
        assert_eq!(percentile(&values, 0.0), ms(1));
        assert_eq!(percentile(&[ms(7)], 99.0), ms(7));
        assert_eq!(percentile(&[], 99.0), Duration::ZERO);
    }

    #[test]
    fn the_load_times_every_request_and_checks_each_answer() {
        let server = NativeServer::start(b"hello\n").unwrap();
        let load = run(server.addr(), 3, 20, b"hello\n").unwrap();
        assert_eq!(load.latencies.len(), 60);
        assert!(load.per_second() > 0.0);
        assert!(load.percentile(50.0) <= load.percentile(99.0));
        // An answer that is not the one expected fails the load, naming what came back.
        let err = run(server.addr(), 1, 1, b"bye\n").unwrap_err().to_string();
        assert!(err.contains("answered 200 OK with `hello`"), "{err}");
    }
}

//! The client of a guest's outgoing `wasi:http` requests that its options allow
//! ([`RunOptions::allow_http`](crate::RunOptions::allow_http)): plain HTTP/1.1 over a new TCP
//! connection per request, with the request's connect and first-byte timeouts. Whether a
//! request is allowed is decided before (`guest_state/http.rs`); this only sends it.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::Either;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

/// How long connecting, or waiting for the response's head, may take when the guest sets no
/// timeout of its own. A run's `--timeout` bounds every wait as well.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The response, and the future that drives the rest of the connection (the response body)
/// and reports how it ended.
pub(crate) type Sent = (http::Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>);

/// Sends `request` to `host`:`port` (the host as the request names it; a name is resolved by
/// the host's resolver) and returns the response once its head has come.
///
/// # Errors
///
/// The `wasi:http` error of a connection that fails or times out, or of a response that
/// breaks HTTP.
pub(crate) async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    host: String,
    port: u16,
) -> Result<Sent, Error> {
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let first_byte_timeout = options.and_then(|o| o.first_byte_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let connected = tokio::time::timeout(connect_timeout, async {
        let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await.map_err(Error::Connect)?;
        let _ = stream.set_nodelay(true);
        hyper::client::conn::http1::handshake::<_, WasiBody>(TokioIo::new(stream)).await.map_err(Error::from)
    });
    let (mut sender, mut connection) = connected.await.map_err(|_| Error::ConnectionTimeout)??;
    // The request line names the path alone: the scheme and authority go to a proxy only.
    let path = match request.uri().path_and_query().map(|p| p.as_str()) {
        Some(path) if path.starts_with('/') => path.to_owned(),
        Some(query) => format!("/{query}"),
        None => "/".to_owned(),
    };
    *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;
    // The connection is driven while the response's head is awaited; if it ends first, the
    // response may still be there.
    let sending = pin!(tokio::time::timeout(first_byte_timeout, sender.send_request(request)));
    let (response, connection) = match futures::future::select(sending, &mut connection).await {
        Either::Left((response, _)) => (response, Some(connection)),
        Either::Right((ended, sending)) => {
            ended.map_err(Error::from)?;
            (sending.await, None)
        }
    };
    let response = response.map_err(|_| Error::ConnectionReadTimeout)?.map_err(Error::from)?;
    let Some(connection) = connection else {
        let rest: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(std::future::ready(Ok(())));
        return Ok((response.map(|body| body.map_err(Error::from).boxed_unsync()), rest));
    };
    // The rest of the connection is driven by a task the response's body owns, not by the
    // future returned: wasmtime-wasi-http drops that future with the request's transmission
    // future, which a guest may drop before it reads the body.
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel();
    let driver = ConnectionDriver(tokio::spawn(async move {
        let _ = ended_tx.send(connection.await.map_err(Error::from));
    }));
    let response = response.map(|body| BodyWithConnection { body, _driver: driver }.boxed_unsync());
    // A task ended by the body's drop leaves nothing the guest waits for to report.
    let rest: Box<dyn Future<Output = Result<(), Error>> + Send> =
        Box::new(async move { ended_rx.await.unwrap_or(Ok(())) });
    Ok((response, rest))
}

/// The task that drives a response's connection; dropping it ends the connection.
#[derive(Debug)]
struct ConnectionDriver(tokio::task::JoinHandle<()>);

impl Drop for ConnectionDriver {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A response's body, with the task that drives its connection: the connection lasts as long
/// as the body, whoever else holds or drops the request's futures.
struct BodyWithConnection {
    body: hyper::body::Incoming,
    _driver: ConnectionDriver,
}

impl http_body::Body for BodyWithConnection {
    type Data = bytes::Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx).map_err(Error::from)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
    use std::net::TcpListener;
    use std::thread::{self, JoinHandle};

    use super::*;

    const BODY: &str = "from the target";

    fn request() -> http::Request<WasiBody> {
        let body =
            http_body_util::Empty::<bytes::Bytes>::new().map_err(|never| -> Error { match never {} }).boxed_unsync();
        http::Request::get("http://127.0.0.1/").body(body).unwrap()
    }

    /// A server for one request: it sends the response's head at once and its body after
    /// `delay` (never, with `None`), then returns whether the client closed the connection
    /// within five seconds.
    fn serve_once(delay: Option<Duration>) -> (u16, JoinHandle<bool>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            while !head.ends_with("\r\n\r\n") {
                assert!(reader.read_line(&mut head).unwrap() > 0, "the request ended early: {head:?}");
            }
            let stream = reader.get_mut();
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", BODY.len()).unwrap();
            stream.flush().unwrap();
            if let Some(delay) = delay {
                thread::sleep(delay);
                stream.write_all(BODY.as_bytes()).unwrap();
            }
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            match stream.read(&mut [0; 16]) {
                Ok(0) => true,
                Err(err) => err.kind() == ErrorKind::ConnectionReset,
                Ok(_) => false,
            }
        });
        (port, server)
    }

    fn executor() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
    }

    /// wasmtime-wasi-http drops the future that drives the rest of the connection when the
    /// guest drops the request's transmission future: the body must come whole all the same.
    #[test]
    fn the_body_comes_whole_after_the_future_of_the_rest_is_dropped() {
        let (port, server) = serve_once(Some(Duration::from_millis(200)));
        executor().block_on(async {
            let (response, rest) = send(request(), None, "127.0.0.1".into(), port).await.unwrap();
            drop(rest);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body, BODY.as_bytes());
        });
        assert!(server.join().unwrap(), "the connection stayed open after the body was read");
    }

    /// A body dropped unread ends its connection: no task goes on driving it.
    #[test]
    fn a_body_dropped_unread_closes_its_connection() {
        let (port, server) = serve_once(None);
        let executor = executor();
        executor.block_on(async {
            let (response, rest) = send(request(), None, "127.0.0.1".into(), port).await.unwrap();
            drop(rest);
            drop(response);
        });
        assert!(server.join().unwrap(), "the connection stayed open after its body was dropped");
        drop(executor);
    }
}

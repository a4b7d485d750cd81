//! `wasi:http` for components: its context in the guest's store, and the hooks that decide
//! what a guest's outgoing requests may reach. A request goes out only to a server the run's
//! options name ([`RunOptions::allow_http`](crate::RunOptions::allow_http)), over plain HTTP;
//! every other one (no rule for its host and port, `https`, no authority) is refused with
//! `HTTP-request-denied` before anything is sent.

use std::sync::Arc;

use http::uri::Scheme;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks};

use crate::http_client::{self, Sent};
use crate::network::HttpRule;

/// The hooks of a guest's `wasi:http`: outgoing requests go to the allowed servers only.
#[derive(Debug, Default)]
pub(crate) struct Egress {
    servers: Arc<[HttpRule]>,
}

impl Egress {
    /// The host and port `request` goes to, if a rule allows it over plain HTTP. An authority
    /// with user information is refused: wasmtime-wasi-http writes the authority as the `Host`
    /// header, so `evil@allowed` would reach the allowed server naming another host.
    fn allowed(&self, request: &http::Request<WasiBody>) -> Option<(String, u16)> {
        let uri = request.uri();
        if uri.scheme() != Some(&Scheme::HTTP) {
            return None;
        }
        let authority = uri.authority().filter(|authority| !authority.as_str().contains('@'))?;
        let (host, port) = (authority.host(), authority.port_u16().unwrap_or(80));
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.servers.iter().any(|rule| rule.holds(host, port)).then(|| (host.to_owned(), port))
    }
}

impl WasiHttpHooks for Egress {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _io: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = wasmtime_wasi_http::Result<Sent>> + Send> {
        match self.allowed(&request) {
            Some((host, port)) => Box::new(http_client::send(request, options, host, port)),
            None => Box::new(std::future::ready(Err(Error::HttpRequestDenied))),
        }
    }
}

/// A component's `wasi:http` context, beside its WASI context (they share its resource table:
/// `p2.rs` gives the view of both).
#[derive(Debug, Default)]
pub(crate) struct Http {
    pub(super) ctx: WasiHttpCtx,
    pub(super) hooks: Egress,
}

impl Http {
    /// The context of a guest whose requests may go to `servers`.
    pub(crate) fn new(servers: Arc<[HttpRule]>) -> Self {
        Self { ctx: WasiHttpCtx::default(), hooks: Egress { servers } }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;

    use super::*;

    fn allowed(rules: &[&str], uri: &str) -> Option<(String, u16)> {
        let servers: Arc<[HttpRule]> = rules.iter().map(|rule| rule.parse().unwrap()).collect();
        let body =
            http_body_util::Empty::<bytes::Bytes>::new().map_err(|never| -> Error { match never {} }).boxed_unsync();
        let request = http::Request::get(uri).body(body).unwrap();
        Egress { servers }.allowed(&request)
    }

    #[test]
    fn only_plain_http_to_a_named_server_goes_out() {
        let rules = ["allowed.example:8080", "10.0.0.1", "[::1]:81"];
        assert_eq!(allowed(&rules, "http://allowed.example:8080/x"), Some(("allowed.example".into(), 8080)));
        assert_eq!(allowed(&rules, "http://ALLOWED.example:8080/"), Some(("ALLOWED.example".into(), 8080)));
        assert_eq!(allowed(&rules, "http://10.0.0.1/"), Some(("10.0.0.1".into(), 80)));
        assert_eq!(allowed(&rules, "http://[::1]:81/"), Some(("::1".into(), 81)));
        for uri in [
            "https://allowed.example:8080/",
            "http://allowed.example/",
            "http://allowed.example:8081/",
            "http://allowed.example.:8080/",
            "http://other.example:8080/",
            "http://evil.example:80@allowed.example:8080/",
            "http://user@allowed.example:8080/",
            "http://10.0.0.2/",
            "/relative",
        ] {
            assert_eq!(allowed(&rules, uri), None, "{uri}");
        }
        assert_eq!(allowed(&[], "http://allowed.example:8080/"), None);
    }
}

//! Answering an HTTP request with a `wasi:http` service ([`Guest::serve_async`]): a fresh
//! instance per request, under the run's options (timeout, fuel, memory limit, cancel token,
//! spawn policy), the handler called on wasmtime's concurrent event loop, and the response's
//! body read to its end there (a 0.3 guest may write it after `handle` returned).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use wasmtime::AsContextMut as _;
use wasmtime_wasi_http::handler::{Prepared, Proxy};

use super::{Instance, Report, State};
use crate::error::InstantiateError;
use crate::guest::Guest;
use crate::options::RunOptions;
use crate::outcome::Outcome;

/// The most bytes of a response body wrt reads from a service: a guest that writes more gets
/// no answer (the request fails), not the host's memory.
pub const MAX_RESPONSE_BODY: usize = 64 << 20;

/// How a service answered one request ([`Guest::serve_async`]).
#[derive(Debug)]
pub struct Served {
    /// The run's report: how the instance ended (`Outcome::Exited(0)` when the handler
    /// returned; a trap, the timeout or no fuel otherwise) and what it used.
    pub report: Report,
    /// The guest's response, its body read whole; `Err` says why there is none, on one line
    /// (what the guest wrote in it escaped and capped, as wrt shows all guest-controlled
    /// text): the guest stopped (see [`Report::outcome`]), answered with a `wasi:http` error
    /// code, never set a response, or wrote a body over [`MAX_RESPONSE_BODY`].
    pub response: Result<http::Response<Bytes>, String>,
}

impl Guest {
    /// Answers `request` with this `wasi:http` service ([`crate::Runtime::load_service_file`])
    /// in a fresh instance made with `options`: the timeout, fuel and memory limit are the
    /// request's, as are the spawn policy and audit log of the `wrt:process` calls it makes.
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate_async`]; [`InstantiateError::ServiceNotRun`]'s counterpart,
    /// [`InstantiateError::NotAService`], when the guest is no service. A guest that traps,
    /// times out or answers badly is a [`Served`] without a response, not an error.
    pub async fn serve_async<B>(&self, options: &RunOptions, request: http::Request<B>) -> crate::Result<Served>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        if !self.is_service() {
            return Err(InstantiateError::NotAService { guest: self.name.clone() }.into());
        }
        let request = request.map(|body| body.map_err(Into::into).boxed_unsync());
        let mut instance = self.instantiate_async(options).await?;
        let answered = instance.handle_async(request).await?;
        let (outcome, response) = match answered {
            Ok(Ok(response)) => (Outcome::Exited(0), Ok(response)),
            Ok(Err(why)) => (Outcome::Exited(0), Err(why)),
            Err(outcome) => {
                let why = format!("the guest stopped: {outcome:?}");
                (outcome, Err(why))
            }
        };
        Ok(Served { report: instance.into_report(outcome), response })
    }
}

/// A response, or why there is none though the guest ran to its end.
type Answer = Result<http::Response<Bytes>, String>;

/// The `wasi:http` error code a guest answered with (0.3's or 0.2's), as wrt shows
/// guest-controlled text: escaped and capped, on one line. `None` for any other error.
fn error_code(err: &wasmtime::Error) -> Option<String> {
    use wasmtime_wasi_http::{p2, p3};
    let code = match err.downcast_ref::<p3::bindings::http::types::ErrorCode>() {
        Some(code) => format!("{code:?}"),
        None => format!("{:?}", err.downcast_ref::<p2::bindings::http::types::ErrorCode>()?),
    };
    Some(wrt_text::Shown::new(&code).to_string())
}

impl Instance {
    /// Calls the service's handler with `request` and reads the response whole, on the event
    /// loop, under the run's budget ([`Instance::enter_async`]).
    async fn handle_async(
        &mut self,
        request: wasmtime_wasi_http::handler::Request,
    ) -> wasmtime::Result<Result<Answer, Outcome>> {
        let proxy: Arc<Proxy> = match &self.state {
            State::Service(proxy) => Arc::clone(proxy),
            State::Ended(outcome) => return Ok(Err(outcome.clone())),
            _ => return Err(InstantiateError::NotAService { guest: self.guest_name.clone() }.into()),
        };
        let called = self
            .enter_async(move |store| {
                Box::pin(async move {
                    let (tx, rx) = futures::channel::oneshot::channel();
                    store
                        .run_concurrent(async move |accessor| -> wasmtime::Result<Answer> {
                            let prepared = accessor.with(|mut access| {
                                Prepared::new(
                                    access.as_context_mut(),
                                    &proxy,
                                    request,
                                    crate::guest_state::p2::http_view,
                                    tx,
                                )
                            })?;
                            // The run's deadline and cancel token end the call from outside.
                            prepared.run(accessor, std::future::pending()).await?;
                            let response = match rx.await {
                                Ok(Ok(response)) => response,
                                Ok(Err(err)) => match error_code(&err) {
                                    Some(code) => return Ok(Err(format!("the guest answered with error code {code}"))),
                                    None => return Err(err),
                                },
                                Err(_) => return Ok(Err("the guest set no response".to_owned())),
                            };
                            let (parts, body) = response.into_parts();
                            let body = match http_body_util::Limited::new(body, MAX_RESPONSE_BODY).collect().await {
                                Ok(body) => body.to_bytes(),
                                Err(err) => return Ok(Err(format!("the response's body failed: {err}"))),
                            };
                            Ok(Ok(http::Response::from_parts(parts, body)))
                        })
                        .await?
                })
            })
            .await?;
        if let Err(outcome) = &called {
            self.settle(outcome);
        }
        self.state = State::Ended(Outcome::Exited(0));
        Ok(called)
    }

    /// The error of a run asked of a service's instance.
    pub(super) fn service_not_run(&self) -> wasmtime::Error {
        InstantiateError::ServiceNotRun { guest: self.guest_name.clone() }.into()
    }
}

//! Answering HTTP requests with a `wasi:http` service: [`Guest::serve_async`] answers one in a
//! fresh instance; [`Instance::serve_async`] answers requests one after another in the same
//! instance, each under its own budget (timeout, fuel), for as long as each ends cleanly. The
//! handler is called on wasmtime's concurrent event loop, and the response's body read to its
//! end there (a 0.3 guest may write it after `handle` returned).

use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use wasmtime::AsContextMut as _;
use wasmtime::component::Accessor;
use wasmtime_wasi_http::handler::{Prepared, Proxy};

use super::{Instance, Report, State};
use crate::error::InstantiateError;
use crate::guest::Guest;
use crate::guest_state::GuestState;
use crate::options::RunOptions;
use crate::outcome::Outcome;

/// The most bytes of a response body wrt reads from a service: a guest that writes more gets
/// no answer (the request fails), not the host's memory.
pub const MAX_RESPONSE_BODY: usize = 64 << 20;

/// How many turns of the event loop a service's tasks get, after its response's body ended, to
/// finish before its instance counts as still busy (and takes no further request): the
/// handler's own task ends a turn or two after the body it wrote.
const SETTLE_TURNS: u32 = 8;

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

/// How a service's instance answered one request ([`Instance::serve_async`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Answered {
    /// How the request's call ended: `Outcome::Exited(0)` when the handler returned; the trap,
    /// the timeout, no fuel or the cancel otherwise.
    pub outcome: Outcome,
    /// The guest's response, as [`Served::response`].
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
            return Err(InstantiateError::NotAService { guest: self.name.to_string() }.into());
        }
        let mut instance = self.instantiate_async(options).await?;
        let Answered { outcome, response } = instance.serve_async(request).await?;
        Ok(Served { report: instance.into_report(outcome), response })
    }
}

/// A response, read whole.
type Response = http::Response<Bytes>;

/// A response, or why there is none though the guest ran to its end.
type Answer = Result<Response, String>;

/// Whether every task of the guest has finished, after at most [`SETTLE_TURNS`] turns of the
/// event loop (so a task waiting on a timer or a stream counts as running).
async fn tasks_finished(accessor: &Accessor<GuestState>) -> bool {
    let mut turns = 0;
    std::future::poll_fn(|cx| {
        if accessor.poll_no_interesting_tasks(cx).is_ready() {
            return Poll::Ready(true);
        }
        if turns == SETTLE_TURNS {
            return Poll::Ready(false);
        }
        turns += 1;
        // Back at once, after the event loop's turn.
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

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
    /// Answers `request` with this instance of a `wasi:http` service
    /// ([`Guest::instantiate_async`] of a guest of [`crate::Runtime::load_service_file`]), under
    /// a budget of its own: the first request's is the one armed at instantiation (the timeout
    /// counts from its start), each later request gets a fresh timeout and fuel. The children
    /// the request started end with it, whatever its outcome.
    ///
    /// The instance takes another request only after one that ended cleanly: the handler
    /// returned, its response was read whole, and no task of the guest was left running.
    /// After any other request it has ended ([`Instance::ended`]), and a later request returns
    /// the outcome that ended it, running nothing. What one request leaves in the guest (its
    /// memory, globals, resources) is there for the next: reuse an instance only for requests
    /// that may see each other's traces. The memory limit holds for the instance, not for each
    /// request.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::NotAService`] when the instance is no service's; a failure of the
    /// host (not of the guest) while it runs. A guest that traps, times out or answers badly
    /// is an [`Answered`] without a response, not an error.
    pub async fn serve_async<B>(&mut self, request: http::Request<B>) -> wasmtime::Result<Answered>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let request = request.map(|body| body.map_err(Into::into).boxed_unsync());
        let answered = match self.handle_async(request).await? {
            Ok(response) => Answered { outcome: Outcome::Exited(0), response },
            Err(outcome) => {
                let response = Err(format!("the guest stopped: {outcome:?}"));
                Answered { outcome, response }
            }
        };
        Ok(answered)
    }

    /// Names `id` in the `"request"` label of the audit records of the spawns made from now
    /// on, as [`RunOptions::request_id`] does for the run's first: for an instance that
    /// answers one request after another ([`Instance::serve_async`]).
    pub fn set_request_id(&mut self, id: impl Into<String>) {
        self.label_request(Some(id.into()));
    }

    /// Labels the audit records of the spawns made from now on with `id`, or with no request
    /// at all.
    pub(crate) fn label_request(&self, id: Option<String>) {
        self.store.data().spawn.label_request(id);
    }

    /// Calls the service's handler with `request` and reads the response whole, on the event
    /// loop, under the run's budget ([`Instance::enter_async`]); ends the request's children,
    /// and the instance unless the request ended cleanly.
    async fn handle_async(
        &mut self,
        request: wasmtime_wasi_http::handler::Request,
    ) -> wasmtime::Result<Result<Answer, Outcome>> {
        let proxy: Arc<Proxy> = match &self.state {
            State::Service(proxy) => Arc::clone(proxy),
            State::Ended(outcome) => return Ok(Err(outcome.clone())),
            _ => return Err(InstantiateError::NotAService { guest: self.guest_name.to_string() }.into()),
        };
        let called = self
            .enter_async(move |store| {
                Box::pin(async move {
                    let (tx, rx) = futures::channel::oneshot::channel();
                    store
                        .run_concurrent(async move |accessor| -> wasmtime::Result<Result<(Response, bool), String>> {
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
                            let settled = tasks_finished(accessor).await;
                            Ok(Ok((http::Response::from_parts(parts, body), settled)))
                        })
                        .await?
                })
            })
            .await?;
        // The request's children end with it; a request that did not end cleanly ends the
        // instance (a guest that stopped, answered badly, or left a task running).
        self.store.data_mut().spawn.end_children();
        let (answer, reusable) = match called {
            Ok(Ok((response, settled))) => (Ok(Ok(response)), settled),
            Ok(Err(why)) => (Ok(Err(why)), false),
            Err(outcome) => (Err(outcome), false),
        };
        if !reusable {
            let outcome = match &answer {
                Err(outcome) => outcome.clone(),
                Ok(_) => Outcome::Exited(0),
            };
            self.state = State::Ended(outcome);
        }
        Ok(answer)
    }

    /// The error of a run asked of a service's instance.
    pub(super) fn service_not_run(&self) -> wasmtime::Error {
        InstantiateError::ServiceNotRun { guest: self.guest_name.to_string() }.into()
    }
}

//! A `wasi:http` service's instances, kept from one request for the next ([`ServicePool`]).

use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::error::InstantiateError;
use crate::guest::Guest;
use crate::instance::{Answered, Instance};
use crate::options::RunOptions;

/// How long an instance may wait for its next request by default
/// ([`ServicePool::idle_timeout`]).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(1);

/// Answers requests with a `wasi:http` service, each in an instance that has answered fewer
/// than `reuse` requests before: with `reuse` 1, a fresh instance for every request (as
/// [`Guest::serve_async`]); with more, an instance answers requests one after another
/// ([`Instance::serve_async`]), never two at once, for as long as each ends cleanly.
///
/// What a reused instance keeps and what it does not:
/// - each request has its own timeout and fuel, and the children it starts end with it;
/// - a request that traps, times out, runs out of fuel, answers badly or leaves a task of the
///   guest running ends its instance: the next request gets another;
/// - the guest's memory, globals and resources carry over from request to request, and the
///   memory limit holds for the instance, not for each request.
///
/// An instance waits for its next request at most the idle timeout; [`ServicePool::retire_idle`]
/// ends those that waited longer. Instances that are done are dropped after their request's
/// answer is ready: in a task of the runtime that awaits [`ServicePool::serve_async`] when they
/// are small and made no spawn request that started or was refused, on a thread of wrt's own
/// otherwise.
///
/// # Examples
///
/// ```no_run
/// use std::num::NonZeroU32;
/// use wrt_runtime::{RunOptions, Runtime, ServicePool};
///
/// # fn main() -> wrt_runtime::Result<()> {
/// let guest = Runtime::new()?.load_service_file("service.wasm")?;
/// let options = RunOptions::new().timeout(std::time::Duration::from_secs(5));
/// // Up to 100 requests per instance, one after another.
/// let pool = ServicePool::new(guest, options, NonZeroU32::new(100).unwrap())?;
/// let executor = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
/// for id in ["1", "2"] {
///     let request = http::Request::new(String::from("hello"));
///     let answered = executor.block_on(pool.serve_async(request, Some(id)))?;
///     println!("{:?}", answered.response.map(|response| response.status()));
/// }
/// # Ok(()) }
/// ```
pub struct ServicePool {
    guest: Guest,
    options: RunOptions,
    reuse: NonZeroU32,
    idle_timeout: Duration,
    /// Instances waiting for a request, the one that waited least last.
    idle: Mutex<Vec<Idle>>,
}

/// An instance waiting for its next request.
struct Idle {
    instance: Instance,
    /// Requests it answered.
    served: u32,
    /// When it answered its last.
    since: Instant,
}

impl std::fmt::Debug for ServicePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServicePool")
            .field("guest", &self.guest)
            .field("reuse", &self.reuse)
            .field("idle_timeout", &self.idle_timeout)
            .field("idle", &self.idle())
            .finish_non_exhaustive()
    }
}

impl ServicePool {
    /// A pool of instances of `guest` (a service of [`crate::Runtime::load_service_file`]),
    /// each made with `options` and answering at most `reuse` requests.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::NotAService`] when `guest` is no service.
    pub fn new(guest: Guest, options: RunOptions, reuse: NonZeroU32) -> crate::Result<Self> {
        if !guest.is_service() {
            return Err(InstantiateError::NotAService { guest: guest.name.to_string() }.into());
        }
        let idle = Mutex::new(Vec::new());
        Ok(Self { guest, options, reuse, idle_timeout: DEFAULT_IDLE_TIMEOUT, idle })
    }

    /// How long an instance may wait for its next request before
    /// [`ServicePool::retire_idle`] ends it, and before a request no longer takes it.
    /// Default: [`DEFAULT_IDLE_TIMEOUT`].
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Answers `request` in an instance that waits for one, or in a fresh one; `request_id`,
    /// if given, labels the audit records of the spawns the request makes (as
    /// [`RunOptions::request_id`]); without it, the options' own label (if any) does, on a
    /// reused instance as on a fresh one.
    ///
    /// # Errors
    ///
    /// As [`Guest::serve_async`].
    pub async fn serve_async<B>(&self, request: http::Request<B>, request_id: Option<&str>) -> crate::Result<Answered>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let (mut instance, served) = match self.take() {
            Some(Idle { instance, served, .. }) => {
                // Relabelled every time, so that a request without an id carries the options'
                // label (or none), never the one before it's.
                let label = request_id.map(str::to_owned).or_else(|| self.options.request_id.clone());
                instance.label_request(label);
                (instance, served)
            }
            None => {
                // Boxed: instantiation's future is over twice the size of the request's, and
                // every future this one is part of would carry (and copy) it.
                let instance = match request_id {
                    Some(id) => Box::pin(self.guest.instantiate_async(&self.options.clone().request_id(id))).await?,
                    None => Box::pin(self.guest.instantiate_async(&self.options)).await?,
                };
                (instance, 0)
            }
        };
        let answered = instance.serve_async(request).await;
        let served = served + 1;
        match answered.is_ok() && instance.ended().is_none() && served < self.reuse.get() {
            true => self.put(Idle { instance, served, since: Instant::now() }),
            false => retire(instance),
        }
        answered
    }

    /// Ends the instances that waited for a request longer than the idle timeout; returns how
    /// many.
    pub fn retire_idle(&self) -> usize {
        let expired: Vec<Idle> = {
            let mut idle = self.lock();
            // The oldest come first.
            let fresh = idle.iter().position(|waiting| waiting.since.elapsed() < self.idle_timeout);
            let fresh = fresh.unwrap_or(idle.len());
            idle.drain(..fresh).collect()
        };
        let count = expired.len();
        if count > 0 {
            crate::tokio_runtime::drop_elsewhere(expired);
        }
        count
    }

    /// How many instances wait for a request.
    pub fn idle(&self) -> usize {
        self.lock().len()
    }

    /// The instance that waited least, unless it waited too long (and then so did all the
    /// others, which end with it).
    fn take(&self) -> Option<Idle> {
        let mut idle = self.lock();
        let waiting = idle.pop()?;
        if waiting.since.elapsed() < self.idle_timeout {
            return Some(waiting);
        }
        let expired: Vec<Idle> = idle.drain(..).chain([waiting]).collect();
        drop(idle);
        crate::tokio_runtime::drop_elsewhere(expired);
        None
    }

    fn put(&self, waiting: Idle) {
        self.lock().push(waiting);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Idle>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Drops an instance that is done, off the path of its request's answer: one that drops
/// quickly in a task of the server's runtime, which runs once the request's task has written
/// its answer, on the same worker as a rule (waking a thread of the blocking pool for it cost
/// the server more CPU per request than the drop); any other on a thread of wrt's blocking pool.
fn retire(instance: Instance) {
    match instance.drops_quickly() {
        true => crate::tokio_runtime::drop_after_task(instance),
        false => crate::tokio_runtime::drop_elsewhere(instance),
    }
}

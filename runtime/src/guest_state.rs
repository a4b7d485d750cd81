//! What a guest's `Store` holds.

pub(crate) mod http;
pub(crate) mod listings;
pub(crate) mod originals;
pub(crate) mod p2;

use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

use wasmtime::TypedFunc;
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::external::accountant::Accountant;
use crate::external::buffer::BufferView;
use crate::external::buffer::DEFAULT_EXTERNAL_LIMIT;
use crate::external::gc_policy::GcPolicy;
use crate::external::spares::Spares;
use crate::limiter::Limiter;
use crate::process_service::handles::Handles;
use crate::process_service::spawn_state::SpawnState;
use crate::sys::buffer_memory::BufferPool;
use crate::sys::memory_pool::MemoryPool;

/// The data of a guest's store: what wrt keeps for one run. Opaque, except to host functions
/// an embedder adds ([`RuntimeBuilder::link_modules`](crate::RuntimeBuilder::link_modules),
/// [`RuntimeBuilder::link_components`](crate::RuntimeBuilder::link_components)), which
/// receive it as `Caller<'_, GuestState>` (core modules) or `StoreContextMut<'_, GuestState>`
/// (components) and read the run's own data from it ([`GuestState::host_data`]).
pub struct GuestState {
    /// The WASI context: `None` for a guest that imports no WASI function, which never
    /// reaches it (building one costs about a microsecond per run). The contexts are boxed
    /// (out of line), as is the spawner: the state is moved into the store whole, and each of
    /// them is several hundred bytes.
    pub(crate) wasi: Option<Box<WasiP1Ctx>>,
    /// The WASI 0.2 context and resource table of a component (`None` for a core module).
    pub(crate) p2: Option<Box<p2::P2>>,
    pub(crate) limiter: Limiter,
    /// When the running call must stop: its deadline, if the run has a timeout, and the run's
    /// cancel token.
    pub(crate) stop: crate::stop::Stop,
    /// The same stop for what runs outside a host call (streams of a component's children,
    /// stdin): its deadline is set only when the run has a timeout. The run's
    /// `stop::RunDeadline` sets both.
    pub(crate) stop_cell: crate::stop::StopCell,
    /// The guest's children and spawner (the `wrt_v1` ABI).
    pub(crate) spawn: SpawnState,
    /// The message of the guest's last failed `wrt_v1` call, which `last_error` returns.
    pub(crate) last_error: String,
    /// The guest's host buffers and their accountant, made at its first buffer call
    /// ([`GuestState::external`]): a run whose guest takes no buffer builds and drops none of it.
    pub(crate) external: Option<Box<ExternalState>>,
    /// What the guest's host buffers are made from, once it takes one.
    pub(crate) buffer_source: BufferSource,
    /// WASI's own functions, which their wrappers call (`wasi::original`).
    pub(crate) wasi_originals: Option<originals::Originals>,
    /// A core module's exported `memory`, once instantiation has finished (host calls from its
    /// start function look it up by name): exports never change afterwards, and every host
    /// call that reads or writes guest memory would otherwise look it up again.
    pub(crate) memory: Option<wasmtime::Memory>,
    /// Which of a core module's descriptors 1 and 2 write straight to wrt's own streams.
    pub(crate) direct_stdio: crate::guest_stdio::DirectStdio,
    /// The directory listings `fd_readdir` answers from (`wasi::readdir`).
    pub(crate) listings: listings::Listings,
    /// The embedder's data for this run ([`crate::RunOptions::host_data`]).
    pub(crate) host_data: Option<Arc<dyn Any + Send + Sync>>,
    /// Whether the run calls wasm synchronously or on a fiber.
    pub(crate) mode: Mode,
}

/// Which kind of run a store (or a linker) serves: how host functions that call back into the
/// guest make their calls (`host_fn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `call` and `instantiate` on the caller's thread.
    Sync,
    /// `call_async` and `instantiate_async`, the guest on a fiber.
    Async,
}

impl std::fmt::Debug for GuestState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuestState").field("guest", &self.spawn.guest).finish_non_exhaustive()
    }
}

impl GuestState {
    /// Bytes the guest holds now: linear memory, tables (past their allowance) and host
    /// buffers' footprint.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.limiter.wasm_bytes().saturating_add(self.buffer_footprint())
    }

    /// The guest's host buffers and their accountant, made now if it has none yet; from then on
    /// their footprint counts against the memory limit.
    ///
    /// Every buffer call reaches it, often several times: the check is inlined, the making
    /// ([`make_external`]) is not.
    #[inline]
    pub(crate) fn external(&mut self) -> &mut ExternalState {
        let Self { external, buffer_source, limiter, .. } = self;
        external.get_or_insert_with(|| make_external(buffer_source, limiter))
    }

    /// Bytes the guest's host buffers cost the host now: 0 before its first.
    pub(crate) fn buffer_footprint(&self) -> u64 {
        self.external.as_ref().map_or(0, |external| external.pool.footprint())
    }

    /// The data the embedder gave this run ([`crate::RunOptions::host_data`]), if it is a `T`.
    pub fn host_data<T: Any>(&self) -> Option<&T> {
        self.host_data.as_deref()?.downcast_ref()
    }

    /// The guest's name ([`crate::Guest::name`]).
    pub fn guest_name(&self) -> &str {
        &self.spawn.guest
    }
}

/// A guest's buffer state, made at its first buffer call ([`GuestState::external`]); from then
/// on the limiter counts the pool's footprint.
#[cold]
#[inline(never)]
fn make_external(source: &BufferSource, limiter: &mut Limiter) -> Box<ExternalState> {
    let made = ExternalState::new(Accountant::new(source.gc_policy.clone()), Arc::clone(&source.slabs));
    limiter.count_buffers(Arc::clone(&made.pool));
    Box::new(made)
}

impl GuestState {
    /// How many more bytes host buffers may take from the host: what is left under the memory
    /// limit after linear memory, tables and the buffers' footprint, or under
    /// [`DEFAULT_EXTERNAL_LIMIT`] without a limit.
    pub(crate) fn buffer_room(&self) -> u64 {
        let footprint = self.buffer_footprint();
        match self.limiter.max_memory() {
            Some(max) => max.saturating_sub(self.limiter.wasm_bytes().saturating_add(footprint)),
            None => DEFAULT_EXTERNAL_LIMIT.saturating_sub(footprint),
        }
    }
}

/// What a guest's host buffers are made from ([`GuestState::external`]): the run's collection
/// policy and the runtime's slabs.
pub(crate) struct BufferSource {
    pub(crate) gc_policy: GcPolicy,
    pub(crate) slabs: Arc<MemoryPool>,
}

/// Host buffers of one guest.
pub(crate) struct ExternalState {
    pub(crate) accountant: Accountant,
    pub(crate) pool: Arc<BufferPool>,
    pub(crate) buffers: Handles<BufferView>,
    /// Storages of buffers the guest released, for its next buffers.
    pub(crate) spares: Spares,
    /// The guest's `wrt_gc` export, once looked up.
    pub(crate) guest_gc: Option<Option<TypedFunc<i32, ()>>>,
    /// Where `read_buffer` reads before the bytes become a buffer.
    pub(crate) scratch: Vec<u8>,
    /// The collection the policy asks of a component, until it pulls it
    /// (`buffers.collection-due`).
    pub(crate) due: Option<crate::external::accountant::Kind>,
    /// The collection a component pulled and runs now, and when it pulled it.
    pub(crate) pulled: Option<(crate::external::accountant::Kind, Instant)>,
}

impl ExternalState {
    pub(crate) fn new(accountant: Accountant, slabs: Arc<MemoryPool>) -> Self {
        // Keep two young generations of empty slabs warm, so that young collections recycle
        // warm pages.
        let retain = accountant.policy.young_trigger().saturating_mul(2);
        Self {
            pool: BufferPool::new(slabs, retain),
            accountant,
            buffers: Handles::for_buffers(),
            spares: Spares::default(),
            guest_gc: None,
            scratch: Vec::new(),
            due: None,
            pulled: None,
        }
    }

    /// How much the pool's footprint would grow for a new buffer of `len` bytes: nothing when a
    /// kept storage fits it.
    pub(crate) fn growth_for(&self, len: usize) -> u64 {
        if self.spares.has_for(len) { 0 } else { self.pool.growth_for(len) }
    }

    /// Gives the kept storages back, then unmaps every slab whose blocks are all free: what the
    /// guest's buffers may take is then all that is left under the limit.
    pub(crate) fn trim(&mut self) {
        self.spares.clear();
        self.pool.trim();
    }
}

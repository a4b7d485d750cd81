//! `wrt:process/buffers` for components: host buffers by resource, in the same table, limits
//! and memory accounting as the core ABI's buffer handles. A `buffer` resource is a buffer
//! handle of the core ABI; dropping it releases the handle.
//!
//! Collections: the same accountant and policy as the core ABI decide when a collection is due,
//! but the host cannot call into a running component, so the component pulls it
//! (`collection-due`): see `collector::allocate_uncollected`.

use wasmtime::component::Resource;
use wasmtime_wasi::WasiView;
use wrt_abi::ErrorCode;
use wrt_abi::consts::MAX_READ_BUFFER;

use super::wit::bindings::wrt::process::buffers::{Host, HostBuffer};
use super::wit::bindings::wrt::process::process::OutputSource;
use super::wit::bindings::wrt::process::types::{Collection, Error};
use super::wit::{BufferHandle, wit, wit_fail};
use crate::collector::{allocate_uncollected, take_due};
use crate::external::accountant::Kind;
use crate::external::buffer::{BufferView, concat_source};
use crate::guest_state::GuestState;
use crate::process_service;

/// The most bytes one `read-buffer` takes from the child (as for the core ABI), and one `read`
/// returns.
const MAX_CHUNK: usize = 1 << 20;

type Made = wasmtime::Result<Result<Resource<BufferHandle>, Error>>;

impl GuestState {
    /// The buffer behind a resource.
    fn buffer_view(&mut self, buf: &Resource<BufferHandle>) -> wasmtime::Result<Result<BufferView, Error>> {
        let handle = self.ctx().table.get(buf)?.0;
        Ok(match self.external().buffers.get(handle) {
            Ok(view) => Ok(view.clone()),
            Err(code) => Err(wit_fail(code, format!("`{handle}` is not a buffer handle"))),
        })
    }

    /// A new buffer of `len` bytes, placed for a copy from address `source` and filled by
    /// `fill`, as a resource.
    fn new_buffer(&mut self, len: usize, source: Option<usize>, fill: impl FnOnce(&BufferView)) -> Made {
        let view = match allocate_uncollected(self, len, source) {
            Ok(view) => view,
            Err(err) => return Ok(Err(wit_fail(err.code(), err.to_string()))),
        };
        fill(&view);
        self.buffer_resource(view)
    }

    /// Stores `view` under a new handle and resource.
    fn buffer_resource(&mut self, view: BufferView) -> Made {
        let handle = match self.external().buffers.insert(view) {
            Ok(handle) => handle,
            Err(code) => return Ok(Err(wit_fail(code, "too many buffer handles"))),
        };
        match self.ctx().table.push(BufferHandle(handle)) {
            Ok(buf) => Ok(Ok(buf)),
            Err(err) => {
                let _ = self.external().buffers.remove(handle);
                Ok(Err(wit_fail(ErrorCode::NoMemory, format!("too many resources: {err}"))))
            }
        }
    }
}

impl Host for GuestState {
    fn collection_due(&mut self) -> wasmtime::Result<Option<Collection>> {
        Ok(take_due(self).map(|kind| match kind {
            Kind::Young => Collection::Young,
            Kind::Full => Collection::Full,
        }))
    }
}

impl HostBuffer for GuestState {
    fn from_bytes(&mut self, bytes: Vec<u8>) -> Made {
        self.new_buffer(bytes.len(), Some(bytes.as_ptr() as usize), |view| view.write(0, &bytes))
    }

    fn alloc(&mut self, len: u32) -> Made {
        self.new_buffer(len as usize, None, BufferView::zero)
    }

    fn concat(&mut self, parts: Vec<Resource<BufferHandle>>) -> Made {
        let mut views = Vec::with_capacity(parts.len());
        for part in &parts {
            match self.buffer_view(part)? {
                Ok(view) => views.push(view),
                Err(err) => return Ok(Err(err)),
            }
        }
        let total = views.iter().map(BufferView::len).fold(0usize, usize::saturating_add);
        let source = concat_source(views.iter().map(|view| (view.addr(), view.len())));
        self.new_buffer(total, source, |view| {
            let mut offset = 0;
            for part in &views {
                view.copy_from(offset, part);
                offset += part.len();
            }
        })
    }

    fn len(&mut self, buf: Resource<BufferHandle>) -> wasmtime::Result<u32> {
        Ok(self.buffer_view(&buf)?.map_or(0, |view| view.len() as u32))
    }

    fn read(&mut self, buf: Resource<BufferHandle>, offset: u32, len: u32) -> wasmtime::Result<Result<Vec<u8>, Error>> {
        let view = match self.buffer_view(&buf)? {
            Ok(view) => view,
            Err(err) => return Ok(Err(err)),
        };
        let offset = offset as usize;
        if offset > view.len() {
            let message = format!("offset {offset} is past the buffer's {} bytes", view.len());
            return Ok(Err(wit_fail(ErrorCode::OutOfRange, message)));
        }
        // The host copies what it returns: at most one chunk a call, so a guest cannot make it
        // hold a second copy of a large buffer.
        let mut bytes = vec![0; (len as usize).min(view.len() - offset).min(MAX_CHUNK)];
        view.read(offset, &mut bytes);
        Ok(Ok(bytes))
    }

    fn write(
        &mut self,
        buf: Resource<BufferHandle>,
        offset: u32,
        bytes: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let view = match self.buffer_view(&buf)? {
            Ok(view) => view,
            Err(err) => return Ok(Err(err)),
        };
        if !view.contains(offset as usize, bytes.len()) {
            let message = format!("{} bytes at {offset} do not fit the buffer's {} bytes", bytes.len(), view.len());
            return Ok(Err(wit_fail(ErrorCode::OutOfRange, message)));
        }
        view.write(offset as usize, &bytes);
        Ok(Ok(()))
    }

    fn slice(&mut self, buf: Resource<BufferHandle>, start: u32, end: u32) -> Made {
        let view = match self.buffer_view(&buf)? {
            Ok(view) => view,
            Err(err) => return Ok(Err(err)),
        };
        match view.slice(start as usize, end as usize) {
            Some(slice) => self.buffer_resource(slice),
            None => {
                let message = format!("slice {start}..{end} is not inside the buffer's {} bytes", view.len());
                Ok(Err(wit_fail(ErrorCode::OutOfRange, message)))
            }
        }
    }

    fn drop(&mut self, buf: Resource<BufferHandle>) -> wasmtime::Result<()> {
        let handle = self.ctx().table.delete(buf)?.0;
        let _ = self.external().buffers.remove(handle);
        Ok(())
    }
}

/// `child.read-buffer`: up to `max_len` bytes of the child's stdout or stderr in a new buffer.
pub(crate) fn read_buffer(
    state: &mut GuestState,
    handle: i32,
    source: OutputSource,
    max_len: u32,
) -> wasmtime::Result<Result<Option<Resource<BufferHandle>>, Error>> {
    if !(1..=MAX_READ_BUFFER).contains(&max_len) {
        let message = format!("max-len {max_len} is not between 1 and {MAX_READ_BUFFER}");
        return Ok(Err(wit_fail(ErrorCode::InvalidArgument, message)));
    }
    let stream = match source {
        OutputSource::Stdout => 1,
        OutputSource::Stderr => 2,
    };
    let mut scratch = vec![0; (max_len as usize).min(MAX_CHUNK)];
    // A blocking read never answers that it would block.
    let n = match process_service::io::read_child(&mut state.spawn, &state.stop, handle, stream, false, &mut scratch)? {
        Ok(read) => read.unwrap_or(0),
        Err(failure) => return Ok(Err(wit(failure))),
    };
    if n == 0 {
        return Ok(Ok(None));
    }
    Ok(state.new_buffer(n, Some(scratch.as_ptr() as usize), |view| view.write(0, &scratch[..n]))?.map(Some))
}

/// `child.write-buffer`: `buf[offset..]` to the child's stdin.
pub(crate) fn write_buffer(
    state: &mut GuestState,
    handle: i32,
    buf: &Resource<BufferHandle>,
    offset: u32,
) -> wasmtime::Result<Result<u32, Error>> {
    let view = match state.buffer_view(buf)? {
        Ok(view) => view,
        Err(err) => return Ok(Err(err)),
    };
    let offset = offset as usize;
    if offset > view.len() {
        let message = format!("offset {offset} is past the buffer's {} bytes", view.len());
        return Ok(Err(wit_fail(ErrorCode::OutOfRange, message)));
    }
    if offset == view.len() {
        return Ok(Ok(0));
    }
    let written = view.with_bytes(offset, |bytes| {
        process_service::io::write_child(&mut state.spawn, &state.stop, handle, false, bytes)
    })?;
    // A blocking write never answers that it would block.
    Ok(written.map(|n| i32::try_from(n.unwrap_or(0)).unwrap_or(i32::MAX) as u32).map_err(wit))
}

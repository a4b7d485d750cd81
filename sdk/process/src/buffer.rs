//! Bytes held by the host: [`Buffer`], over the `wrt:process` `buffer` resource.

use std::fmt;
use std::io;
use std::ops::{Bound, RangeBounds};

use crate::error::{ErrorCode, from_wit, local};
use crate::sys;

/// A byte buffer held by the host (external memory, counted against the sandbox's
/// `--max-memory`), of fixed length, at most 1 GiB.
///
/// A child's output can be read into buffers
/// ([`ChildStdout::read_buffer`](crate::ChildStdout::read_buffer)), joined and sliced in the
/// host, and written to another child ([`ChildStdin::write_buffer`](crate::ChildStdin::write_buffer))
/// without the bytes passing through linear memory. Dropping the buffer frees its bytes once
/// no slice shares them.
///
/// Unlike the core-module SDK's `Buffer`, small buffers are not kept in linear memory: every
/// buffer is a host resource. Every operation can fail, so creating one returns an
/// [`io::Result`]: when the sandbox's memory limit is reached the error is
/// [`OutOfMemory`](io::ErrorKind::OutOfMemory) (code [`NoMemory`](ErrorCode::NoMemory)),
/// never a panic.
///
/// # Examples
///
/// ```no_run
/// use wrt_process::Buffer;
///
/// let head = Buffer::from_slice(b"<html><body>")?;
/// let mut body = Buffer::zeroed(120 << 10)?;
/// body.write_at(0, b"hello")?;
/// let page = Buffer::concat(&[&head, &body])?;
/// assert_eq!(page.len(), 12 + (120 << 10));
/// let mut start = [0; 17];
/// assert_eq!(page.read_at(0, &mut start)?, 17);
/// assert_eq!(&start, b"<html><body>hello");
/// assert_eq!(page.slice(12..)?.len(), 120 << 10); // shares the bytes of `page`
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Buffer {
    resource: sys::Buffer,
    len: u32,
}

/// A length or offset as the WIT's `u32`, or `OUT_OF_RANGE`.
fn wit_u32(value: usize, what: &str) -> io::Result<u32> {
    u32::try_from(value).map_err(|_| local(ErrorCode::OutOfRange, format!("{what} {value} does not fit a buffer")))
}

impl Buffer {
    pub(crate) fn from_wit(resource: sys::Buffer) -> Self {
        let len = resource.len();
        Self { resource, len }
    }

    pub(crate) fn resource(&self) -> &sys::Buffer {
        &self.resource
    }

    pub(crate) fn wit_len(&self) -> u32 {
        self.len
    }

    /// A buffer holding a copy of `bytes`.
    ///
    /// # Errors
    ///
    /// `OutOfMemory` ([`NoMemory`](ErrorCode::NoMemory)) past the sandbox's memory limit;
    /// `InvalidInput` past 1 GiB.
    pub fn from_slice(bytes: &[u8]) -> io::Result<Self> {
        let resource = sys::Buffer::from_bytes(bytes)
            .map_err(|e| from_wit(e, || format!("cannot make a buffer of {} bytes", bytes.len())))?;
        Ok(Self::from_wit(resource))
    }

    /// A buffer of `len` zero bytes.
    ///
    /// # Errors
    ///
    /// As [`from_slice`](Self::from_slice).
    pub fn zeroed(len: usize) -> io::Result<Self> {
        let wit_len = wit_u32(len, "length")?;
        let resource =
            sys::Buffer::alloc(wit_len).map_err(|e| from_wit(e, || format!("cannot make a buffer of {len} bytes")))?;
        Ok(Self::from_wit(resource))
    }

    /// The parts, one after another, in a new buffer (one host call).
    ///
    /// # Errors
    ///
    /// As [`from_slice`](Self::from_slice).
    pub fn concat(parts: &[&Buffer]) -> io::Result<Self> {
        let resources: Vec<&sys::Buffer> = parts.iter().map(|part| &part.resource).collect();
        let resource = sys::Buffer::concat(&resources)
            .map_err(|e| from_wit(e, || format!("cannot concatenate {} buffers", parts.len())))?;
        Ok(Self::from_wit(resource))
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies bytes from `offset` into `dst`, as many as fit or are left, and returns how many.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`OutOfRange`](ErrorCode::OutOfRange)) if `offset` is past the end.
    pub fn read_at(&self, offset: usize, dst: &mut [u8]) -> io::Result<usize> {
        let (wanted, len) = (dst.len(), self.len);
        let context = || format!("cannot read {wanted} bytes at {offset} of a buffer of {len}");
        let mut done = 0;
        loop {
            let at = wit_u32(offset.saturating_add(done), "offset")?;
            let want = wit_u32((dst.len() - done).min(u32::MAX as usize), "length")?;
            let bytes = self.resource.read(at, want).map_err(|e| from_wit(e, context))?;
            dst[done..done + bytes.len()].copy_from_slice(&bytes);
            done += bytes.len();
            if bytes.is_empty() || done == dst.len() {
                return Ok(done);
            }
        }
    }

    /// Copies `src` into the buffer at `offset`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`OutOfRange`](ErrorCode::OutOfRange)) if `src` does not fit there.
    pub fn write_at(&mut self, offset: usize, src: &[u8]) -> io::Result<()> {
        let context = || format!("cannot write {} bytes at {offset} of a buffer of {}", src.len(), self.len);
        let at = wit_u32(offset, "offset")?;
        self.resource.write(at, src).map_err(|e| from_wit(e, context))
    }

    /// A buffer viewing `range` of this one, sharing its bytes.
    ///
    /// # Errors
    ///
    /// `InvalidInput` ([`OutOfRange`](ErrorCode::OutOfRange)) if `range` is not inside it.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> io::Result<Self> {
        let start = match range.start_bound() {
            Bound::Included(&start) => start,
            Bound::Excluded(&start) => start.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&end) => end.saturating_add(1),
            Bound::Excluded(&end) => end,
            Bound::Unbounded => self.len(),
        };
        let context = || format!("cannot slice {start}..{end} of a buffer of {}", self.len);
        let resource =
            self.resource.slice(wit_u32(start, "start")?, wit_u32(end, "end")?).map_err(|e| from_wit(e, context))?;
        Ok(Self::from_wit(resource))
    }

    /// All its bytes, copied into linear memory.
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; self.len()];
        let read = self.read_at(0, &mut bytes)?;
        bytes.truncate(read);
        Ok(bytes)
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer").field("len", &self.len).finish_non_exhaustive()
    }
}

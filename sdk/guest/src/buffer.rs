//! Byte buffers whose large payloads live in the host: [`Buffer`].

use std::fmt;
use std::io;
use std::ops::{Bound, RangeBounds};

use crate::error::{ErrorCode, WrtError, check};
use crate::sys::{self, ConcatPart, MAX_CONCAT_PARTS};

/// A byte buffer of fixed length: in linear memory when it is small, in the host when it is
/// large.
///
/// A buffer of [`INLINE_MAX`](Self::INLINE_MAX) (64) bytes or less is kept inline, inside the
/// `Buffer` value in linear memory: creating, reading, writing, slicing or concatenating it
/// never calls the host. A longer buffer is a host buffer (docs/abi.md, "Host buffers"): its
/// bytes live outside linear memory, in memory the host counts against the sandbox's
/// `--max-memory`, and the `Buffer` holds its handle, which is released when the `Buffer` is
/// dropped. So [`is_host`](Self::is_host) is true exactly when [`len`](Self::len) is over 64.
///
/// Host buffers are what a child's output can be read into
/// ([`ChildStdout::read_buffer`](crate::ChildStdout::read_buffer)) and given to another child
/// as stdin ([`ChildStdin::write_buffer`](crate::ChildStdin::write_buffer)) without the bytes
/// passing through linear memory; [`concat`](Self::concat) and [`slice`](Self::slice) build new
/// buffers in the host as well.
///
/// The length never changes after creation. Every operation that reaches the host can fail,
/// so creating a buffer returns an [`io::Result`]: when the sandbox's memory limit is reached
/// the error is [`OutOfMemory`](io::ErrorKind::OutOfMemory) (code
/// [`NoMemory`](ErrorCode::NoMemory)), never a panic. For the same reason `Buffer` implements
/// [`TryFrom`] rather than `From` for byte slices and vectors.
///
/// # Examples
///
/// ```no_run
/// use wrt_guest::Buffer;
///
/// let head = Buffer::from_slice(b"<html><body>")?; // 12 bytes: inline, no host call
/// assert!(!head.is_host());
/// let mut body = Buffer::zeroed(120 << 10)?; // 120 KiB of zeros in the host
/// assert!(body.is_host());
/// body.write_at(0, b"hello")?;
///
/// let page = Buffer::concat(&[&head, &body])?; // one host call; `head` is passed from linear memory
/// assert_eq!(page.len(), 12 + (120 << 10));
/// let mut start = [0; 17];
/// assert_eq!(page.read_at(0, &mut start)?, 17);
/// assert_eq!(&start, b"<html><body>hello");
///
/// let tail = page.slice(12..)?; // shares the bytes of `page`
/// assert_eq!(tail.len(), 120 << 10);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Buffer(Repr);

enum Repr {
    Inline(Inline),
    Host(HostBuffer),
}

/// The bytes of a buffer of at most [`Buffer::INLINE_MAX`] bytes.
#[derive(Clone, Copy)]
struct Inline {
    len: u8,
    bytes: [u8; Buffer::INLINE_MAX],
}

impl Inline {
    /// `len` zero bytes, if `len` fits inline.
    fn zeroed(len: usize) -> Option<Self> {
        let len = u8::try_from(len).ok().filter(|&len| usize::from(len) <= Buffer::INLINE_MAX)?;
        Some(Self { len, bytes: [0; Buffer::INLINE_MAX] })
    }

    /// A copy of `src`, if it fits inline.
    fn from_slice(src: &[u8]) -> Option<Self> {
        let mut inline = Self::zeroed(src.len())?;
        inline.as_mut().copy_from_slice(src);
        Some(inline)
    }
}

impl AsRef<[u8]> for Inline {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl AsMut<[u8]> for Inline {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[..usize::from(self.len)]
    }
}

/// An owned host buffer handle, released when dropped.
struct HostBuffer {
    handle: i32,
    len: usize,
}

impl HostBuffer {
    /// Takes ownership of `handle`, which the host just returned, for a buffer of `len` bytes.
    fn new(handle: u32, len: usize) -> Self {
        Self { handle: handle as i32, len }
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // Only fails for a handle that is not ours, which `new`'s callers rule out.
        let _ = sys::buffer_release(self.handle);
    }
}

impl Buffer {
    /// The largest buffer kept inline in linear memory, in bytes (V8's limit for typed arrays
    /// stored on its heap). Longer buffers are host buffers.
    pub const INLINE_MAX: usize = wrt_abi::consts::INLINE_MAX;

    /// An empty buffer (inline).
    pub const fn new() -> Self {
        Self(Repr::Inline(Inline { len: 0, bytes: [0; Self::INLINE_MAX] }))
    }

    /// A buffer holding a copy of `bytes`: inline for 64 bytes or less, otherwise a new host
    /// buffer (`buffer_from`).
    ///
    /// # Errors
    ///
    /// `OutOfMemory` (code [`NoMemory`](ErrorCode::NoMemory)) when the sandbox's memory limit,
    /// or its limit of buffer handles, is reached; `InvalidInput` for more than 1 GiB.
    pub fn from_slice(bytes: &[u8]) -> io::Result<Self> {
        if let Some(inline) = Inline::from_slice(bytes) {
            return Ok(Self(Repr::Inline(inline)));
        }
        let handle =
            check(sys::buffer_from(bytes), || format!("cannot copy {} bytes into a host buffer", bytes.len()))?;
        Ok(Self(Repr::Host(HostBuffer::new(handle, bytes.len()))))
    }

    /// A buffer of `len` zero bytes: inline for 64 bytes or less, otherwise a new host buffer
    /// (`buffer_alloc`).
    ///
    /// # Errors
    ///
    /// As [`from_slice`](Self::from_slice).
    pub fn zeroed(len: usize) -> io::Result<Self> {
        if let Some(inline) = Inline::zeroed(len) {
            return Ok(Self(Repr::Inline(inline)));
        }
        let handle = check(sys::buffer_alloc(len), || format!("cannot allocate a host buffer of {len} bytes"))?;
        Ok(Self(Repr::Host(HostBuffer::new(handle, len))))
    }

    /// Takes ownership of `handle`, a host buffer the host just returned, and asks for its
    /// length. A buffer of 64 bytes or less is copied inline and its handle released.
    pub(crate) fn from_host_handle(handle: u32, context: impl Fn() -> String) -> io::Result<Self> {
        // Owned from here on, so an error below releases it.
        let mut host = HostBuffer::new(handle, 0);
        host.len = check(sys::buffer_len(host.handle), &context)? as usize;
        let buffer = Self(Repr::Host(host));
        match Inline::zeroed(buffer.len()) {
            Some(mut inline) => {
                buffer.read_exact_at(0, inline.as_mut())?;
                Ok(Self(Repr::Inline(inline)))
            }
            None => Ok(buffer),
        }
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Inline(inline) => usize::from(inline.len),
            Repr::Host(host) => host.len,
        }
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes live in the host (the buffer is longer than
    /// [`INLINE_MAX`](Self::INLINE_MAX)) rather than inline in linear memory.
    pub fn is_host(&self) -> bool {
        matches!(self.0, Repr::Host(_))
    }

    /// Copies bytes from `offset` into `dst`, as many as both have room for, and returns how
    /// many: 0 when `offset` is the length.
    ///
    /// # Errors
    ///
    /// `InvalidInput` (code [`OutOfRange`](ErrorCode::OutOfRange)) when `offset` is past the
    /// end.
    pub fn read_at(&self, offset: usize, dst: &mut [u8]) -> io::Result<usize> {
        let context = || format!("cannot read at offset {offset} of a buffer of {} bytes", self.len());
        match &self.0 {
            Repr::Inline(inline) => {
                let src = inline.as_ref().get(offset..).ok_or_else(|| out_of_range(context()))?;
                let n = src.len().min(dst.len());
                dst[..n].copy_from_slice(&src[..n]);
                Ok(n)
            }
            Repr::Host(host) => {
                let offset = u32::try_from(offset).map_err(|_| out_of_range(context()))?;
                check(sys::buffer_read(host.handle, offset, dst), context).map(|n| n as usize)
            }
        }
    }

    /// Fills `dst` with the bytes from `offset`.
    fn read_exact_at(&self, offset: usize, dst: &mut [u8]) -> io::Result<()> {
        let mut done = 0;
        while done < dst.len() {
            match self.read_at(offset + done, &mut dst[done..])? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => done += n,
            }
        }
        Ok(())
    }

    /// Copies `src` into the buffer at `offset`. The buffer keeps its length: the whole of
    /// `src` must fit, or nothing is written.
    ///
    /// Through a host buffer, the write is visible in every [`slice`](Self::slice) that shares
    /// the bytes.
    ///
    /// # Errors
    ///
    /// `InvalidInput` (code [`OutOfRange`](ErrorCode::OutOfRange)) when `offset + src.len()`
    /// is past the end.
    pub fn write_at(&mut self, offset: usize, src: &[u8]) -> io::Result<()> {
        let len = self.len();
        let context = || format!("cannot write {} bytes at offset {offset} of a buffer of {len} bytes", src.len());
        match &mut self.0 {
            Repr::Inline(inline) => {
                let end = offset.checked_add(src.len()).ok_or_else(|| out_of_range(context()))?;
                let dst = inline.as_mut().get_mut(offset..end).ok_or_else(|| out_of_range(context()))?;
                dst.copy_from_slice(src);
                Ok(())
            }
            Repr::Host(host) => {
                let offset = u32::try_from(offset).map_err(|_| out_of_range(context()))?;
                if i32::try_from(src.len()).is_err() {
                    return Err(out_of_range(context()));
                }
                check(sys::buffer_write(host.handle, offset, src), context).map(drop)
            }
        }
    }

    /// A copy of the bytes in a new `Vec` in linear memory.
    ///
    /// # Errors
    ///
    /// `OutOfMemory` when linear memory has no room for the copy (this does not abort the
    /// guest), or a failed host call.
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(self.len()).map_err(|err| {
            io::Error::new(io::ErrorKind::OutOfMemory, format!("cannot copy a buffer of {} bytes: {err}", self.len()))
        })?;
        bytes.resize(self.len(), 0);
        self.read_exact_at(0, &mut bytes)?;
        Ok(bytes)
    }

    /// The bytes in `range`, as a new buffer.
    ///
    /// A slice of 64 bytes or less is an inline copy, like any small buffer. A longer slice
    /// (of a host buffer) is a new host handle that *shares* the bytes with this buffer: a
    /// write through one is visible through the other, and the bytes stay alive until both
    /// are dropped. The host counts the bytes once, however many slices share them.
    ///
    /// # Errors
    ///
    /// `InvalidInput` (code [`OutOfRange`](ErrorCode::OutOfRange)) unless
    /// `start <= end <= len`; `OutOfMemory` when the host is out of handles.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> io::Result<Self> {
        let (start, end) = (range.start_bound().cloned(), range.end_bound().cloned());
        let Some((start, end)) = bounds(start, end, self.len()) else {
            return Err(out_of_range(format!(
                "cannot slice {} of a buffer of {} bytes",
                DisplayRange(start, end),
                self.len()
            )));
        };
        if let Some(mut inline) = Inline::zeroed(end - start) {
            self.read_exact_at(start, inline.as_mut())?;
            return Ok(Self(Repr::Inline(inline)));
        }
        let Repr::Host(host) = &self.0 else { unreachable!("a slice over 64 bytes of an inline buffer") };
        let context = || format!("cannot slice {start}..{end} of a buffer of {} bytes", self.len());
        // Both fit in `u32`: a host buffer's length is an `i32`.
        let handle = check(sys::buffer_slice(host.handle, start as u32, end as u32), context)?;
        Ok(Self(Repr::Host(HostBuffer::new(handle, end - start))))
    }

    /// A new buffer holding the bytes of `parts` one after another.
    ///
    /// A result of 64 bytes or less is built inline without calling the host. Otherwise the
    /// host builds it with one `buffer_concat` call for up to 1024 (non-empty) parts; more take
    /// a call per 1023 further parts, each starting with the previous result. Inline parts are
    /// passed as bytes of linear memory, so small parts never become host buffers of their own,
    /// and host parts are copied host-side. The result shares no bytes with the parts.
    ///
    /// # Errors
    ///
    /// `OutOfMemory` (code [`NoMemory`](ErrorCode::NoMemory)) when the sandbox's memory limit
    /// is reached; `InvalidInput` for a result over 1 GiB.
    pub fn concat(parts: &[&Buffer]) -> io::Result<Self> {
        concat_with(parts, |records, len| {
            let context = || format!("cannot concatenate {} parts of {len} bytes in all", records.len());
            let handle = check(sys::buffer_concat(records), context)?;
            Ok(HostBuffer::new(handle, len))
        })
    }

    /// The buffer as a part of `buffer_concat`: its bytes in linear memory, or its handle.
    pub(crate) fn as_part(&self) -> ConcatPart<'_> {
        match &self.0 {
            Repr::Inline(inline) => ConcatPart::Linear(inline.as_ref()),
            Repr::Host(host) => ConcatPart::Host(host.handle),
        }
    }
}

/// [`Buffer::concat`], with the host call `host_concat(records, len)` (the parts' records, as
/// [`ConcatPart::encode`] makes them; it returns a buffer of `len` bytes) as a parameter.
fn concat_with(
    parts: &[&Buffer],
    mut host_concat: impl FnMut(&[[i32; 3]], usize) -> io::Result<HostBuffer>,
) -> io::Result<Buffer> {
    let Some(total) = parts.iter().try_fold(0_usize, |sum, part| sum.checked_add(part.len())) else {
        let context = format!("cannot concatenate {} parts: their length overflows", parts.len());
        return Err(WrtError::new(ErrorCode::InvalidArgument, context).into());
    };
    if let Some(mut inline) = Inline::zeroed(total) {
        let mut at = 0;
        for part in parts {
            part.read_exact_at(0, &mut inline.as_mut()[at..at + part.len()])?;
            at += part.len();
        }
        return Ok(Buffer(Repr::Inline(inline)));
    }
    let mut parts = parts.iter().copied().filter(|part| !part.is_empty()).peekable();
    // The records of a call of up to `STACK_PARTS` parts are built on the stack, so a
    // concatenation allocates nothing in linear memory; more spill into `heap`.
    let mut stack = [[0_i32; 3]; STACK_PARTS];
    let mut heap = Vec::new();
    let mut done: Option<HostBuffer> = None;
    loop {
        // Past 1024 parts, each call starts with the result of the previous one.
        let room = MAX_CONCAT_PARTS - usize::from(done.is_some());
        let previous = done.as_ref().map(|done| (ConcatPart::Host(done.handle), done.len));
        let now = parts.by_ref().take(room).map(|part| (part.as_part(), part.len()));
        let (mut count, mut len) = (0, 0);
        heap.clear();
        for (part, part_len) in previous.into_iter().chain(now) {
            match count.cmp(&STACK_PARTS) {
                std::cmp::Ordering::Less => stack[count] = part.encode(),
                std::cmp::Ordering::Equal => {
                    heap.extend_from_slice(&stack);
                    heap.push(part.encode());
                }
                std::cmp::Ordering::Greater => heap.push(part.encode()),
            }
            count += 1;
            len += part_len;
        }
        let records = if count <= STACK_PARTS { &stack[..count] } else { &heap[..] };
        done = Some(host_concat(records, len)?);
        if parts.peek().is_none() {
            break;
        }
    }
    let done = done.expect("the loop ran at least once");
    Ok(Buffer(Repr::Host(done)))
}

/// How many parts' records a `buffer_concat` call builds on the stack (192 bytes).
const STACK_PARTS: usize = 16;

/// `start..end` from range bounds, if it lies within `0..=len`.
fn bounds(start: Bound<usize>, end: Bound<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match start {
        Bound::Included(start) => start,
        Bound::Excluded(start) => start.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match end {
        Bound::Included(end) => end.checked_add(1)?,
        Bound::Excluded(end) => end,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

/// Range bounds in Rust's notation, for messages.
struct DisplayRange(Bound<usize>, Bound<usize>);

impl fmt::Display for DisplayRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Bound::Included(start) => write!(f, "{start}")?,
            Bound::Excluded(start) => write!(f, "(excluded {start})")?,
            Bound::Unbounded => {}
        }
        match self.1 {
            Bound::Included(end) => write!(f, "..={end}"),
            Bound::Excluded(end) => write!(f, "..{end}"),
            Bound::Unbounded => f.write_str(".."),
        }
    }
}

/// The error for an offset or range outside a buffer, found without asking the host.
fn out_of_range(context: String) -> io::Error {
    WrtError::new(ErrorCode::OutOfRange, context).into()
}

impl Default for Buffer {
    fn default() -> Self {
        Self::new()
    }
}

impl TryFrom<&[u8]> for Buffer {
    type Error = io::Error;

    /// As [`Buffer::from_slice`].
    fn try_from(bytes: &[u8]) -> io::Result<Self> {
        Self::from_slice(bytes)
    }
}

impl TryFrom<Vec<u8>> for Buffer {
    type Error = io::Error;

    /// As [`Buffer::from_slice`] (the host copies the bytes; the vector is dropped).
    fn try_from(bytes: Vec<u8>) -> io::Result<Self> {
        Self::from_slice(&bytes)
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Inline(inline) => f.debug_struct("Buffer").field("inline", &inline.as_ref()).finish(),
            Repr::Host(host) => f.debug_struct("Buffer").field("handle", &host.handle).field("len", &host.len).finish(),
        }
    }
}

#[cfg(test)]
mod tests;

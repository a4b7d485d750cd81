//! The spawn request of `spawn` and `run` (docs/abi.md, "The spawn request"): its encoder and
//! its decoder.
//!
//! ```text
//! version u32 = 1 | program string | argc u32 | args | envc u32 | (name, value) pairs
//! | cwd string | stdin u8 | stdout u8 | stderr u8 | flags u8 = 0 | timeout_ms u64 | output_limit u64
//! [| stdin_child u32, when stdin is 3] [| pty_rows u16 | pty_cols u16, when a stream is 5]
//! ```
//!
//! All integers little-endian; a `string` is a `u32` length and that many bytes. The decoder
//! treats every byte as hostile: it never allocates more than the request's own length, never
//! panics, and rejects anything the format does not allow. The [`Encoder`] writes strings as
//! the caller holds them (the host, not the encoder, rejects bytes that are not UTF-8 and NUL
//! bytes, so a guest sees the ABI's own codes).

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;

use crate::code::ErrorCode;

/// The largest request accepted, in bytes.
pub const MAX_REQUEST_LEN: usize = 1 << 20;

/// The only request version.
pub const VERSION: u32 = 1;

/// How a standard stream of the child is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StdioMode {
    /// `/dev/null` (byte 0).
    Null,
    /// A pipe to the guest (byte 1).
    Piped,
    /// The sandbox's own stream (byte 2).
    Inherit,
    /// Stdin only: the piped stdout of another child of the guest, whose handle follows the
    /// request's output limit (byte 3). The two children are connected by that pipe; the
    /// source's stdout is consumed (a pipeline).
    ChildStdout,
    /// Stderr only: the same as the child's stdout, `2>&1` (byte 4).
    Stdout,
    /// A pseudo-terminal, shared by every stream given this mode; its initial size follows the
    /// request (byte 5).
    Pty,
}

impl StdioMode {
    /// The mode's byte in a request.
    pub const fn raw(self) -> u8 {
        match self {
            Self::Null => 0,
            Self::Piped => 1,
            Self::Inherit => 2,
            Self::ChildStdout => 3,
            Self::Stdout => 4,
            Self::Pty => 5,
        }
    }

    /// The mode of byte `raw`, or `None` if it names none.
    pub const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            0 => Some(Self::Null),
            1 => Some(Self::Piped),
            2 => Some(Self::Inherit),
            3 => Some(Self::ChildStdout),
            4 => Some(Self::Stdout),
            5 => Some(Self::Pty),
            _ => None,
        }
    }

    /// Whether the mode may be given for stream `index` (0 stdin, 1 stdout, 2 stderr):
    /// [`ChildStdout`](Self::ChildStdout) only for stdin, [`Stdout`](Self::Stdout) only for
    /// stderr, the others for any.
    pub const fn fits(self, index: usize) -> bool {
        match self {
            Self::ChildStdout => index == 0,
            Self::Stdout => index == 2,
            Self::Null | Self::Piped | Self::Inherit | Self::Pty => true,
        }
    }
}

/// A decoded spawn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// A name or an absolute path.
    pub program: String,
    /// The arguments after `argv[0]`.
    pub args: Vec<String>,
    /// Variables set for the child.
    pub env: Vec<(String, String)>,
    /// The working directory; `None` for the policy's default.
    pub cwd: Option<String>,
    /// stdin, stdout, stderr.
    pub stdio: [StdioMode; 3],
    /// The child handle whose stdout becomes stdin: `Some` exactly when stdin is
    /// [`StdioMode::ChildStdout`] (unchecked here: the host looks it up).
    pub stdin_child: Option<u32>,
    /// The pseudo-terminal's initial rows and columns (0 for the host's default): `Some`
    /// exactly when a stream is [`StdioMode::Pty`].
    pub pty_size: Option<(u16, u16)>,
    /// Milliseconds; `None` for the policy's timeout.
    pub timeout_ms: Option<u64>,
    /// Bytes per output stream; `None` for the policy's limit.
    pub output_limit: Option<u64>,
}

/// Decodes a request.
///
/// # Errors
///
/// [`ErrorCode::InvalidArgument`] for any malformed request, [`ErrorCode::BadUtf8`] for a
/// string that is not UTF-8.
pub fn decode(bytes: &[u8]) -> Result<SpawnRequest, ErrorCode> {
    if bytes.len() > MAX_REQUEST_LEN {
        return Err(ErrorCode::InvalidArgument);
    }
    let mut r = Reader { bytes };
    if r.u32()? != VERSION {
        return Err(ErrorCode::InvalidArgument);
    }
    let program = r.string()?;
    if program.is_empty() {
        return Err(ErrorCode::InvalidArgument);
    }
    let argc = r.count(4)?;
    let mut args = Vec::with_capacity(argc);
    for _ in 0..argc {
        args.push(r.string()?);
    }
    let envc = r.count(8)?;
    let mut env = Vec::with_capacity(envc);
    for _ in 0..envc {
        let name = r.string()?;
        let value = r.string()?;
        env.push((name, value));
    }
    let cwd = Some(r.string()?);
    let mut stdio = [StdioMode::Null; 3];
    for (index, mode) in stdio.iter_mut().enumerate() {
        *mode = StdioMode::from_raw(r.u8()?).filter(|m| m.fits(index)).ok_or(ErrorCode::InvalidArgument)?;
    }
    if r.u8()? != 0 {
        return Err(ErrorCode::InvalidArgument);
    }
    let timeout_ms = Some(r.u64()?);
    let output_limit = Some(r.u64()?);
    let stdin_child = if stdio[0] == StdioMode::ChildStdout { Some(r.u32()?) } else { None };
    let pty_size = if stdio.contains(&StdioMode::Pty) { Some((r.u16()?, r.u16()?)) } else { None };
    if !r.bytes.is_empty() {
        return Err(ErrorCode::InvalidArgument);
    }
    // The reader has refused what the rules refuse, at the first byte at fault (which decides
    // between `BadUtf8` and `InvalidArgument`); `check` puts the request in its form.
    check(SpawnRequest { program, args, env, cwd, stdio, stdin_child, pty_size, timeout_ms, output_limit })
}

/// A request built in memory, checked by the rules [`decode`] applies to bytes, and in the form
/// `decode` returns: the same request, or the code `decode` gives its encoding ([`encode`]). A
/// host that takes requests in another form (the component bindings) checks them here, so that
/// both forms refuse the same requests with the same codes.
///
/// The rules: the encoding is at most [`MAX_REQUEST_LEN`] bytes; the program is not empty; no
/// string holds a NUL byte; each stdio mode [`fits`](StdioMode::fits) its stream. The form: an
/// empty working directory, a zero timeout and a zero output limit are `None` (the policy's);
/// `stdin_child` is `Some` exactly when stdin is [`StdioMode::ChildStdout`] (0 if it was
/// missing), and `pty_size` exactly when a stream is [`StdioMode::Pty`] (0 × 0 if missing).
///
/// # Errors
///
/// [`ErrorCode::InvalidArgument`] for a request that breaks a rule.
pub fn check(mut request: SpawnRequest) -> Result<SpawnRequest, ErrorCode> {
    if encoded_len(&request) > MAX_REQUEST_LEN || request.program.is_empty() {
        return Err(ErrorCode::InvalidArgument);
    }
    let env = request.env.iter().flat_map(|(name, value)| [name, value]);
    let nul =
        [&request.program].into_iter().chain(&request.args).chain(env).chain(&request.cwd).any(|s| s.contains('\0'));
    if nul || request.stdio.iter().enumerate().any(|(index, mode)| !mode.fits(index)) {
        return Err(ErrorCode::InvalidArgument);
    }
    request.cwd = request.cwd.filter(|cwd| !cwd.is_empty());
    request.timeout_ms = request.timeout_ms.filter(|&ms| ms != 0);
    request.output_limit = request.output_limit.filter(|&limit| limit != 0);
    request.stdin_child = (request.stdio[0] == StdioMode::ChildStdout).then(|| request.stdin_child.unwrap_or(0));
    request.pty_size = request.stdio.contains(&StdioMode::Pty).then(|| request.pty_size.unwrap_or((0, 0)));
    Ok(request)
}

/// The length of `request`'s encoding ([`encode`]), computed without encoding it.
pub fn encoded_len(request: &SpawnRequest) -> usize {
    let string = |s: &str| s.len().saturating_add(4);
    let strings = |items: &mut dyn Iterator<Item = usize>| items.fold(0usize, usize::saturating_add);
    let args = strings(&mut request.args.iter().map(|arg| string(arg)));
    let env = strings(&mut request.env.iter().map(|(name, value)| string(name).saturating_add(string(value))));
    let cwd = string(request.cwd.as_deref().unwrap_or(""));
    // version, argc, envc; stdio modes and flags; timeout; output limit.
    let fixed = 4 + 4 + 4 + 4 + 8 + 8;
    let tail = if request.stdio[0] == StdioMode::ChildStdout { 4 } else { 0 }
        + if request.stdio.contains(&StdioMode::Pty) { 4 } else { 0 };
    strings(&mut [fixed, string(&request.program), args, env, cwd, tail].into_iter())
}

/// The program's bytes of a request that may be malformed, as far as they can be read (empty
/// if not even its length can): for the audit record of a request [`decode`] rejects.
pub fn program_bytes(bytes: &[u8]) -> &[u8] {
    let Some((_, rest)) = bytes.split_first_chunk::<4>() else { return &[] };
    let Some((len, rest)) = rest.split_first_chunk::<4>() else { return &[] };
    let len = u32::from_le_bytes(*len) as usize;
    &rest[..len.min(rest.len())]
}

/// Encodes a request (the inverse of [`decode`]), for hosts and tests that build requests.
pub fn encode(request: &SpawnRequest) -> Vec<u8> {
    let fits = "a request held in memory has strings and counts that fit in 32 bits on 32-bit targets";
    let mut out = Encoder::new(request.program.as_bytes(), 0).expect(fits);
    out.count(request.args.len()).expect(fits);
    for arg in &request.args {
        out.string(arg.as_bytes()).expect(fits);
    }
    out.count(request.env.len()).expect(fits);
    for (name, value) in &request.env {
        out.string(name.as_bytes()).expect(fits);
        out.string(value.as_bytes()).expect(fits);
    }
    out.string(request.cwd.as_deref().unwrap_or("").as_bytes()).expect(fits);
    let tail = Tail { stdin_child: request.stdin_child, pty_size: request.pty_size };
    out.finish(request.stdio, tail, request.timeout_ms.unwrap_or(0), request.output_limit.unwrap_or(0))
}

/// A string or count of a request that does not fit in the format's 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    /// `"string"` or `"count"`.
    pub what: &'static str,
}

/// Writes a request field by field, in the format's order: [`new`](Self::new) (version and
/// program), [`count`](Self::count) and that many [`string`](Self::string)s for the arguments,
/// a count and name/value strings for the environment, the working directory's string, then
/// [`finish`](Self::finish).
#[derive(Debug)]
pub struct Encoder(Vec<u8>);

impl Encoder {
    /// Starts a request for `program`, with room for `capacity` bytes.
    ///
    /// # Errors
    ///
    /// [`TooLong`] if `program` is longer than `u32::MAX` bytes.
    pub fn new(program: &[u8], capacity: usize) -> Result<Self, TooLong> {
        let mut out = Self(Vec::with_capacity(capacity));
        out.u32(VERSION);
        out.string(program)?;
        Ok(out)
    }

    fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    /// Writes a count of arguments or variables.
    ///
    /// # Errors
    ///
    /// [`TooLong`] if `count` is larger than `u32::MAX`.
    pub fn count(&mut self, count: usize) -> Result<(), TooLong> {
        let count = u32::try_from(count).map_err(|_| TooLong { what: "count" })?;
        self.u32(count);
        Ok(())
    }

    /// Writes a string: its length and its bytes.
    ///
    /// # Errors
    ///
    /// [`TooLong`] if `bytes` is longer than `u32::MAX` bytes.
    pub fn string(&mut self, bytes: &[u8]) -> Result<(), TooLong> {
        let len = u32::try_from(bytes.len()).map_err(|_| TooLong { what: "string" })?;
        self.u32(len);
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes the stdio modes, the flags byte, the timeout and the output limit (0 for the
    /// policy's), then the parts of `tail` the modes call for: when stdin is
    /// [`StdioMode::ChildStdout`], the handle (0, never a handle, if `None`); when a stream is
    /// [`StdioMode::Pty`], the size (0 × 0, the host's default, if `None`). Returns the
    /// request's bytes.
    pub fn finish(mut self, stdio: [StdioMode; 3], tail: Tail, timeout_ms: u64, output_limit: u64) -> Vec<u8> {
        self.0.extend_from_slice(&[stdio[0].raw(), stdio[1].raw(), stdio[2].raw(), 0]);
        self.0.extend_from_slice(&timeout_ms.to_le_bytes());
        self.0.extend_from_slice(&output_limit.to_le_bytes());
        if stdio[0] == StdioMode::ChildStdout {
            self.u32(tail.stdin_child.unwrap_or(0));
        }
        if stdio.contains(&StdioMode::Pty) {
            let (rows, cols) = tail.pty_size.unwrap_or((0, 0));
            self.0.extend_from_slice(&rows.to_le_bytes());
            self.0.extend_from_slice(&cols.to_le_bytes());
        }
        self.0
    }
}

/// The optional fields after a request's output limit, each written only when a stdio mode
/// calls for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tail {
    /// The child whose stdout is stdin (stdin mode [`StdioMode::ChildStdout`]).
    pub stdin_child: Option<u32>,
    /// The pseudo-terminal's rows and columns (a stream of mode [`StdioMode::Pty`]).
    pub pty_size: Option<(u16, u16)>,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], ErrorCode> {
        let (head, rest) = self.bytes.split_first_chunk::<N>().ok_or(ErrorCode::InvalidArgument)?;
        self.bytes = rest;
        Ok(*head)
    }

    fn u8(&mut self) -> Result<u8, ErrorCode> {
        Ok(self.take::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, ErrorCode> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    fn u32(&mut self) -> Result<u32, ErrorCode> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, ErrorCode> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// A count of items that take at least `min_item_len` bytes each: larger than what the
    /// remaining bytes could hold is malformed (and would otherwise size an allocation).
    fn count(&mut self, min_item_len: usize) -> Result<usize, ErrorCode> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_len) > self.bytes.len() {
            return Err(ErrorCode::InvalidArgument);
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, ErrorCode> {
        let len = self.u32()? as usize;
        if len > self.bytes.len() {
            return Err(ErrorCode::InvalidArgument);
        }
        let (s, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        let s = core::str::from_utf8(s).map_err(|_| ErrorCode::BadUtf8)?;
        if s.contains('\0') {
            return Err(ErrorCode::InvalidArgument);
        }
        Ok(s.to_owned())
    }
}

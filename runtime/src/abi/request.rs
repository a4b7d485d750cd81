//! Decoding the spawn request of the guest ABI (docs/abi.md, "The spawn request"). The decoder
//! treats every byte as hostile: it never allocates more than the request's own length, never
//! panics, and rejects anything the format does not allow.

use super::code::ErrorCode;

/// The largest request accepted, in bytes.
pub const MAX_REQUEST_LEN: usize = 1 << 20;

/// The only request version.
const VERSION: u32 = 1;

/// How a standard stream of the child is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioMode {
    /// `/dev/null`.
    Null,
    /// A pipe to the guest.
    Piped,
    /// The sandbox's own stream.
    Inherit,
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
    let cwd = Some(r.string()?).filter(|c| !c.is_empty());
    let mut stdio = [StdioMode::Null; 3];
    for mode in &mut stdio {
        *mode = match r.u8()? {
            0 => StdioMode::Null,
            1 => StdioMode::Piped,
            2 => StdioMode::Inherit,
            _ => return Err(ErrorCode::InvalidArgument),
        };
    }
    if r.u8()? != 0 {
        return Err(ErrorCode::InvalidArgument);
    }
    let timeout_ms = Some(r.u64()?).filter(|&t| t != 0);
    let output_limit = Some(r.u64()?).filter(|&l| l != 0);
    if !r.bytes.is_empty() {
        return Err(ErrorCode::InvalidArgument);
    }
    Ok(SpawnRequest { program, args, env, cwd, stdio, timeout_ms, output_limit })
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
    let mut out = Vec::new();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(&VERSION.to_le_bytes());
    string(&mut out, &request.program);
    out.extend_from_slice(&(request.args.len() as u32).to_le_bytes());
    for arg in &request.args {
        string(&mut out, arg);
    }
    out.extend_from_slice(&(request.env.len() as u32).to_le_bytes());
    for (name, value) in &request.env {
        string(&mut out, name);
        string(&mut out, value);
    }
    string(&mut out, request.cwd.as_deref().unwrap_or(""));
    for mode in request.stdio {
        out.push(match mode {
            StdioMode::Null => 0,
            StdioMode::Piped => 1,
            StdioMode::Inherit => 2,
        });
    }
    out.push(0);
    out.extend_from_slice(&request.timeout_ms.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&request.output_limit.unwrap_or(0).to_le_bytes());
    out
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
        let s = std::str::from_utf8(s).map_err(|_| ErrorCode::BadUtf8)?;
        if s.contains('\0') {
            return Err(ErrorCode::InvalidArgument);
        }
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests;

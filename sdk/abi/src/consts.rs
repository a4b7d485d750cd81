//! Flags, stream numbers, interest bits and limits of the guest ABI (docs/abi.md).

/// `read`, `write`, `read_buffer` and `write_buffer` flag: return `-WOULD_BLOCK` instead of
/// waiting. No other flag bit is defined.
pub const NONBLOCKING: i32 = 1;

/// The stream number of a child's stdout (`read`, `read_buffer`).
pub const STREAM_STDOUT: i32 = 1;
/// The stream number of a child's stderr (`read`, `read_buffer`).
pub const STREAM_STDERR: i32 = 2;

/// `poll` interest bit: stdin accepts a write.
pub const INTEREST_STDIN: u32 = 1;
/// `poll` interest bit: stdout has bytes or end of file.
pub const INTEREST_STDOUT: u32 = 2;
/// `poll` interest bit: stderr has bytes or end of file.
pub const INTEREST_STDERR: u32 = 4;
/// `poll` interest bit: the child exited.
pub const INTEREST_EXITED: u32 = 8;
/// Every `poll` interest bit.
pub const INTEREST_ALL: u32 = INTEREST_STDIN | INTEREST_STDOUT | INTEREST_STDERR | INTEREST_EXITED;

/// The most child handles live at once in one sandbox.
pub const MAX_LIVE_HANDLES: usize = 1024;
/// The most buffer handles live at once in one sandbox.
pub const MAX_LIVE_BUFFERS: usize = 1 << 16;
/// The first buffer handle: child handles are `1..FIRST_BUFFER_HANDLE`, buffer handles
/// `FIRST_BUFFER_HANDLE..i32::MAX`.
pub const FIRST_BUFFER_HANDLE: i32 = 0x4000_0000;
/// The most handles `wait_any` takes.
pub const MAX_WAIT_ANY: i32 = 1024;
/// The most parts `buffer_concat` takes.
pub const MAX_CONCAT_PARTS: u32 = 1024;
/// The size of one part record of `buffer_concat`: `handle u32 | ptr u32 | len u32`.
pub const CONCAT_PART_LEN: u32 = 12;
/// A guest convention, not checked by the host: payloads of at most this many bytes stay in
/// linear memory rather than in a host buffer (the Rust SDK's `Buffer`, the AssemblyScript
/// `HostBuffer`).
pub const INLINE_MAX: usize = 64;
/// The largest `max_len` of `read_buffer` (16 MiB).
pub const MAX_READ_BUFFER: u32 = 16 << 20;

//! The spawn request of the guest ABI (docs/abi.md, "The spawn request"): defined, encoded and
//! decoded by `wrt-abi`; the host functions decode it with [`decode`], which treats every byte
//! as hostile.

pub use wrt_abi::request::{MAX_REQUEST_LEN, SpawnRequest, StdioMode, decode, encode, program_bytes};

#[cfg(test)]
use wrt_abi::ErrorCode;

#[cfg(test)]
mod tests;

//! Tests of the spawn request's decoder (docs/abi.md, "The spawn request"). The request is
//! defined, encoded and decoded by `wrt-abi`, whose own workspace builds for wasm32; the host
//! functions decode every request with `wrt_abi::request::decode`, so the host's tests hold
//! that decoder to treating every byte as hostile.

pub(super) use wrt_abi::ErrorCode;
pub(super) use wrt_abi::request::{MAX_REQUEST_LEN, SpawnRequest, StdioMode, decode, encode, program_bytes};

mod tests;

//! The guest ABI of wrt, import module `wrt_v1` (docs/abi.md), defined once: the runtime
//! (`wrt-runtime`) implements it and the guest SDK (`wrt-guest`) calls it, both through this
//! crate.
//!
//! It holds the error codes ([`ErrorCode`]), the spawn request's encoding and its hostile-input
//! decoder ([`request`]), the status record's layout ([`status`]), and the flags, stream
//! numbers, interest bits and limits ([`consts`]). It is `no_std` (with `alloc`), so it builds
//! for wasm32 guests and the host alike; the `std` feature adds the `std::io` mapping guests
//! use (`ErrorCode::kind`, `ErrorCode::of`, `WrtError`).
//!
//! # Examples
//!
//! ```
//! use wrt_abi::ErrorCode;
//! use wrt_abi::request::{self, SpawnRequest, StdioMode};
//!
//! let req = SpawnRequest {
//!     program: "ls".into(),
//!     args: vec!["-l".into()],
//!     env: Vec::new(),
//!     cwd: None,
//!     stdio: [StdioMode::Null, StdioMode::Piped, StdioMode::Inherit],
//!     stdin_child: None,
//!     pty_size: None,
//!     timeout_ms: None,
//!     output_limit: None,
//! };
//! assert_eq!(request::decode(&request::encode(&req)), Ok(req));
//! assert_eq!(request::decode(b"junk"), Err(ErrorCode::InvalidArgument));
//! assert_eq!(ErrorCode::from_return(-1), Some(ErrorCode::Denied));
//! ```
#![no_std]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod code;
pub mod consts;
#[cfg(feature = "std")]
mod io;
pub mod request;
pub mod status;

pub use crate::code::ErrorCode;
#[cfg(feature = "std")]
pub use crate::io::WrtError;

//! Text utilities that wrt's crates share: sizes and durations as people write them
//! ([`parse_size`], [`parse_bytes`], [`parse_duration`]), names that a guest or a file chose
//! as they may be printed ([`Shown`]: escaped and capped), and an error with its causes on one
//! line ([`error_chain`]).
//!
//! It depends on no other crate of wrt, so the CLI, the runtime, the spawner and the shim all
//! read a flag, quote a name and print an error the same way.
//!
//! # Examples
//!
//! ```
//! use wrt_text::{Shown, error_chain, parse_size};
//!
//! assert_eq!(parse_size("512MiB")?, 512 << 20);
//! let err = parse_size("1\u{1b}[2JGiB").unwrap_err();
//! assert_eq!(error_chain(&err), r"invalid size `1\u{1b}[2JGiB`: unknown unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
//! assert_eq!(Shown::new("two\nlines").to_string(), r"two\nlines");
//! # Ok::<(), wrt_text::UnitError>(())
//! ```
//!
//! # Platform-specific behavior
//!
//! Unix only: [`Shown`] shows the bytes of an `OsStr`.
#![cfg(unix)]
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod error_chain;
mod escape;
mod units;

#[cfg(test)]
mod import_graph;

pub use self::error_chain::error_chain;
pub use self::escape::{SHOWN_BYTES, Shown, json_escaped};
pub use self::units::{UnitError, parse_bytes, parse_duration, parse_size};

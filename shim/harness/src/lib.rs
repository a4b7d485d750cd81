//! The shim's test harness: a containerd of a test's (or a bench's) own, driven with `ctr`
//! ([`containerd`]) or as a kubelet drives it, through the CRI ([`cri`]). Each is given the
//! shim's binary (a test's `env!("CARGO_BIN_EXE_containerd-shim-wrt-v1")`), whose directory goes
//! on containerd's `PATH`.
//!
//! Where containerd cannot start (not installed, not root), `start` says so loudly and returns
//! `None`, except under CI (`CI` set), where a skip is a failure (one check for both harnesses,
//! in `preconditions`).

pub mod containerd;
pub mod cri;
#[cfg(test)]
mod import_graph;
mod preconditions;

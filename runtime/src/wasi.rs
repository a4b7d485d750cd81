//! WASI for guests: the context both kinds of guest get ([`ctx`]: preopens, stdio,
//! environment), and for core modules the wrappers of WASI preview 1's own functions that keep
//! what one call may make the host do within wrt's limits ([`limits`], [`direct_writes`], [`exit`]) and
//! that list a directory once per pass ([`readdir`]),
//! all reaching WASI's own through [`original`], and the wrappers that stop blocking calls at
//! the guest's deadline ([`blocking_calls`]).

pub(crate) mod blocking_calls;
pub(crate) mod ctx;
pub(crate) mod direct_writes;
pub(crate) mod exit;
pub(crate) mod limits;
pub(crate) mod original;
pub(crate) mod readdir;

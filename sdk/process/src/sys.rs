//! The `wrt:process` imports (world `wrt:process/imports` of the repository's `wit/`), generated
//! by `wit-bindgen`. wasi:io's streams, pollables and errors are the `wasip2` crate's, so the
//! streams of a child are ordinary `wasip2` streams.

wit_bindgen::generate!({
    path: "../../wit",
    world: "wrt:process/imports",
    with: {
        "wasi:io/error@0.2.12": wasip2::io::error,
        "wasi:io/poll@0.2.12": wasip2::io::poll,
        "wasi:io/streams@0.2.12": wasip2::io::streams,
    },
});

pub(crate) use self::wrt::process::buffers::Buffer;
pub(crate) use self::wrt::process::process::{Child, Command, OutputSource, Status, Stdio, Termination};
pub(crate) use self::wrt::process::types::{Error, ErrorCode};

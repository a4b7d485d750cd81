//! Exiting with a code: [`exit`].

use std::io::Write;

/// Ends the component with exit code `code`, as `wasi:cli/exit`'s `exit-with-code` does: the
/// code `wrt run` exits with, like a child's. Only the low 8 bits count (`256` is `0`), as for a
/// host process.
///
/// Use it instead of [`std::process::exit`]: on `wasm32-wasip2` (Rust 1.95) `std` exits with
/// `wasi:cli/exit`'s `exit`, which carries only success or failure, so every non-zero code
/// becomes 1. Stdout and stderr are flushed first; nothing is dropped or unwound.
pub fn exit(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(target_arch = "wasm32")]
    wasip2::cli::exit::exit_with_code(code as u8);
    // Not reached under wrt; elsewhere (a host build, or a runtime without exit-with-code) the
    // closest `std` can do.
    std::process::exit(code)
}

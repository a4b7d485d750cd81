//! A WASI 0.3 command that writes `hello` to stdout through WASI 0.3's stream and returns: the
//! 0.3 twin of `component_hello`, importing nothing of wrt's, so that `wasmtime run` runs it too.

wasip3::cli::command::export!(Hello);

struct Hello;

impl wasip3::exports::cli::run::Guest for Hello {
    async fn run() -> Result<(), ()> {
        let (mut tx, rx) = wasip3::wit_stream::new();
        let done = wasip3::cli::stdout::write_via_stream(rx);
        let left = tx.write_all(b"hello\n".to_vec()).await;
        drop(tx);
        let _ = done.await;
        if left.is_empty() { Ok(()) } else { Err(()) }
    }
}

/// The WASI 0.2 entry point Rust's std exports for every bin: a runtime that runs WASI 0.3
/// calls the `run` above instead.
fn main() {
    std::process::exit(3);
}

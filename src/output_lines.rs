//! wrt's own lines on stderr (`say!`) and stdout (`out!`), written so that a closed stream
//! changes nothing else: `eprintln!` and `println!` panic when a write fails (a closed pipe
//! fails with `EPIPE`, since Rust ignores `SIGPIPE`), which turned wrt's documented exit code
//! into a panic's 101.

/// Writes one line to stderr, like `eprintln!`; a failed write is dropped, as there is nowhere
/// left to report it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Writes one line to stdout, like `println!`; a failed write is dropped (a reader that went
/// away wants nothing more).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

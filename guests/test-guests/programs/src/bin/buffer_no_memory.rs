//! Host buffers against the sandbox's memory limit (`wrt run --max-memory`).
//!
//! Without arguments it allocates 1 MiB buffers and keeps every one until an allocation fails:
//! it prints `no memory after N MiB` and exits 0 when the error is `OutOfMemory` (the host's
//! NO_MEMORY), or prints the error and exits 1 for any other failure.
//!
//! With `handles` it keeps 65-byte buffers (the smallest host buffers) instead, until the host
//! runs out of handles: it prints `no handles after N buffers` and exits 0 when that error is
//! `OutOfMemory`, 1 otherwise.
//!
//! With `garbage [TOTAL_MIB]` (default 320, five times a 64 MiB limit) it allocates `TOTAL_MIB`
//! 1 MiB buffers and keeps only every 10th: 90 % garbage. A Rust guest releases a buffer when
//! it is dropped, so the garbage never piles up in the host; it runs to the end and prints
//! `done: TOTAL_MIB MiB allocated, K MiB live`.
use std::io::ErrorKind;
use std::process::ExitCode;

use wrt_guest::{Buffer, ErrorCode};

const MIB: usize = 1 << 20;

/// A new 1 MiB buffer with a few bytes written, so it is used rather than only reserved.
fn buffer(i: usize) -> std::io::Result<Buffer> {
    let mut buffer = Buffer::zeroed(MIB)?;
    buffer.write_at(0, &(i as u64).to_le_bytes())?;
    Ok(buffer)
}

fn all_live() -> ExitCode {
    let mut held = Vec::new();
    loop {
        match buffer(held.len()) {
            Ok(buffer) => held.push(buffer),
            Err(err) if err.kind() == ErrorKind::OutOfMemory && ErrorCode::of(&err) == Some(ErrorCode::NoMemory) => {
                println!("no memory after {} MiB", held.len());
                eprintln!("{err}");
                return ExitCode::SUCCESS;
            }
            Err(err) => {
                println!("after {} MiB: {err} ({:?}, {:?})", held.len(), err.kind(), ErrorCode::of(&err));
                return ExitCode::FAILURE;
            }
        }
    }
}

fn handles() -> ExitCode {
    let mut held = Vec::new();
    loop {
        match Buffer::zeroed(Buffer::INLINE_MAX + 1) {
            Ok(buffer) => held.push(buffer),
            Err(err) if err.kind() == ErrorKind::OutOfMemory && ErrorCode::of(&err) == Some(ErrorCode::NoMemory) => {
                println!("no handles after {} buffers", held.len());
                eprintln!("{err}");
                return ExitCode::SUCCESS;
            }
            Err(err) => {
                println!("after {} buffers: {err} ({:?}, {:?})", held.len(), err.kind(), ErrorCode::of(&err));
                return ExitCode::FAILURE;
            }
        }
    }
}

fn mostly_garbage(total: usize) -> ExitCode {
    let mut kept = Vec::new();
    for i in 0..total {
        match buffer(i) {
            Ok(buffer) if i % 10 == 0 => kept.push(buffer),
            Ok(_garbage) => {}
            Err(err) => {
                println!("after {i} MiB allocated, {} MiB live: {err} ({:?})", kept.len(), err.kind());
                return ExitCode::FAILURE;
            }
        }
    }
    println!("done: {total} MiB allocated, {} MiB live", kept.len());
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => all_live(),
        Some("handles") => handles(),
        Some("garbage") => mostly_garbage(args.get(1).map_or(320, |n| n.parse().expect("a count of MiB"))),
        Some(other) => {
            println!("unknown mode `{other}` (expected nothing, `handles` or `garbage [TOTAL_MIB]`)");
            ExitCode::FAILURE
        }
    }
}

//! The program of `wrt bench real`: a compact real-world-shaped program, std only, in one crate
//! that three builds depend on: the core module `bench_tree_search` for wasm32-wasip1
//! (`programs/`), the component `component_bench_tree_search` for wasm32-wasip2
//! (`components/`), each a `main` that calls [`main`], and `wrt-bench`, whose native run of its
//! functions in the bench's own process is the workload's floor.
//!
//! - `tree-search DIR NEEDLE` walks DIR recursively, reads every file, counts the lines that
//!   contain NEEDLE (bytes, not empty) and prints `files=F bytes=B matches=M`.
//! - `hexdump FILE` writes a hex dump of FILE in the layout of `hexdump -C` (offset, 16 bytes
//!   in hex, the printable ones as ASCII; repeated lines are not folded into `*`) through a
//!   64 KiB `BufWriter`.
//! - `emit BYTES` writes BYTES bytes of 64-byte text lines to stdout in 64 KiB writes.
//!
//! Bad arguments: a usage line on stderr and exit 2 (1 as a component: the exit of WASI 0.2
//! carries no code). A file that cannot be read or an output that cannot be written: the error
//! on stderr and exit 1.
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::process::exit;

/// The program's name in its messages.
const NAME: &str = if cfg!(target_env = "p2") { "component_bench_tree_search" } else { "bench_tree_search" };

/// The size of a block read or written at once.
const BLOCK: usize = 64 << 10;

/// Runs the mode the arguments name and exits with its status.
pub fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stdout = io::stdout();
    let result = match args.as_slice() {
        ["tree-search", dir, needle] if !needle.is_empty() => {
            tree_search(Path::new(dir), needle.as_bytes(), stdout.lock())
        }
        ["hexdump", file] => hexdump(Path::new(file), stdout.lock()),
        ["emit", bytes] => match bytes.parse() {
            Ok(bytes) => emit(bytes, stdout.lock()),
            Err(_) => usage(&format!("`{bytes}` is not a number of bytes")),
        },
        _ => usage("usage: tree-search DIR NEEDLE | hexdump FILE | emit BYTES"),
    };
    if let Err(e) = result {
        eprintln!("{NAME}: {e}");
        exit(1);
    }
}

fn usage(message: &str) -> ! {
    eprintln!("{NAME}: {message}");
    exit(2)
}

/// `e` with `path` in front of its message.
fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// What a walk found.
#[derive(Debug, Default)]
struct Totals {
    files: u64,
    bytes: u64,
    matches: u64,
}

/// Walks `dir`, reads every file, counts the lines containing `needle` (not empty), and writes
/// `files=F bytes=B matches=M` to `out`.
///
/// # Errors
///
/// When a directory or a file cannot be read, or `out` cannot be written.
pub fn tree_search(dir: &Path, needle: &[u8], mut out: impl Write) -> io::Result<()> {
    let mut totals = Totals::default();
    walk(dir, needle, &mut Vec::new(), &mut totals)?;
    writeln!(out, "files={} bytes={} matches={}", totals.files, totals.bytes, totals.matches)?;
    out.flush()
}

fn walk(dir: &Path, needle: &[u8], text: &mut Vec<u8>, totals: &mut Totals) -> io::Result<()> {
    for entry in fs::read_dir(dir).map_err(|e| at(dir, e))? {
        let entry = entry.map_err(|e| at(dir, e))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| at(&path, e))?;
        if kind.is_dir() {
            walk(&path, needle, text, totals)?;
        } else if kind.is_file() {
            text.clear();
            File::open(&path).and_then(|mut file| file.read_to_end(text)).map_err(|e| at(&path, e))?;
            totals.files += 1;
            totals.bytes += text.len() as u64;
            totals.matches += text.split(|&b| b == b'\n').filter(|line| contains(line, needle)).count() as u64;
        }
    }
    Ok(())
}

/// Whether `needle` (not empty) occurs in `line`: each place where its first byte occurs is
/// compared with the rest of it.
fn contains(line: &[u8], needle: &[u8]) -> bool {
    let Some((first, rest)) = needle.split_first() else {
        return true;
    };
    let Some(last_start) = line.len().checked_sub(needle.len()) else {
        return false;
    };
    line[..=last_start].iter().enumerate().any(|(i, b)| b == first && &line[i + 1..i + needle.len()] == rest)
}

/// The length of a full line of [`hexdump`]: offset, 16 bytes in hex in two groups, ASCII.
pub const HEXDUMP_LINE: usize = 79;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes a hex dump of the file at `path` to `out` through a 64 KiB `BufWriter`, in the layout
/// of `hexdump -C`: `00000010  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 0a 00 01  |Hello, world!...|`,
/// and a last line with the file's length (`00000020`).
///
/// # Errors
///
/// When the file cannot be read, or `out` cannot be written.
pub fn hexdump(path: &Path, out: impl Write) -> io::Result<()> {
    let mut file = File::open(path).map_err(|e| at(path, e))?;
    let mut out = BufWriter::with_capacity(BLOCK, out);
    let mut block = vec![0; BLOCK];
    let mut line = Vec::with_capacity(HEXDUMP_LINE);
    let mut offset: u64 = 0;
    loop {
        let len = fill(&mut file, &mut block).map_err(|e| at(path, e))?;
        for bytes in block[..len].chunks(16) {
            hexdump_line(&mut line, offset, bytes);
            out.write_all(&line)?;
            offset += bytes.len() as u64;
        }
        if len < block.len() {
            break;
        }
    }
    writeln!(out, "{offset:08x}")?;
    out.flush()
}

/// Makes `line` the line of [`hexdump`] of `bytes` (at most 16) at `offset`.
fn hexdump_line(line: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    line.clear();
    line.extend((0..8).rev().map(|digit| HEX[((offset >> (4 * digit)) & 15) as usize]));
    line.push(b' ');
    for i in 0..16 {
        if i == 8 {
            line.push(b' ');
        }
        match bytes.get(i) {
            Some(b) => line.extend_from_slice(&[b' ', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
            None => line.extend_from_slice(b"   "),
        }
    }
    line.extend_from_slice(b"  |");
    line.extend(bytes.iter().map(|&b| if b == b' ' || b.is_ascii_graphic() { b } else { b'.' }));
    line.extend_from_slice(b"|\n");
}

/// Reads from `file` until `block` is full or the file ends, and returns how much it read.
fn fill(file: &mut File, block: &mut [u8]) -> io::Result<usize> {
    let mut len = 0;
    while len < block.len() {
        match file.read(&mut block[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(len)
}

/// Writes `bytes` bytes of 64-byte text lines to `out`, 64 KiB a write (each ends a line, so
/// that a line-buffered stdout passes it through whole).
///
/// # Errors
///
/// When `out` cannot be written.
pub fn emit(bytes: u64, mut out: impl Write) -> io::Result<()> {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let block: Vec<u8> =
        (0..BLOCK).map(|i| if i % 64 == 63 { b'\n' } else { alphabet[(i / 64 + i % 64) % alphabet.len()] }).collect();
    let mut left = bytes;
    while left > 0 {
        let len = usize::try_from(left).map_or(BLOCK, |left| left.min(BLOCK));
        out.write_all(&block[..len])?;
        left -= len as u64;
    }
    out.flush()
}

//! Copies standard input to standard output, then reports the byte count on standard error.
use std::io::{Read, Write};
fn main() {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).expect("read stdin");
    std::io::stdout().write_all(&input).expect("write stdout");
    eprintln!("{} bytes", input.len());
}

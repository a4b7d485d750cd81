//! Touches every page of `MIB` MiB of linear memory, says so on stdout, and holds it until its
//! stdin reaches end of file: for checking where a component's memory lives (`MADV_DONTFORK`).
use std::io::{Read, Write};

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).expect("usage: component_hold MIB");
    let mut held = vec![0u8; mib << 20];
    for page in held.chunks_mut(4096) {
        page[0] = 1;
    }
    println!("holding {mib} MiB");
    std::io::stdout().flush().expect("flush");
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest).expect("stdin");
    std::hint::black_box(&held);
}

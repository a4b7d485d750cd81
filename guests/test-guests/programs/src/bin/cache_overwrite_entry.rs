//! Overwrites the file at its second argument with the bytes of the file at its first, by plain
//! WASI reads and writes (open with truncation, write): what a guest given a directory above
//! wrt's compile cache can do to an entry.
fn main() {
    let mut args = std::env::args().skip(1);
    let (from, to) = (args.next().expect("a file to copy"), args.next().expect("a file to overwrite"));
    let bytes = std::fs::read(&from).unwrap_or_else(|e| panic!("read {from}: {e}"));
    std::fs::write(&to, &bytes).unwrap_or_else(|e| panic!("write {to}: {e}"));
    println!("overwrote {to} with {} bytes", bytes.len());
}

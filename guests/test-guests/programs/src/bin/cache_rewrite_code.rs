//! Rewrites the file at its first argument in place, by plain WASI calls, as a guest given a
//! directory that holds compiled code can: `truncate` cuts it to nothing, `trap` overwrites every
//! byte with 0xCC (x86's breakpoint instruction) at the same length. Then it runs more of its own
//! code and prints `still running`: if its own compiled code were that file, mapped, it would
//! now die of `SIGBUS` or `SIGTRAP`.
use std::io::{Seek, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let (path, how) = (args.next().expect("a file"), args.next().expect("`truncate` or `trap`"));
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
    match how.as_str() {
        "truncate" => file.set_len(0).expect("truncate"),
        "trap" => {
            let len = file.metadata().expect("metadata").len();
            file.seek(std::io::SeekFrom::Start(0)).expect("seek");
            file.write_all(&vec![0xCC; usize::try_from(len).expect("length")]).expect("write");
        }
        other => panic!("unknown mode `{other}`"),
    }
    drop(file);
    let sum: u64 = (1..=std::hint::black_box(1000u64)).map(|n| n * n).sum();
    println!("still running ({sum})");
}

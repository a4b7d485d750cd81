//! Reads the file named by its argument until it ends, 64 KiB at a time: given a character
//! device that waits for more (`/dev/kmsg`), only `--timeout` ends it.
use std::io::Read;

fn main() {
    let path = std::env::args().nth(1).expect("a path");
    let mut file = std::fs::File::open(&path).expect("open the device");
    let mut buf = vec![0u8; 64 << 10];
    let mut total = 0;
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                println!("read {total} bytes, then {err}");
                std::process::exit(1);
            }
        }
    }
    println!("read {total} bytes to the end");
}

//! Opens `argv[1]` for reading, which for a FIFO waits for a writer, and prints `opened` or the
//! error. Under `--timeout`, a FIFO with no writer must not keep the component past it.
fn main() {
    let path = std::env::args().nth(1).expect("a path");
    match std::fs::File::open(&path) {
        Ok(_) => println!("opened"),
        Err(err) => println!("{err}"),
    }
}

//! Prints a greeting and its arguments.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("hello from a wrt guest, args = {args:?}");
}

//! Exits with the code given as its first argument.
fn main() {
    let code: i32 = std::env::args().nth(1).expect("an exit code").parse().expect("a number");
    std::process::exit(code);
}

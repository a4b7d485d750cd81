//! Prints every argument, `argv[0]` first, one `arg: ` line each, then its environment sorted,
//! one `env: NAME=VALUE` line each: for tests of what `wrt run` hands the guest.
fn main() {
    for arg in std::env::args() {
        println!("arg: {arg}");
    }
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    vars.sort();
    for (name, value) in vars {
        println!("env: {name}={value}");
    }
}

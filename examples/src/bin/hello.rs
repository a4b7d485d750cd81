//! A first guest: greets, lists what it was given, and shows that the sandbox holds it in.
//!
//! Run it from the repository root with the README's command.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    println!("hello from inside the wrt sandbox");
    println!("argv: {args:?}");
    let env: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    println!("environment (only what --env gave): {env:?}");
    match std::fs::read_dir("/") {
        Ok(_) => println!("the host's / is visible (it should not be)"),
        Err(err) => println!("the host file system is out of reach: {err}"),
    }
}

//! Asserts its arguments: argv[0] is the module name, then `a`, `b c`, `--flag`, `ünï`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    assert_eq!(args.len(), 5, "args: {args:?}");
    assert!(args[0].ends_with("cli_args.wasm"), "argv[0]: {}", args[0]);
    assert_eq!(&args[1..], ["a", "b c", "--flag", "ünï"]);
    println!("args ok");
}

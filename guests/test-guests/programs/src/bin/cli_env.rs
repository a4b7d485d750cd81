//! Asserts its environment is exactly `GREETING=hi there` and `EMPTY=` (nothing of the host).
fn main() {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    vars.sort();
    assert_eq!(vars, [("EMPTY".to_owned(), String::new()), ("GREETING".to_owned(), "hi there".to_owned())],);
    println!("env ok");
}

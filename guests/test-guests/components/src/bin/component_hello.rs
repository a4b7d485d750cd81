//! The guest of `wrt bench component-startup`: prints `hello` and exits with 0, the component
//! twin of `cli_hello`.
fn main() {
    println!("hello");
}

//! Placeholder until the buffer benchmark lands.
fn main() {}

//! Panics three calls deep (the panic aborts: a wasm `unreachable` trap).
#[inline(never)]
fn innermost(depth: u32) -> u32 {
    if std::hint::black_box(depth) > 0 {
        panic!("the guest gave up at depth {depth}");
    }
    depth
}

#[inline(never)]
fn middle(depth: u32) -> u32 {
    innermost(depth + 1) + 1
}

fn main() {
    println!("{}", middle(std::hint::black_box(0)));
}

//! Reads far past the end of its linear memory (a `memory out of bounds` trap).
#![allow(unsafe_code, reason = "reads outside linear memory on purpose")]
fn main() {
    let addr = std::hint::black_box(0xFFFF_FF00usize) as *const u8;
    // SAFETY: none; the point is the trap the sandbox must turn this into.
    let byte = unsafe { core::ptr::read_volatile(addr) };
    println!("read {byte} from past the end of memory");
}

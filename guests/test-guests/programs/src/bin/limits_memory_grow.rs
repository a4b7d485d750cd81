//! Grows linear memory one 64 KiB page at a time until `memory.grow` fails, then prints how
//! large memory got and checks that failure was reported as -1 (never a trap).
fn main() {
    let max_pages: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(65536);
    let mut grown = 0;
    loop {
        if grown >= max_pages {
            println!("stopped at {} MiB without failure", core::arch::wasm32::memory_size(0) / 16);
            return;
        }
        let previous = core::arch::wasm32::memory_grow(0, 1);
        if previous == usize::MAX {
            println!("memory.grow failed at {} MiB", core::arch::wasm32::memory_size(0) / 16);
            return;
        }
        grown += 1;
    }
}

//! Helpers shared by the component guests.

/// `len` bytes that differ from one position to the next (xorshift32 from `seed`), so a
/// dropped, moved or duplicated chunk shows when the bytes come back (the core-module guests'
/// `programs::pattern`).
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect()
}

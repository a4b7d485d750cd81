//! Helpers shared by the guest programs in `src/bin`.

/// `len` bytes that differ from one position to the next (xorshift32 from `seed`), so a
/// dropped, moved or duplicated chunk shows when the bytes come back.
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

/// A spawn request written byte by byte from the layout in docs/abi.md ("The spawn request"),
/// not with `wrt-abi`'s encoder, so the guests that use it test the documented layout itself:
/// `program` with `args`, no environment, the default working directory, the three stdio mode
/// bytes, no timeout and no output limit, then `tail` (the source handle of stdin mode 3).
pub fn raw_request(program: &[u8], args: &[&[u8]], stdio: [u8; 3], tail: Option<u32>) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &[u8]) {
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s);
    }
    let mut out = 1u32.to_le_bytes().to_vec();
    string(&mut out, program);
    out.extend((args.len() as u32).to_le_bytes());
    for arg in args {
        string(&mut out, arg);
    }
    out.extend(0u32.to_le_bytes()); // envc
    string(&mut out, b""); // cwd
    out.extend(stdio);
    out.push(0); // flags
    out.extend(0u64.to_le_bytes()); // timeout_ms
    out.extend(0u64.to_le_bytes()); // output_limit
    if let Some(handle) = tail {
        out.extend(handle.to_le_bytes());
    }
    out
}

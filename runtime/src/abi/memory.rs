//! Bounds-checked access to the guest's linear memory for host functions. Every pointer and
//! length comes from the guest and is hostile: a range that leaves memory, or whose end does
//! not fit in 32 bits, is `OUT_OF_BOUNDS`.

use wrt_abi::ErrorCode;

/// The byte range `ptr..ptr+len` of a memory of `size` bytes, if it lies inside it.
pub(crate) fn range(size: usize, ptr: i32, len: i32) -> Result<std::ops::Range<usize>, ErrorCode> {
    let (ptr, len) = (ptr as u32, len as u32);
    let end = ptr.checked_add(len).ok_or(ErrorCode::OutOfBounds)?;
    if end as usize > size {
        return Err(ErrorCode::OutOfBounds);
    }
    Ok(ptr as usize..end as usize)
}

/// `ptr..ptr+len` of `memory`.
pub(crate) fn slice(memory: &[u8], ptr: i32, len: i32) -> Result<&[u8], ErrorCode> {
    Ok(&memory[range(memory.len(), ptr, len)?])
}

/// `ptr..ptr+len` of `memory`, writable.
pub(crate) fn slice_mut(memory: &mut [u8], ptr: i32, len: i32) -> Result<&mut [u8], ErrorCode> {
    let range = range(memory.len(), ptr, len)?;
    Ok(&mut memory[range])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(range(100, 0, 100), Ok(0..100));
        assert_eq!(range(100, 100, 0), Ok(100..100));
        assert_eq!(range(100, 99, 2), Err(ErrorCode::OutOfBounds));
        assert_eq!(range(100, 101, 0), Err(ErrorCode::OutOfBounds));
        // ptr + len overflowing 32 bits, and lengths of 4 GiB - 1.
        assert_eq!(range(usize::MAX, -1, 1), Err(ErrorCode::OutOfBounds));
        assert_eq!(range(usize::MAX, 1, -1), Err(ErrorCode::OutOfBounds));
        assert_eq!(range(1 << 20, 0, -1), Err(ErrorCode::OutOfBounds));
        assert_eq!(range(usize::MAX, 0, -1), Ok(0..u32::MAX as usize));
    }
}

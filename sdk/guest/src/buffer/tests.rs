use super::*;

/// A host buffer value for tests: its handle is never given to the host (dropping it calls
/// the stub of `buffer_release` outside wasm32).
fn fake_host(handle: i32, len: usize) -> Buffer {
    Buffer(Repr::Host(HostBuffer { handle, len }))
}

fn code(err: &io::Error) -> Option<ErrorCode> {
    ErrorCode::of(err)
}

#[test]
fn small_payloads_stay_inline() {
    for len in [0, 1, 63, 64] {
        let bytes: Vec<u8> = (0..len as u8).collect();
        let buffer = Buffer::from_slice(&bytes).unwrap();
        assert!(!buffer.is_host());
        assert_eq!(buffer.len(), len);
        assert_eq!(buffer.is_empty(), len == 0);
        assert_eq!(buffer.to_vec().unwrap(), bytes);
        let zeroed = Buffer::zeroed(len).unwrap();
        assert!(!zeroed.is_host());
        assert_eq!(zeroed.to_vec().unwrap(), vec![0; len]);
    }
    assert_eq!(Buffer::new().len(), 0);
    assert!(Buffer::default().is_empty());
    assert_eq!(Buffer::try_from(&b"abc"[..]).unwrap().to_vec().unwrap(), b"abc");
    assert_eq!(Buffer::try_from(b"abc".to_vec()).unwrap().len(), 3);
}

#[test]
#[cfg(not(target_arch = "wasm32"))]
fn large_payloads_go_to_the_host() {
    // Outside wasm32 the host functions are stubs: reaching them shows as `Unsupported`.
    let err = Buffer::from_slice(&[7; 65]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported);
    assert_eq!(Buffer::zeroed(65).unwrap_err().kind(), io::ErrorKind::Unsupported);
    assert_eq!(Buffer::try_from(vec![0; 1000]).unwrap_err().kind(), io::ErrorKind::Unsupported);
    // A handle from the host whose length cannot be read is released, not leaked or panicked on.
    let err = Buffer::from_host_handle(0x4000_0001, || "read".into()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported);
}

#[test]
fn inline_reads() {
    let buffer = Buffer::from_slice(b"hello, world").unwrap();
    let mut dst = [0; 5];
    assert_eq!(buffer.read_at(0, &mut dst).unwrap(), 5);
    assert_eq!(&dst, b"hello");
    assert_eq!(buffer.read_at(7, &mut dst).unwrap(), 5);
    assert_eq!(&dst, b"world");
    assert_eq!(buffer.read_at(10, &mut dst).unwrap(), 2);
    assert_eq!(&dst[..2], b"ld");
    assert_eq!(buffer.read_at(12, &mut dst).unwrap(), 0);
    assert_eq!(buffer.read_at(3, &mut []).unwrap(), 0);

    let err = buffer.read_at(13, &mut dst).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(code(&err), Some(ErrorCode::OutOfRange));
    assert_eq!(
        err.to_string(),
        "cannot read at offset 13 of a buffer of 12 bytes: an offset or range is outside the buffer (OUT_OF_RANGE)"
    );
}

#[test]
fn inline_writes() {
    let mut buffer = Buffer::zeroed(8).unwrap();
    buffer.write_at(2, b"abc").unwrap();
    buffer.write_at(5, b"xyz").unwrap();
    buffer.write_at(8, b"").unwrap();
    assert_eq!(buffer.to_vec().unwrap(), b"\0\0abcxyz");
    for (offset, src) in [(6, &b"abc"[..]), (9, b""), (usize::MAX, b"a")] {
        let err = buffer.write_at(offset, src).unwrap_err();
        assert_eq!(code(&err), Some(ErrorCode::OutOfRange), "{offset}");
    }
    assert_eq!(buffer.to_vec().unwrap(), b"\0\0abcxyz", "a failed write writes nothing");
}

#[test]
fn range_bounds() {
    use Bound::{Excluded, Included, Unbounded};
    assert_eq!(bounds(Unbounded, Unbounded, 10), Some((0, 10)));
    assert_eq!(bounds(Included(2), Excluded(5), 10), Some((2, 5)));
    assert_eq!(bounds(Included(2), Included(5), 10), Some((2, 6)));
    assert_eq!(bounds(Excluded(2), Unbounded, 10), Some((3, 10)));
    assert_eq!(bounds(Included(10), Unbounded, 10), Some((10, 10)));
    assert_eq!(bounds(Included(11), Unbounded, 10), None);
    assert_eq!(bounds(Included(5), Excluded(4), 10), None);
    assert_eq!(bounds(Unbounded, Included(10), 10), None);
    assert_eq!(bounds(Unbounded, Included(usize::MAX), 10), None);
    assert_eq!(bounds(Excluded(usize::MAX), Unbounded, 10), None);
    assert_eq!(DisplayRange(Included(2), Excluded(5)).to_string(), "2..5");
    assert_eq!(DisplayRange(Unbounded, Included(5)).to_string(), "..=5");
    assert_eq!(DisplayRange(Included(2), Unbounded).to_string(), "2..");
}

#[test]
fn inline_slices_are_copies() {
    let buffer = Buffer::from_slice(b"0123456789").unwrap();
    let mut slice = buffer.slice(2..5).unwrap();
    assert!(!slice.is_host());
    assert_eq!(slice.to_vec().unwrap(), b"234");
    slice.write_at(0, b"x").unwrap();
    assert_eq!(buffer.to_vec().unwrap(), b"0123456789");
    assert_eq!(buffer.slice(..).unwrap().to_vec().unwrap(), b"0123456789");
    assert_eq!(buffer.slice(8..).unwrap().to_vec().unwrap(), b"89");
    assert!(buffer.slice(10..).unwrap().is_empty());
    let err = buffer.slice(3..11).unwrap_err();
    assert_eq!(code(&err), Some(ErrorCode::OutOfRange));
    assert_eq!(
        err.to_string(),
        "cannot slice 3..11 of a buffer of 10 bytes: an offset or range is outside the buffer (OUT_OF_RANGE)"
    );
    #[expect(clippy::reversed_empty_ranges, reason = "the range under test")]
    let reversed = buffer.slice(5..4);
    assert_eq!(code(&reversed.unwrap_err()), Some(ErrorCode::OutOfRange));
}

#[test]
#[cfg(not(target_arch = "wasm32"))]
fn small_slices_of_host_buffers_are_read_into_linear_memory() {
    let host = fake_host(0x4000_0001, 1000);
    // A slice over 64 bytes asks the host for a shared slice, a smaller one reads the bytes.
    assert_eq!(host.slice(0..65).unwrap_err().kind(), io::ErrorKind::Unsupported);
    assert_eq!(host.slice(100..164).unwrap_err().kind(), io::ErrorKind::Unsupported);
    assert!(host.slice(1000..).unwrap().is_empty(), "an empty slice needs no host call");
    assert_eq!(code(&host.slice(990..1001).unwrap_err()), Some(ErrorCode::OutOfRange));
}

#[test]
fn small_concatenations_stay_inline() {
    let (a, b, empty) = (Buffer::from_slice(b"abc").unwrap(), Buffer::from_slice(&[b'x'; 61]).unwrap(), Buffer::new());
    let joined = Buffer::concat(&[&a, &empty, &b]).unwrap();
    assert!(!joined.is_host());
    assert_eq!(joined.len(), 64);
    assert_eq!(&joined.to_vec().unwrap()[..4], b"abcx");
    assert!(Buffer::concat(&[]).unwrap().is_empty());
    assert!(Buffer::concat(&[&empty, &empty]).unwrap().is_empty());
}

/// Runs `concat_with` with a fake host that records each call's part records and answers with
/// handles 1000, 1001, ….
fn fake_concat(parts: &[&Buffer]) -> (Buffer, Vec<Vec<[i32; 3]>>) {
    let mut calls = Vec::new();
    let buffer = concat_with(parts, |records, len| {
        calls.push(records.to_vec());
        Ok(HostBuffer { handle: 1000 + calls.len() as i32 - 1, len })
    })
    .unwrap();
    (buffer, calls)
}

#[test]
fn concat_passes_inline_parts_as_linear_memory() {
    let head = Buffer::from_slice(b"<html>").unwrap();
    let body = fake_host(0x4000_0007, 2048);
    let tail = Buffer::from_slice(b"</html>").unwrap();
    let (joined, calls) = fake_concat(&[&head, &Buffer::new(), &body, &tail]);
    assert!(joined.is_host());
    assert_eq!(joined.len(), 6 + 2048 + 7);
    assert_eq!(calls.len(), 1);
    let records = &calls[0];
    assert_eq!(records.len(), 3, "the empty part is left out");
    assert_eq!(records[0][0], 0);
    assert_eq!(records[0][1], sys_addr(&head));
    assert_eq!(records[0][2], 6);
    assert_eq!(records[1], [0x4000_0007, 0, 0]);
    assert_eq!((records[2][0], records[2][2]), (0, 7));
    // Only `joined`'s bytes were made by the host; the inline parts still hold theirs.
    assert_eq!(head.to_vec().unwrap(), b"<html>");
}

/// The address `encode` gives an inline buffer's bytes.
fn sys_addr(buffer: &Buffer) -> i32 {
    match buffer.as_part() {
        ConcatPart::Linear(bytes) => bytes.as_ptr().addr() as i32,
        ConcatPart::Host(_) => panic!("not inline"),
    }
}

#[test]
fn concat_of_many_parts_takes_several_calls() {
    let parts: Vec<Buffer> = (0..2500).map(|i| fake_host(0x4000_0000 + i, 100)).collect();
    let refs: Vec<&Buffer> = parts.iter().collect();
    let (joined, calls) = fake_concat(&refs);
    assert_eq!(joined.len(), 250_000);
    let counts: Vec<usize> = calls.iter().map(Vec::len).collect();
    assert_eq!(counts, [1024, 1024, 454]);
    assert_eq!(calls[0][0], [0x4000_0000, 0, 0]);
    assert_eq!(calls[1][0], [1000, 0, 0], "the second call starts with the first one's result");
    assert_eq!(calls[1][1], [0x4000_0000 + 1024, 0, 0]);
    assert_eq!(calls[2][0], [1001, 0, 0]);
    assert_eq!(calls[2][453], [0x4000_0000 + 2499, 0, 0]);

    // Exactly 1024 parts: one call.
    let (_, calls) = fake_concat(&refs[..1024]);
    assert_eq!(calls.len(), 1);

    // Around the records built on the stack (16): every part, in order, once.
    for n in [15, 16, 17, 18, 33] {
        let (joined, calls) = fake_concat(&refs[..n]);
        assert_eq!(joined.len(), 100 * n);
        let handles: Vec<i32> = calls[0].iter().map(|record| record[0]).collect();
        assert_eq!(handles, (0..n as i32).map(|i| 0x4000_0000 + i).collect::<Vec<_>>(), "{n} parts");
    }
}

#[test]
fn concat_errors_are_returned() {
    let big = fake_host(0x4000_0001, 100);
    let err = concat_with(&[&big], |_, _| Err(WrtError::new(ErrorCode::NoMemory, "concat".into()).into())).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
    #[cfg(not(target_arch = "wasm32"))]
    assert_eq!(Buffer::concat(&[&big]).unwrap_err().kind(), io::ErrorKind::Unsupported);
}

#[test]
fn debug_shows_where_the_bytes_are() {
    assert_eq!(format!("{:?}", Buffer::from_slice(b"ab").unwrap()), "Buffer { inline: [97, 98] }");
    assert_eq!(format!("{:?}", fake_host(0x4000_0001, 100)), "Buffer { handle: 1073741825, len: 100 }");
}

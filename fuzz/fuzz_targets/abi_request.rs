//! The `wrt_v1` spawn request: any bytes decode to a request or to a documented error, never a
//! panic; a decoded request encodes back to the very same bytes (the format has one encoding
//! per request); and any request built in memory is checked as its encoding is decoded (`check`
//! and `decode` agree), round-tripping once checked.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use wrt_abi::ErrorCode;
use wrt_abi::request::{MAX_REQUEST_LEN, SpawnRequest, StdioMode, check, decode, encode, encoded_len};

fn mode(u: &mut Unstructured<'_>) -> arbitrary::Result<StdioMode> {
    let raw = u.int_in_range(0..=5)?;
    Ok(StdioMode::from_raw(raw).expect("0..=5 are modes"))
}

/// A request as a guest could build it: any strings, modes in any stream, tails present or not.
fn request(u: &mut Unstructured<'_>) -> arbitrary::Result<SpawnRequest> {
    Ok(SpawnRequest {
        program: u.arbitrary()?,
        args: u.arbitrary()?,
        env: u.arbitrary()?,
        cwd: u.arbitrary()?,
        stdio: [mode(u)?, mode(u)?, mode(u)?],
        stdin_child: u.arbitrary()?,
        pty_size: u.arbitrary()?,
        timeout_ms: u.arbitrary()?,
        output_limit: u.arbitrary()?,
    })
}

#[derive(Debug)]
enum Input {
    Bytes(Vec<u8>),
    Request(SpawnRequest),
}

/// The first byte chooses: even, the rest is a request's bytes as a guest would pass them (so
/// seeds are `0` and an encoding); odd, the rest builds a request in memory.
impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.arbitrary()? { Ok(Self::Request(request(u)?)) } else { Ok(Self::Bytes(u.arbitrary()?)) }
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.arbitrary()? { Ok(Self::Request(request(&mut u)?)) } else { Ok(Self::Bytes(u.take_rest().to_vec())) }
    }
}

fuzz_target!(|input: Input| {
    match input {
        Input::Bytes(bytes) => match decode(&bytes) {
            Ok(request) => {
                assert_eq!(encode(&request), bytes, "{request:?} encodes to other bytes");
                assert_eq!(encoded_len(&request), bytes.len());
                assert_eq!(check(request.clone()), Ok(request));
            }
            Err(code) => assert!(matches!(code, ErrorCode::InvalidArgument | ErrorCode::BadUtf8), "{code:?}"),
        },
        Input::Request(request) => {
            let bytes = encode(&request);
            assert_eq!(encoded_len(&request), bytes.len());
            match check(request.clone()) {
                Ok(checked) => {
                    assert!(bytes.len() <= MAX_REQUEST_LEN);
                    assert_eq!(decode(&bytes), Ok(checked.clone()), "{request:?}");
                    assert_eq!(decode(&encode(&checked)), Ok(checked));
                }
                Err(code) => assert_eq!(decode(&bytes), Err(code), "{request:?}"),
            }
        }
    }
});

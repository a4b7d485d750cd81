use proptest::prelude::*;

use super::*;

fn sample() -> SpawnRequest {
    SpawnRequest {
        program: "echo".into(),
        args: vec!["hello".into(), "wörld".into(), String::new()],
        env: vec![("LANG".into(), "C".into())],
        cwd: Some("/tmp".into()),
        stdio: [StdioMode::Piped, StdioMode::Piped, StdioMode::Inherit],
        stdin_child: None,
        pty_size: None,
        timeout_ms: Some(1500),
        output_limit: None,
    }
}

#[test]
fn round_trip() {
    let request = sample();
    assert_eq!(decode(&encode(&request)), Ok(request));
}

#[test]
fn every_truncation_is_invalid() {
    let bytes = encode(&sample());
    for len in 0..bytes.len() {
        assert_eq!(decode(&bytes[..len]), Err(ErrorCode::InvalidArgument), "truncated to {len}");
    }
}

#[test]
fn trailing_bytes_bad_version_flags_and_modes_are_invalid() {
    let mut bytes = encode(&sample());
    bytes.push(0);
    assert_eq!(decode(&bytes), Err(ErrorCode::InvalidArgument));
    let mut bytes = encode(&sample());
    bytes[0] = 2;
    assert_eq!(decode(&bytes), Err(ErrorCode::InvalidArgument));
    let bytes = encode(&sample());
    let flags_at = bytes.len() - 17;
    let mut flagged = bytes.clone();
    flagged[flags_at] = 1;
    assert_eq!(decode(&flagged), Err(ErrorCode::InvalidArgument));
    let mut bad_mode = bytes;
    bad_mode[flags_at - 1] = 3;
    assert_eq!(decode(&bad_mode), Err(ErrorCode::InvalidArgument));
}

#[test]
fn strings_must_be_utf8_without_nul_and_program_non_empty() {
    let mut request = sample();
    request.args[0] = "a\0b".into();
    assert_eq!(decode(&encode(&request)), Err(ErrorCode::InvalidArgument));
    let mut request = sample();
    request.program = String::new();
    assert_eq!(decode(&encode(&request)), Err(ErrorCode::InvalidArgument));
    let mut bytes = encode(&sample());
    bytes[8] = 0xff; // first byte of the program name
    assert_eq!(decode(&bytes), Err(ErrorCode::BadUtf8));
}

#[test]
fn huge_counts_and_lengths_are_rejected_without_allocating() {
    let mut bytes = 1u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(decode(&bytes), Err(ErrorCode::InvalidArgument));
    let mut bytes = 1u32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.push(b'x');
    bytes.extend_from_slice(&u32::MAX.to_le_bytes()); // argc
    assert_eq!(decode(&bytes), Err(ErrorCode::InvalidArgument));
    assert_eq!(decode(&vec![0; MAX_REQUEST_LEN + 1]), Err(ErrorCode::InvalidArgument));
}

fn arb_string() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,12}"
}

fn arb_request() -> impl Strategy<Value = SpawnRequest> {
    let mode =
        prop_oneof![Just(StdioMode::Null), Just(StdioMode::Piped), Just(StdioMode::Inherit), Just(StdioMode::Pty)];
    let stdin =
        prop_oneof![mode.clone().prop_map(|m| (m, None)), any::<u32>().prop_map(|h| (StdioMode::ChildStdout, Some(h)))];
    let stderr = prop_oneof![mode.clone(), Just(StdioMode::Stdout)];
    (
        "[^\u{0}]{1,12}",
        prop::collection::vec(arb_string(), 0..6),
        prop::collection::vec((arb_string(), arb_string()), 0..4),
        prop::option::of("[^\u{0}]{1,12}"),
        (stdin, mode, stderr),
        prop::option::of(1u64..),
        (prop::option::of(1u64..), any::<(u16, u16)>()),
    )
        .prop_map(
            |(program, args, env, cwd, ((stdin, stdin_child), stdout, stderr), timeout_ms, (output_limit, size))| {
                let stdio = [stdin, stdout, stderr];
                let pty_size = stdio.contains(&StdioMode::Pty).then_some(size);
                SpawnRequest { program, args, env, cwd, stdio, stdin_child, pty_size, timeout_ms, output_limit }
            },
        )
}

/// Stdin mode 3 carries a child handle after the output limit; mode 3 anywhere but stdin and mode 4
/// anywhere but stderr are malformed.
#[test]
fn pipeline_modes_fit_only_their_stream() {
    let mut request = sample();
    request.stdio = [StdioMode::ChildStdout, StdioMode::Piped, StdioMode::Stdout];
    request.stdin_child = Some(7);
    let bytes = encode(&request);
    assert_eq!(bytes.len(), encode(&sample()).len() + 4);
    assert_eq!(bytes[bytes.len() - 4..], 7u32.to_le_bytes());
    assert_eq!(decode(&bytes), Ok(request.clone()));
    assert_eq!(decode(&bytes[..bytes.len() - 4]), Err(ErrorCode::InvalidArgument), "no handle");
    let modes_at = bytes.len() - 4 - 17 - 3;
    for (index, raw) in [(1, 3), (2, 3), (0, 4), (1, 4), (0, 6), (2, 6)] {
        let mut bad = bytes.clone();
        bad[modes_at + index] = raw;
        assert_eq!(decode(&bad), Err(ErrorCode::InvalidArgument), "mode {raw} for stream {index}");
    }
    // Stdin not from a child: no handle may follow.
    let mut plain = bytes.clone();
    plain[modes_at] = StdioMode::Piped.raw();
    assert_eq!(decode(&plain), Err(ErrorCode::InvalidArgument));
}

/// Any stream may be a pty (mode 5); the size follows the stdin handle, if any.
#[test]
fn pty_size_follows_the_request() {
    let mut request = sample();
    request.stdio = [StdioMode::ChildStdout, StdioMode::Pty, StdioMode::Stdout];
    request.stdin_child = Some(9);
    request.pty_size = Some((40, 120));
    let bytes = encode(&request);
    assert_eq!(bytes.len(), encode(&sample()).len() + 8);
    assert_eq!(bytes[bytes.len() - 4..], [40, 0, 120, 0]);
    assert_eq!(decode(&bytes), Ok(request));
    assert_eq!(decode(&bytes[..bytes.len() - 1]), Err(ErrorCode::InvalidArgument), "a size byte short");
    let mut request = sample();
    request.stdio = [StdioMode::Pty; 3];
    request.pty_size = Some((0, 0));
    assert_eq!(decode(&encode(&request)), Ok(request));
}

/// The program of a request the decoder rejects is still read as far as it goes, for its
/// audit record.
#[test]
fn program_bytes_of_malformed_requests() {
    assert_eq!(program_bytes(&[]), b"");
    assert_eq!(program_bytes(&[1, 0, 0]), b"");
    assert_eq!(program_bytes(&[1, 0, 0, 0, 5, 0]), b"");
    assert_eq!(program_bytes(&[1, 0, 0, 0, 5, 0, 0, 0, b't', 0xff, b'u']), b"t\xffu");
    assert_eq!(program_bytes(&[9, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, b'x']), b"x", "a length past the end");
    let request = SpawnRequest {
        program: "true".into(),
        args: vec![],
        env: vec![],
        cwd: None,
        stdio: [StdioMode::Null; 3],
        stdin_child: None,
        pty_size: None,
        timeout_ms: None,
        output_limit: None,
    };
    assert_eq!(program_bytes(&encode(&request)), b"true");
}

proptest! {
    // 2,000 cases by default; CI runs more with `PROPTEST_CASES`.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    /// Arbitrary bytes never panic the decoder, and whatever it accepts re-encodes to the
    /// same bytes (the format has one encoding per request).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(request) = decode(&bytes) {
            prop_assert_eq!(encode(&request), bytes);
        }
    }

    #[test]
    fn valid_requests_round_trip(request in arb_request()) {
        prop_assert_eq!(decode(&encode(&request)), Ok(request));
    }

    /// Flipping any byte of a valid request either still decodes or fails with one of the
    /// two documented codes.
    #[test]
    fn mutations_fail_cleanly(request in arb_request(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = encode(&request);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        match decode(&bytes) {
            Ok(_) | Err(ErrorCode::InvalidArgument) | Err(ErrorCode::BadUtf8) => {}
            Err(other) => prop_assert!(false, "unexpected {other:?}"),
        }
    }
}

/// A request as a guest might build it in memory: strings with and without NUL bytes, empty
/// ones, any stdio mode on any stream, zero and non-zero numbers, tails present or not.
fn any_request() -> impl Strategy<Value = SpawnRequest> {
    let text = prop_oneof![Just(String::new()), "[a-z/]{1,8}", "[a-z]{0,3}\0[a-z]{0,3}"];
    let mode = (0u8..6).prop_map(|raw| StdioMode::from_raw(raw).unwrap());
    (
        (
            text.clone(),
            prop::collection::vec(text.clone(), 0..3),
            prop::collection::vec((text.clone(), text.clone()), 0..3),
        ),
        (prop::option::of(text), [mode.clone(), mode.clone(), mode]),
        (prop::option::of(0u32..4), prop::option::of((0u16..3, 0u16..3))),
        (prop::option::of(0u64..3), prop::option::of(0u64..3)),
    )
        .prop_map(|((program, args, env), (cwd, stdio), (stdin_child, pty_size), (timeout_ms, output_limit))| {
            SpawnRequest { program, args, env, cwd, stdio, stdin_child, pty_size, timeout_ms, output_limit }
        })
}

proptest! {
    /// The rules for requests built in memory (the component bindings) are the decoder's: a
    /// request checked in memory is what its bytes decode to, or the same error code; and the
    /// length computed without encoding is the encoding's.
    #[test]
    fn a_request_checked_in_memory_is_what_its_bytes_decode_to(request in any_request()) {
        let bytes = encode(&request);
        prop_assert_eq!(wrt_abi::request::encoded_len(&request), bytes.len());
        prop_assert_eq!(wrt_abi::request::check(request), decode(&bytes));
    }
}

#[test]
fn a_request_longer_than_the_limit_is_refused_in_memory_as_in_bytes() {
    let mut request = sample();
    request.args = vec!["x".repeat(MAX_REQUEST_LEN / 2); 2];
    assert_eq!(wrt_abi::request::check(request.clone()), Err(ErrorCode::InvalidArgument));
    assert_eq!(decode(&encode(&request)), Err(ErrorCode::InvalidArgument));
}

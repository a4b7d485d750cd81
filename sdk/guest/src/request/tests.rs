use std::ffi::OsStr;

use super::*;

fn request<'a>(program: &'a str, args: &[&'a str]) -> Request<'a> {
    Request {
        program: OsStr::new(program),
        args: args.iter().map(|arg| OsStr::new(*arg)).collect(),
        env: Vec::new(),
        cwd: OsStr::new(""),
        stdin: Stdio::null(),
        stdout: Stdio::piped(),
        stderr: Stdio::inherit(),
        timeout_ms: 0,
        output_limit: 0,
        pty_size: (0, 0),
    }
}

/// A little-endian `u32`.
fn w(value: u32) -> [u8; 4] {
    value.to_le_bytes()
}

#[test]
fn minimal_request_bytes() {
    let bytes = request("ls", &[]).encode().unwrap();
    let mut expected = Vec::new();
    expected.extend(w(1)); // version
    expected.extend(w(2));
    expected.extend(b"ls"); // program
    expected.extend(w(0)); // argc
    expected.extend(w(0)); // envc
    expected.extend(w(0)); // cwd: empty, the policy's default
    expected.extend([0, 1, 2]); // null, piped, inherit
    expected.push(0); // flags
    expected.extend(0u64.to_le_bytes()); // timeout_ms
    expected.extend(0u64.to_le_bytes()); // output_limit
    assert_eq!(bytes, expected);
    assert_eq!(bytes.len(), 4 + 4 + 2 + 4 + 4 + 4 + 4 + 16);
}

#[test]
fn full_request_bytes() {
    let mut req = request("/usr/bin/env", &["-0", "ünï", ""]);
    req.env = vec![(OsStr::new("A"), OsStr::new("1")), (OsStr::new("EMPTY"), OsStr::new(""))];
    req.cwd = OsStr::new("/tmp");
    req.stdin = Stdio::piped();
    req.stdout = Stdio::piped();
    req.stderr = Stdio::null();
    req.timeout_ms = 0x0102_0304_0506_0708;
    req.output_limit = 1 << 20;
    let bytes = req.encode().unwrap();

    let mut expected = Vec::new();
    expected.extend(w(1));
    expected.extend(w(12));
    expected.extend(b"/usr/bin/env");
    expected.extend(w(3));
    expected.extend(w(2));
    expected.extend(b"-0");
    expected.extend(w(5)); // "ünï" is 5 bytes of UTF-8
    expected.extend("ünï".as_bytes());
    expected.extend(w(0)); // an empty argument
    expected.extend(w(2));
    expected.extend(w(1));
    expected.extend(b"A");
    expected.extend(w(1));
    expected.extend(b"1");
    expected.extend(w(5));
    expected.extend(b"EMPTY");
    expected.extend(w(0));
    expected.extend(w(4));
    expected.extend(b"/tmp");
    expected.extend([1, 1, 0, 0]);
    expected.extend([8, 7, 6, 5, 4, 3, 2, 1]);
    expected.extend([0, 0, 0x10, 0, 0, 0, 0, 0]);
    assert_eq!(bytes, expected);
}

#[cfg(unix)]
#[test]
fn bytes_pass_through_unchanged() {
    use std::os::unix::ffi::OsStrExt;

    // Not UTF-8, and a NUL: the host rejects these with its own codes, so they are sent as is.
    let mut req = request("prog", &[]);
    let bad = [b'a', 0xff, 0, b'z'];
    req.args = vec![OsStr::from_bytes(&bad)];
    let bytes = req.encode().unwrap();
    let mut arg = w(4).to_vec();
    arg.extend(bad);
    assert!(bytes.windows(arg.len()).any(|window| window == arg), "{bytes:?}");
}

#[test]
fn large_requests_are_encoded_for_the_host_to_refuse() {
    let big = "x".repeat(1 << 20);
    let bytes = request("echo", &[&big]).encode().unwrap();
    assert!(bytes.len() > 1 << 20);
}

#[test]
fn capacity_estimate_is_exact() {
    let req = request("echo", &["a", "bc"]);
    let bytes = req.encode().unwrap();
    assert_eq!(bytes.len(), bytes.capacity());
}

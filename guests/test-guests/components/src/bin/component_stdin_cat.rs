//! Sends `argv[1]` bytes (default 16 MiB) through `cat` and checks every byte comes back, three
//! ways: `Write` and `Read` on the pipes (with `cat`'s stdout drained by a second child, `wc`,
//! so that the writes never wait on the guest), `Child::communicate` (a `wasi:io/poll` loop),
//! and `Command::output_with_input` (the one-shot `run`); then writes to a child that never
//! reads its stdin (BROKEN_PIPE, and `communicate` does not hang). Needs `cat`, `wc` and `true`.
use std::io::{ErrorKind, Read, Write};

use components::pattern;
use wrt_process::{Command, ErrorCode, Stdio};

fn main() {
    let len: usize = std::env::args().nth(1).map_or(16 << 20, |arg| arg.parse().expect("a byte count"));
    let input = pattern(len, 0x9e37_79b9);

    // Write then read, through a pipeline: cat | wc -c counts what went through.
    let mut cat = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn cat");
    let mut wc = cat.pipe_into(Command::new("wc").arg("-c").stdout(Stdio::piped())).expect("cat | wc");
    cat.stdin.take().expect("piped").write_all(&input).expect("write to cat");
    let mut count = String::new();
    wc.stdout.take().expect("piped").read_to_string(&mut count).expect("read wc");
    assert_eq!(count.trim(), len.to_string());
    assert!(cat.wait().expect("wait cat").success() && wc.wait().expect("wait wc").success());

    let child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn cat");
    let out = child.communicate(&input).expect("communicate");
    assert!(out.status.success(), "{}", out.status);
    assert_eq!(out.stdout.len(), input.len());
    assert!(out.stdout == input, "cat changed the bytes (communicate)");

    let out = Command::new("cat").output_limit(len as u64).output_with_input(&input).expect("run cat");
    assert!(out.status.success() && !out.status.stdout_truncated(), "{}", out.status);
    assert_eq!(out.stdout.len(), input.len());
    assert!(out.stdout == input, "cat changed the bytes (run)");

    // A child that never reads its stdin: writing fails with BROKEN_PIPE once it has ended,
    // and `communicate` drops the rest of the input instead of hanging.
    let mut child = Command::new("true").stdin(Stdio::piped()).spawn().expect("spawn true");
    let mut stdin = child.stdin.take().expect("piped");
    child.subscribe().block();
    let err = stdin.write_all(&input[..1 << 20]).expect_err("write to a child that ended");
    assert_eq!(err.kind(), ErrorKind::BrokenPipe, "{err}");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::BrokenPipe), "{err}");
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    let child = Command::new("true").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn true");
    let out = child.communicate(&input).expect("communicate with a child that reads nothing");
    assert!(out.status.success() && out.stdout.is_empty(), "{}", out.status);

    println!("{len} bytes each way, three times");
}

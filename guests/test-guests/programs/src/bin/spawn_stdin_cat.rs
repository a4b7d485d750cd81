//! Sends `argv[1]` bytes (default 16 MiB) through `cat` and checks every byte comes back, three
//! ways: a hand-written `poll` loop with non-blocking writes and reads, `Child::communicate`, and
//! `Command::output_with_input` (the one-shot `run`); then writes to a child that never reads
//! its stdin (BROKEN_PIPE, and `communicate` does not hang). Needs `cat` and `true`.
use std::io::{ErrorKind, Write};
use std::time::Duration;

use programs::pattern;
use wrt_guest::{Command, ErrorCode, Events, Stdio};

fn by_hand(input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn cat");
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut output = Vec::with_capacity(input.len());
    let mut chunk = vec![0; 1 << 16];
    let (mut written, mut polls, mut eof) = (0, 0u64, false);
    while !eof {
        let mut interest = Events::STDOUT;
        if stdin.is_some() {
            interest |= Events::STDIN;
        }
        let ready = child.poll(interest, None).expect("poll");
        assert!(!ready.is_empty(), "poll without timeout returned nothing");
        polls += 1;
        if ready.contains(Events::STDIN)
            && let Some(pipe) = stdin.as_mut()
        {
            match pipe.try_write(&input[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("write: {e}"),
            }
            if written == input.len() {
                stdin = None; // closes cat's stdin
            }
        }
        if ready.contains(Events::STDOUT) {
            loop {
                match stdout.try_read(&mut chunk) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => output.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("read: {e}"),
                }
            }
        }
    }
    assert_eq!(written, input.len());
    let status = child.wait().expect("wait");
    assert!(status.success() && !status.stdout_truncated(), "{status}");
    eprintln!("by hand: {polls} polls");
    output
}

fn main() {
    let len: usize = std::env::args().nth(1).map_or(16 << 20, |arg| arg.parse().expect("a byte count"));
    let input = pattern(len, 0x9e37_79b9);

    let output = by_hand(&input);
    assert_eq!(output.len(), input.len());
    assert!(output == input, "cat changed the bytes (poll loop)");

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
    let ready = child.poll(Events::EXITED, Some(Duration::from_secs(10))).expect("poll");
    assert_eq!(ready, Events::EXITED);
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

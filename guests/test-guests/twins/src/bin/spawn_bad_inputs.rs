//! Bad inputs through the SDK, one line each, `what: RESULT` (the error code's name, or the
//! status): NUL bytes, an empty or relative program, a relative directory, `2>&1` on the wrong
//! stream, signals out of range, a terminal resize without a
//! terminal, `wait_any` of nothing, a buffer past 1 GiB, a backwards slice and a zero timeout.
//! Built as the core module `spawn_bad_inputs` and as the component `component_bad_inputs`: the
//! two outputs must be the same. Needs `true` and `sleep`.
use std::fmt::Display;
use std::io;
use std::ops::Bound;
use std::time::Duration;

use twins::sdk::{Buffer, Child, Command, ErrorCode, Stdio, wait_any};

/// `ok: VALUE`, or the error's code (its kind if it has none).
fn result<T: Display>(result: io::Result<T>) -> String {
    match result {
        Ok(value) => format!("ok: {value}"),
        Err(err) => ErrorCode::of(&err).map_or_else(|| format!("{:?}", err.kind()), |code| code.name().to_owned()),
    }
}

fn main() {
    let mut lines = Vec::new();
    let mut case = |what: &str, outcome: String| lines.push(format!("{what}: {outcome}"));

    case("nul in an argument", result(Command::new("true").arg("a\0b").status()));
    case("nul in the program", result(Command::new("tr\0ue").status()));
    case("empty program", result(Command::new("").status()));
    case("relative program path", result(Command::new("bin/true").status()));
    case("relative directory", result(Command::new("true").current_dir("tmp").status()));
    case("stdin merged with stdout", result(Command::new("true").stdin(Stdio::merge_with_stdout()).status()));
    case("stdout merged with stdout", result(Command::new("true").stdout(Stdio::merge_with_stdout()).status()));
    case("zero timeout", result(Command::new("sleep").arg("10").timeout(Duration::ZERO).status()));

    let mut child = Command::new("true").spawn().expect("spawn true");
    for signal in [0, -1, 32, 64, 256] {
        case(&format!("signal {signal}"), result(child.signal(signal).map(|()| "sent")));
    }
    case("terminal resize without a terminal", result(child.pty_resize(24, 80).map(|()| "resized")));
    case("terminal resize to nothing", result(child.pty_resize(0, 0).map(|()| "resized")));
    case("wait", result(child.wait()));
    let mut none: [Child; 0] = [];
    case("wait for any of no children", result(wait_any(&mut none, Some(Duration::ZERO)).map(|_| "returned")));

    case("buffer of 2 GiB", result(Buffer::zeroed(2 << 30).map(|b| b.len())));
    let buffer = Buffer::from_slice(&[7; 100]).expect("100 bytes");
    case("backwards slice", result(buffer.slice((Bound::Included(60), Bound::Excluded(50))).map(|b| b.len())));
    case("slice past the end", result(buffer.slice(50..101).map(|b| b.len())));
    let mut dst = [0; 8];
    case("read past the end", result(buffer.read_at(101, &mut dst)));

    for line in lines {
        println!("{line}");
    }
}

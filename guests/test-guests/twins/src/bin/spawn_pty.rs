//! Pseudo-terminals through the SDK: the child sees a terminal on 0, 1 and 2, `stty size` reports
//! the size set at spawn and after `pty_resize`, `sh -i` answers input, terminal control sequences
//! the child prints reach the guest unchanged, and resizing a child without a terminal, or to 0
//! rows, fails with its own code. With `hang TOKEN` it starts a shell on a terminal with a
//! background descendant and exits with both running. Needs `sh` and `stty`.
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use twins::sdk::{Child, Command, ErrorCode, Stdio};

fn on_pty(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::pty()).stdout(Stdio::pty()).stderr(Stdio::pty());
    command
}

/// Reads the terminal until its output contains `needle` or ends.
fn read_until(child: &mut Child, needle: &str) -> String {
    let stdout = child.stdout.as_mut().expect("the terminal is read as stdout");
    let end = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&out).contains(needle) && Instant::now() < end {
        match stdout.read(&mut buf).expect("read the terminal") {
            0 => break,
            n => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hang(token: &str) {
    let script = format!("sh -c 'sleep 1000; : {token}' & echo started; wait; : {token}");
    let mut child = on_pty("sh", &["-c", &script]).spawn().expect("spawn sh on a terminal");
    assert!(read_until(&mut child, "started").contains("started"));
    println!("started");
    // Exits with the shell and its background job running: they end with the guest.
    std::mem::forget(child);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "hang") {
        hang(&args[2]);
        return;
    }

    let script = "test -t 0 && test -t 1 && test -t 2 && echo tty-on-all";
    let mut child = on_pty("sh", &["-c", script]).spawn().expect("spawn sh");
    assert!(child.stderr.is_none(), "stderr is the same terminal, read as stdout");
    let out = read_until(&mut child, "tty-on-all\r\n");
    assert!(out.contains("tty-on-all\r\n"), "{out:?}");
    assert!(child.wait().expect("wait").success());

    let mut child = on_pty("stty", &["size"]).pty_size(33, 101).spawn().expect("spawn stty");
    let out = read_until(&mut child, "\n");
    assert!(out.contains("33 101\r\n"), "{out:?}");
    assert!(child.wait().expect("wait").success());

    let mut child = on_pty("sh", &["-c", "read x; stty size"]).spawn().expect("spawn sh");
    child.pty_resize(50, 132).expect("resize");
    child.stdin.as_mut().expect("the terminal is written as stdin").write_all(b"go\n").expect("write");
    let out = read_until(&mut child, "50 132");
    assert!(out.contains("50 132\r\n"), "{out:?}");
    assert!(child.wait().expect("wait").success());

    let mut child = on_pty("sh", &["-i"]).spawn().expect("spawn sh -i");
    child.stdin.as_mut().unwrap().write_all(b"echo $((6 * 7))x\n").expect("write");
    let out = read_until(&mut child, "42x\r\n");
    assert!(out.contains("42x\r\n"), "{out:?}");
    child.stdin.as_mut().unwrap().write_all(b"exit 3\n").expect("write");
    assert_eq!(child.wait().expect("wait").code(), Some(3));

    // Control sequences (a window title, a colour, a bell) and text that looks like wrt's own
    // messages are bytes for the guest, nothing more.
    let script = r"printf '\033]0;PTY-TITLE\007\033[31mwrt: PTY-MARKER\033[0m\n'";
    let mut child = on_pty("sh", &["-c", script]).spawn().expect("spawn sh");
    let out = read_until(&mut child, "\r\n");
    assert!(out.contains("\u{1b}]0;PTY-TITLE\u{7}\u{1b}[31mwrt: PTY-MARKER\u{1b}[0m\r\n"), "{out:?}");
    assert!(child.wait().expect("wait").success());

    // Resizing: 0 rows is invalid; a child without a terminal has none to resize.
    let mut child = on_pty("sh", &["-c", "read x"]).spawn().expect("spawn sh");
    let err = child.pty_resize(0, 80).expect_err("0 rows");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::InvalidArgument), "{err}");
    child.kill().expect("kill");
    child.wait().expect("wait");
    let mut child = Command::new("sh").args(["-c", "true"]).stdout(Stdio::piped()).spawn().expect("spawn sh");
    let err = child.pty_resize(24, 80).expect_err("no terminal");
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::NotPiped), "{err}");
    assert!(err.to_string().contains("no pseudo-terminal"), "{err}");
    child.wait().expect("wait");

    println!("pty ok");
}

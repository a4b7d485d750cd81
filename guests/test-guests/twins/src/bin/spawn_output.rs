//! Captures output: `echo` through `output()` (the one-shot `run`), both streams and the exit
//! code of `sh`, stdin bytes through `cat`, a child that fills stderr while the guest waits on
//! stdout (`wait_with_output` must not deadlock), the fallback when a stream is not captured,
//! output left unread at `wait`, and truncation at `output_limit` on both paths. Needs `echo`, `sh`, `cat` and `head`.
use std::io::Read;

use twins::sdk::{Command, Stdio};

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    cmd
}

fn main() {
    let out = Command::new("echo").args(["hello", "wrt"]).output().expect("echo");
    assert_eq!(out.stdout, b"hello wrt\n");
    assert!(out.stderr.is_empty(), "{:?}", out.stderr);
    assert!(out.status.success(), "{}", out.status);
    assert!(!out.status.stdout_truncated() && !out.status.stderr_truncated() && !out.status.timed_out());
    assert!(out.status.duration().as_nanos() > 0, "duration {:?}", out.status.duration());
    // `echo`'s own peak is below wrt's, which a child carries into its `execve`: not known.
    assert_eq!(out.status.peak_rss(), 0, "peak rss {}", out.status.peak_rss());

    let out = sh("echo out; echo err >&2; exit 4").output().expect("sh");
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"out\n"[..], &b"err\n"[..]));
    assert_eq!(out.status.code(), Some(4));
    assert!(!out.status.success());

    let out = Command::new("cat").output_with_input(b"round trip\n").expect("cat with input");
    assert_eq!(out.stdout, b"round trip\n");
    let out = Command::new("cat").output().expect("cat without input");
    assert!(out.stdout.is_empty() && out.status.success(), "{:?} {}", out.stdout, out.status);

    // 1 MB on stderr before anything on stdout: a guest reading only stdout would stall.
    let child = sh("head -c 1000000 /dev/zero >&2; echo done")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    let out = child.wait_with_output().expect("wait_with_output");
    assert_eq!(out.stdout, b"done\n");
    assert_eq!(out.stderr.len(), 1_000_000);
    assert!(out.stderr.iter().all(|&b| b == 0));
    assert!(out.status.success(), "{}", out.status);

    // Output not read before `wait` stays readable after it.
    let mut child = Command::new("echo").arg("kept").stdout(Stdio::piped()).spawn().expect("spawn echo");
    assert!(child.wait().expect("wait").success());
    let mut kept = String::new();
    child.stdout.take().expect("piped").read_to_string(&mut kept).expect("read after wait");
    assert_eq!(kept, "kept\n");

    // stderr not captured: output() spawns and reads stdout only.
    let out = sh("echo out; echo err >&2").stderr(Stdio::null()).output().expect("sh, stderr null");
    assert_eq!(out.stdout, b"out\n");
    assert!(out.stderr.is_empty());

    // Truncation: one-shot (the capture buffer is the limit) and through the pipes.
    let out = Command::new("head").args(["-c", "5000", "/dev/zero"]).output_limit(1000).output().expect("head");
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.status.stdout_truncated() && !out.status.stderr_truncated(), "{}", out.status);
    let child = Command::new("head")
        .args(["-c", "5000", "/dev/zero"])
        .output_limit(1000)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn head");
    let out = child.wait_with_output().expect("wait_with_output past the limit");
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.status.stdout_truncated(), "{}", out.status);

    println!("output ok");
}

//! Pipelines through the SDK: `printf | tr a-z A-Z | sort`, stderr merged into stdout (`2>&1`),
//! also into a pipeline stage, and `head -c N /dev/zero | tr '\0' a | wc -c`, whose N bytes never
//! pass through the guest: it prints how many bytes it read from its children, for the test to
//! compare with `--stats`. With `hang TOKEN` it starts
//! `yes TOKEN | sh -c 'cat; : TOKEN' | sh -c 'cat >/dev/null; : TOKEN'` and exits with all three
//! running. Needs `printf`, `tr`, `sort`, `sh`, `wc`, `head`, `yes` and `cat`.
use std::io::Read;

use twins::sdk::{Child, Command, Stdio};

/// Takes `child`'s stdout as the next stage's stdin.
fn next(child: &mut Child) -> Stdio {
    Stdio::from(child.stdout.take().expect("stdout is piped"))
}

fn hang(token: &str) {
    let mut first = Command::new("yes").arg(token).stdout(Stdio::piped()).spawn().expect("spawn yes");
    let script = format!("cat; : {token}");
    let mut second =
        Command::new("sh").args(["-c", &script]).stdin(next(&mut first)).stdout(Stdio::piped()).spawn().expect("sh");
    let script = format!("cat >/dev/null; : {token}");
    let third = Command::new("sh").args(["-c", &script]).stdin(next(&mut second)).spawn().expect("sh");
    println!("started");
    // Exits with all three running: they end with the guest. `forget` keeps the SDK from
    // releasing the handles (which would kill them) before the guest ends.
    std::mem::forget((first, second, third));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "hang") {
        hang(&args[2]);
        return;
    }
    let mut read = 0;

    let mut first = Command::new("printf").arg("pear\\napple\\nfig\\n").stdout(Stdio::piped()).spawn().expect("printf");
    let mut second = Command::new("tr")
        .args(["a-z", "A-Z"])
        .stdin(next(&mut first))
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn tr");
    assert!(first.stdout.is_none());
    let sorted = Command::new("sort").stdin(next(&mut second)).stderr(Stdio::null()).output().expect("sort");
    assert!(sorted.status.success(), "{}", sorted.status);
    assert_eq!(String::from_utf8_lossy(&sorted.stdout), "APPLE\nFIG\nPEAR\n");
    read += sorted.stdout.len();
    assert!(first.wait().expect("wait printf").success());
    assert!(second.wait().expect("wait tr").success());

    // 2>&1: both streams in order on stdout; no stderr to read.
    let script = "echo one; echo two >&2; echo three";
    let merged = Command::new("sh")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::merge_with_stdout())
        .output()
        .expect("sh 2>&1");
    assert_eq!(String::from_utf8_lossy(&merged.stdout), "one\ntwo\nthree\n");
    assert!(merged.stderr.is_empty());
    read += merged.stdout.len();
    let mut child = Command::new("sh")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .stderr(Stdio::merge_with_stdout())
        .spawn()
        .expect("sh 2>&1");
    assert!(child.stderr.is_none());
    let lines = Command::new("wc").arg("-l").stdin(next(&mut child)).output().expect("wc -l");
    assert_eq!(String::from_utf8_lossy(&lines.stdout).trim(), "3");
    read += lines.stdout.len();
    assert!(child.wait().expect("wait sh").success());

    // A megabyte from child to child: the guest reads only the count.
    let len = 1 << 20;
    let mut zeros =
        Command::new("head").args(["-c", &len.to_string(), "/dev/zero"]).stdout(Stdio::piped()).spawn().expect("head");
    let mut letters =
        Command::new("tr").args(["\\0", "a"]).stdin(next(&mut zeros)).stdout(Stdio::piped()).spawn().expect("spawn tr");
    let mut count = Command::new("wc").arg("-c").stdin(next(&mut letters)).stdout(Stdio::piped()).spawn().expect("wc");
    let mut text = String::new();
    count.stdout.take().expect("piped").read_to_string(&mut text).expect("read wc");
    assert_eq!(text.trim(), len.to_string());
    read += text.len();
    for mut stage in [zeros, letters, count] {
        let status = stage.wait().expect("wait");
        assert!(status.success(), "{status}");
    }
    println!("pipelines ok, read {read} bytes");
}

//! The guest of `wrt bench pipeline`: `bench_pipeline BYTES [HEAD TR WC]` runs
//! `head -c BYTES /dev/zero | tr '\0' a | wc -c` as three children wired child to child (each
//! stage's stdin is the previous stage's stdout; the bytes never pass through the guest), reads
//! only the last stage's output, waits for all three, and prints the count. It exits with 1,
//! saying why on stderr, when an argument is bad, a spawn fails, a stage does not exit with 0,
//! or the count is not BYTES. HEAD, TR and WC replace the stages' program names.
use std::io::Read;
use std::process::exit;

use wrt_guest::{Child, Command, Stdio};

fn fail(message: &str) -> ! {
    eprintln!("bench_pipeline: {message}");
    exit(1)
}

/// Takes `child`'s stdout as the next stage's stdin.
fn next(child: &mut Child) -> Stdio {
    Stdio::from(child.stdout.take().expect("stdout is piped"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (bytes, head, tr, wc) = match args.as_slice() {
        [bytes] => (bytes, "head", "tr", "wc"),
        [bytes, head, tr, wc] => (bytes, head.as_str(), tr.as_str(), wc.as_str()),
        _ => fail("usage: bench_pipeline BYTES [HEAD TR WC]"),
    };
    let Ok(len) = bytes.parse::<u64>() else {
        fail(&format!("`{bytes}` is not a number of bytes"));
    };
    let spawn = |command: &mut Command, name: &str| {
        command.spawn().unwrap_or_else(|e| fail(&format!("cannot spawn `{name}`: {e}")))
    };
    let mut zeros = spawn(Command::new(head).args(["-c", bytes, "/dev/zero"]).stdout(Stdio::piped()), head);
    let mut letters = spawn(Command::new(tr).args(["\\0", "a"]).stdin(next(&mut zeros)).stdout(Stdio::piped()), tr);
    let mut count = spawn(Command::new(wc).arg("-c").stdin(next(&mut letters)).stdout(Stdio::piped()), wc);
    let mut text = String::new();
    if let Err(e) = count.stdout.take().expect("stdout is piped").read_to_string(&mut text) {
        fail(&format!("cannot read the output of `{wc}`: {e}"));
    }
    for (name, mut stage) in [(head, zeros), (tr, letters), (wc, count)] {
        match stage.wait() {
            Ok(status) if status.success() => {}
            Ok(status) => fail(&format!("`{name}` ended with {status}")),
            Err(e) => fail(&format!("cannot wait for `{name}`: {e}")),
        }
    }
    match text.trim().parse::<u64>() {
        Ok(counted) if counted == len => println!("{counted}"),
        _ => fail(&format!("`{wc}` counted `{}`, expected `{len}`", text.trim())),
    }
}

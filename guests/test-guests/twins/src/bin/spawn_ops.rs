//! Runs a script of process operations read from stdin, for the fuzz target `process_ops`:
//! children spawned with any stdio, their pipes taken, written, read, closed and dropped in
//! any order, children waited for, signalled, killed, piped into others and dropped, before or
//! after they end. Every operation's error is expected (a handle already gone, a pipe not
//! piped, a full table) and only counted; a panic (a trap) is the failure the fuzzer looks for.
//! Prints `ops: <run> ok, <failed> failed` and exits 0. Children: `true`, `cat`, `sh`, `sleep`,
//! each with a 1 s timeout.
use std::io::{Read, Write};
use std::time::Duration;

use twins::sdk::{Child, ChildStdin, ChildStdout, Command, Stdio, wait_any};

struct Script<'a> {
    bytes: &'a [u8],
}

impl Script<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(*first)
    }
}

fn stdio(bits: u8) -> Stdio {
    match bits % 5 {
        0 => Stdio::null(),
        1 | 2 => Stdio::piped(),
        3 => Stdio::inherit(),
        _ => Stdio::pty(),
    }
}

fn command(program: u8, modes: u8) -> Command {
    let mut command = match program % 4 {
        0 => Command::new("true"),
        1 => Command::new("cat"),
        2 => {
            let mut sh = Command::new("sh");
            sh.args(["-c", "echo out; echo err >&2; exit 3"]);
            sh
        }
        _ => {
            let mut sleep = Command::new("sleep");
            sleep.arg("0.05");
            sleep
        }
    };
    let stderr = if modes & 0x40 != 0 { Stdio::merge_with_stdout() } else { stdio(modes >> 4) };
    command.stdin(stdio(modes)).stdout(stdio(modes >> 2)).stderr(stderr).timeout(Duration::from_secs(1));
    command
}

/// The slot `index` picks among `slots` (wrapping), if there are any.
fn pick<T>(slots: &mut [Option<T>], index: u8) -> Option<&mut Option<T>> {
    let len = slots.len();
    if len == 0 { None } else { slots.get_mut(usize::from(index) % len) }
}

fn main() {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes).expect("read the script");
    let mut script = Script { bytes: &bytes };
    let mut children: Vec<Option<Child>> = Vec::new();
    let mut stdins: Vec<Option<ChildStdin>> = Vec::new();
    let mut stdouts: Vec<Option<ChildStdout>> = Vec::new();
    let (mut ok, mut failed) = (0u32, 0u32);
    let mut count = |result: Result<(), std::io::Error>| match result {
        Ok(()) => ok += 1,
        Err(_) => failed += 1,
    };
    while let (Some(op), Some(a), Some(b)) = (script.byte(), script.byte(), script.byte()) {
        match op % 13 {
            0 if children.len() < 32 => count(command(a, b).spawn().map(|child| children.push(Some(child)))),
            1 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    stdins.push(child.stdin.take());
                }
            }
            2 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    stdouts.push(child.stdout.take());
                }
            }
            3 => {
                if let Some(Some(stdin)) = pick(&mut stdins, a) {
                    count(stdin.write_all(&vec![b'x'; usize::from(b) * 64]));
                }
            }
            4 => {
                if let Some(Some(stdout)) = pick(&mut stdouts, a) {
                    let mut buf = vec![0; usize::from(b) + 1];
                    count(stdout.read(&mut buf).map(drop));
                }
            }
            5 => {
                if b % 2 == 0 {
                    pick(&mut stdins, a).map(Option::take);
                } else {
                    pick(&mut stdouts, a).map(Option::take);
                }
            }
            6 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    count(child.wait_timeout(Duration::from_millis(u64::from(b))).map(drop));
                }
            }
            7 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    count(child.kill());
                }
            }
            8 => {
                pick(&mut children, a).map(Option::take);
            }
            9 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    // Not the stop signals, which would hold a child until its timeout.
                    let signal = i32::from(b % 70) - 2;
                    let signal = if (19..=22).contains(&signal) { 9 } else { signal };
                    count(child.signal(signal));
                }
            }
            10 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    count(child.try_wait().map(drop));
                }
            }
            11 => {
                let mut live: Vec<&mut Child> = children.iter_mut().flatten().collect();
                count(wait_any(&mut live, Some(Duration::from_millis(u64::from(b % 20)))).map(drop));
            }
            12 if children.len() < 32 => {
                if let Some(Some(child)) = pick(&mut children, a) {
                    let piped = child.pipe_into(&mut command(1, b));
                    count(piped.map(|child| children.push(Some(child))));
                }
            }
            _ => {}
        }
    }
    println!("ops: {ok} ok, {failed} failed");
}

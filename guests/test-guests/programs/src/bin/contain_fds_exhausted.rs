//! Runs `sh -c <argv[1]>`, copies the first two lines it prints (its pids, which the test
//! needs before the run can end) to stdout, then opens `/data/file` (argv[2]) until the
//! descriptor table is full (`EMFILE`), prints `full after N: <error>` and, with `exit`
//! (argv[3]), exits with 3 at once (`proc_exit`, so the run ends while the descriptors are still
//! open), leaving the shell and whatever it started to the end of the run; with `hang`, waits
//! for the shell, so that only a signal to wrt ends the guest.
//! Needs `sh`, a preopen holding the file, and a low `RLIMIT_NOFILE` (the guest opens until it).
use std::io::{BufRead, BufReader, Write};

use wrt_guest::{Command, Stdio};

fn main() {
    let script = std::env::args().nth(1).expect("a shell script");
    let file = std::env::args().nth(2).expect("a file to open");
    let mode = std::env::args().nth(3).expect("`exit` or `hang`");
    let mut child = Command::new("sh").arg("-c").arg(&script).stdout(Stdio::piped()).spawn().expect("spawn sh");
    // Before, the shell's own stdout was wrt's: under load, the guest could fill its table and
    // exit (`exit`) before the shell had printed, and the test never learnt the pids.
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout"));
    for _ in 0..2 {
        let mut line = String::new();
        lines.read_line(&mut line).expect("a line from the shell");
        print!("{line}");
    }
    std::io::stdout().flush().expect("flush");
    let mut held = Vec::new();
    loop {
        match std::fs::File::open(&file) {
            Ok(f) => held.push(f),
            Err(err) => {
                assert!(!held.is_empty(), "could not open `{file}` once: {err}");
                println!("full after {}: {err}", held.len());
                break;
            }
        }
        assert!(held.len() < 1_000_000, "no descriptor limit reached");
    }
    std::io::stdout().flush().expect("flush");
    match mode.as_str() {
        "exit" => std::process::exit(3),
        "hang" => {
            let status = child.wait().expect("wait");
            panic!("the shell ended: {status}");
        }
        other => panic!("unknown mode `{other}`"),
    }
}

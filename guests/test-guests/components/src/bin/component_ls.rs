//! Runs `ls -l /` (or `ls` with the guest's arguments) through `wrt:process` (the one-shot
//! `run`), prints what it wrote to stdout and stderr and how it ended, and exits with its exit
//! code (or 128 + the signal that killed it; 100 if it could not run). Needs `ls`.
use std::io::Write;

use wrt_process::Command;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        args = vec!["-l".into(), "/".into()];
    }
    let out = match Command::new("ls").args(&args).output() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("cannot run `ls`: {err}");
            wrt_process::exit(100);
        }
    };
    std::io::stdout().write_all(&out.stdout).expect("write stdout");
    std::io::stderr().write_all(&out.stderr).expect("write stderr");
    println!("ls: {}", out.status);
    wrt_process::exit(match (out.status.code(), out.status.signal()) {
        (Some(code), _) => code,
        (_, Some(signal)) => 128 + signal,
        _ => 101,
    });
}

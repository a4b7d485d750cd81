//! Runs `ls -l /` through `wrt:process` (the one-shot `run`), prints what it wrote to stdout and
//! stderr and how it ended, and exits with its exit code (or 128 + the signal that killed it).
//! Needs `ls`.
use std::io::Write;
use std::process::ExitCode;

use wrt_process::Command;

fn main() -> ExitCode {
    let out = match Command::new("ls").args(["-l", "/"]).output() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("cannot run `ls -l /`: {err}");
            return ExitCode::from(100);
        }
    };
    std::io::stdout().write_all(&out.stdout).expect("write stdout");
    std::io::stderr().write_all(&out.stderr).expect("write stderr");
    println!("ls: {}", out.status);
    let code = match (out.status.code(), out.status.signal()) {
        (Some(code), _) => code,
        (_, Some(signal)) => 128 + signal,
        _ => 101,
    };
    ExitCode::from(u8::try_from(code).unwrap_or(101))
}

//! `wrt`: run WebAssembly guests in a sandbox whose guests may run host programs.

use std::process::ExitCode;

mod cmd;

fn main() -> ExitCode {
    match cmd::Cli::parse_or_exit().run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("wrt: {err:#}");
            ExitCode::from(2)
        }
    }
}

//! `wrt`: run WebAssembly guests in a sandbox whose guests may run host programs.

use std::process::ExitCode;

use clap::Parser;
use wrt_runtime::wrt_host_spawn::raise_open_files_limit;

mod cmd;

fn main() -> ExitCode {
    // Children hold pipes: use all the descriptors the hard limit allows (spawns stay within a budget).
    let _ = raise_open_files_limit();
    match cmd::Cli::parse().run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("wrt: {err:#}");
            ExitCode::from(2)
        }
    }
}

//! `wrt`: run WebAssembly guests in a sandbox whose guests may run host programs.

use std::process::ExitCode;

#[macro_use]
mod output_lines;

mod cmd;
mod process_settings;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse_or_exit();
    // Then, while wrt has one thread: the process-wide settings that only the CLI may choose.
    match process_settings::apply(cli.contains_descendants(), cli.starts_own_children()).and_then(|()| cli.run()) {
        Ok(code) => code,
        Err(err) => {
            say!("wrt: {err:#}");
            ExitCode::from(2)
        }
    }
}

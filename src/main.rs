//! `wrt`: run WebAssembly guests in a sandbox whose guests may run host programs.

use std::process::ExitCode;

#[macro_use]
mod output_lines;

mod cmd;
mod process_settings;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse_or_exit();
    // Then, while wrt has one thread: the process-wide settings that only the CLI may choose.
    let code =
        match process_settings::apply(cli.contains_descendants(), cli.starts_own_children(), cli.handles_own_signals())
            .and_then(|()| cli.run())
        {
            Ok(code) => code,
            Err(err) => {
                say!("wrt: {err:#}");
                ExitCode::from(2)
            }
        };
    // A termination signal that came meanwhile decides the status (128 + the signal), even if
    // the guest ended first because its children died of the signal's cleanup.
    wrt_runtime::containment::hold_exit_while_ending();
    code
}

//! The subcommands of `wrt`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub(crate) mod bench;
#[cfg(unix)]
pub(crate) mod policy;
pub(crate) mod run;

/// A WebAssembly sandbox runtime whose guests may run host programs.
#[derive(Debug, Parser)]
#[command(name = "wrt", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a WebAssembly module (WASI preview 1)
    Run(run::RunArgs),
    /// Measure spawn, buffer and startup workloads against their floors, compare settings
    Bench(bench::BenchArgs),
    /// Check a spawn policy file, or explain the decision a spawn request would get
    #[cfg(unix)]
    Policy(policy::PolicyArgs),
}

impl Cli {
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Run(args) => args.run(),
            Command::Bench(args) => args.run(),
            #[cfg(unix)]
            Command::Policy(args) => args.run(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }
}

//! The subcommands of `wrt`.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub(crate) mod bench;
pub(crate) mod cache;
#[cfg(unix)]
pub(crate) mod policy;
pub(crate) mod run;

/// A WebAssembly sandbox runtime whose guests may run host programs.
///
/// `wrt app.wasm [ARGS]` is short for `wrt run app.wasm [ARGS]`, as in wasmtime.
#[derive(Debug, Parser)]
#[command(
    name = "wrt",
    version,
    about,
    propagate_version = true,
    args_conflicts_with_subcommands = true,
    arg_required_else_help = true,
    subcommand_value_name = "COMMAND",
    override_usage = "wrt [OPTIONS] <MODULE> [ARGS]...\n       wrt <COMMAND>"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// `wrt app.wasm`: the flags and module of `wrt run`
    #[command(flatten)]
    run: run::RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a WebAssembly module (WASI preview 1)
    Run(Box<run::RunArgs>),
    /// Measure spawn, buffer, startup, instantiate and pipeline workloads against their floors, compare settings
    Bench(bench::BenchArgs),
    /// Check a spawn policy file, or explain the decision a spawn request would get
    #[cfg(unix)]
    Policy(policy::PolicyArgs),
    /// Show or clear the cache of compiled modules
    Cache(cache::CacheArgs),
}

impl Cli {
    /// Parses the command line, or exits as clap does, except that an unknown option gets
    /// wrt's advice rather than clap's (whose `-- --flag` would make the flag the module).
    pub(crate) fn parse_or_exit() -> Self {
        Self::try_parse().unwrap_or_else(|err| match unknown_option(&err) {
            Some(message) => {
                say!("{message}");
                std::process::exit(2);
            }
            None => err.exit(),
        })
    }

    /// Whether wrt may make itself the subreaper of every descendant, which kills every child
    /// no spawner tracks when a guest ends and reaps such children as they exit: not for
    /// `wrt bench`, which starts and waits for host programs of its own (the floors).
    pub(crate) fn contains_descendants(&self) -> bool {
        !matches!(self.command, Some(Command::Bench(_)))
    }

    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Some(Command::Run(args)) => args.run(),
            Some(Command::Bench(args)) => args.run(),
            #[cfg(unix)]
            Some(Command::Policy(args)) => args.run(),
            Some(Command::Cache(args)) => args.run(),
            None => self.run.run(),
        }
    }
}

/// The value of a flag that switches something on or off (`--gc on|off`, `--dontfork on|off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnOff {
    On,
    Off,
}

/// wrt's message for an option clap does not know.
fn unknown_option(err: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(option)) = err.get(ContextKind::InvalidArg) else { return None };
    let similar = match err.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(similar)) => format!("; did you mean `{similar}`?"),
        _ => String::new(),
    };
    Some(format!(
        "wrt: unknown option `{option}`{similar} (wrt's options come before the module, everything after it \
         goes to the guest; see `wrt run --help`)"
    ))
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command};

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    /// The module and the guest's arguments, as `wrt` parsed `argv`.
    fn module_and_args(argv: &[&str]) -> Vec<String> {
        let cli = Cli::try_parse_from(argv).unwrap();
        let run = match cli.command {
            Some(Command::Run(run)) => *run,
            None => cli.run,
            Some(other) => panic!("{other:?}"),
        };
        run.module_and_args().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn everything_after_the_module_is_the_guests() {
        for prefix in [&["wrt", "run"][..], &["wrt"]] {
            let argv = |rest: &[&'static str]| prefix.iter().chain(rest).copied().collect::<Vec<_>>();
            assert_eq!(module_and_args(&argv(&["t.wasm", "--dir", "/", "-v"])), ["t.wasm", "--dir", "/", "-v"]);
            assert_eq!(module_and_args(&argv(&["t.wasm", "-V"])), ["t.wasm", "-V"]);
            assert_eq!(module_and_args(&argv(&["t.wasm", "--", "x"])), ["t.wasm", "--", "x"]);
            assert_eq!(module_and_args(&argv(&["--env", "A=1", "t.wasm", "--help"])), ["t.wasm", "--help"]);
            assert_eq!(module_and_args(&argv(&["--", "t.wasm", "--", "-x"])), ["t.wasm", "--", "-x"]);
        }
    }

    #[test]
    fn unknown_options_get_wrts_advice() {
        let err = Cli::try_parse_from(["wrt", "run", "--mystery", "app.wasm"]).unwrap_err();
        assert_eq!(
            super::unknown_option(&err).unwrap(),
            "wrt: unknown option `--mystery` (wrt's options come before the module, everything after it goes to \
             the guest; see `wrt run --help`)"
        );
        let err = Cli::try_parse_from(["wrt", "--max-memroy", "1MiB", "app.wasm"]).unwrap_err();
        assert!(super::unknown_option(&err).unwrap().contains("did you mean `--max-memory`?"));
    }

    #[test]
    fn subcommands_still_win() {
        let cli = Cli::try_parse_from(["wrt", "cache", "dir"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Cache(_))));
    }
}

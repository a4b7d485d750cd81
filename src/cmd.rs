//! The subcommands of `wrt`.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[cfg(feature = "bench")]
pub(crate) mod bench;
pub(crate) mod cache;
pub(crate) mod compile;
#[cfg(unix)]
pub(crate) mod policy;
pub(crate) mod run;
pub(crate) mod serve;

/// `wrt --help`: the commands and the options most runs use; `wrt run --help` lists them all.
const TOP_HELP: &str = "\
{about-with-newline}
{usage-heading} {usage}

Commands:
{subcommands}

Common options of `wrt run` (`wrt run --help` lists every one):
      --dir <HOST[::GUEST]>      Give the guest a host directory, read-write
      --ro-dir <HOST[::GUEST]>   Give the guest a host directory, read-only
      --env <NAME[=VALUE]>       Set an environment variable of the guest
      --allow-run <PROGRAM>      Let the guest run a host program (its children are confined)
      --policy <FILE>            Let the guest run host programs under a spawn policy file
      --timeout <DURATION>       Stop the guest after this long, e.g. `30s`
      --max-memory <SIZE>        Memory limit of the guest, e.g. `512MiB`
      --invoke <NAME>            Call an exported function instead of `_start`
      --no-cache                 Compile without the cache of compiled modules
  -h, --help                     Print help
  -V, --version                  Print version
";

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
    override_usage = "wrt [OPTIONS] <MODULE> [ARGS]...\n       wrt <COMMAND>",
    help_template = TOP_HELP
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
    /// Run a WebAssembly module (WASI preview 1) or a command component (WASI 0.2 or 0.3)
    Run(Box<run::RunArgs>),
    /// Serve HTTP with a `wasi:http` service component, a fresh instance per request
    Serve(Box<serve::ServeArgs>),
    /// Measure spawn, buffer, startup, instantiate and pipeline workloads against their floors, compare settings
    #[cfg(feature = "bench")]
    Bench(bench::BenchArgs),
    /// `wrt bench` in a build without it: says so, rather than taking `bench` for a module.
    #[cfg(not(feature = "bench"))]
    #[command(hide = true, disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Check a spawn policy file, or explain the decision a spawn request would get
    #[cfg(unix)]
    Policy(policy::PolicyArgs),
    /// Show or clear the cache of compiled modules
    Cache(cache::CacheArgs),
    /// Compile a module or component ahead of time, for `wrt run --allow-precompiled`
    Compile(compile::CompileArgs),
}

impl Cli {
    /// Parses the command line, or exits as clap does, except that an unknown option gets
    /// wrt's advice rather than clap's (whose `-- --flag` would make the flag the module).
    pub(crate) fn parse_or_exit() -> Self {
        if let Some(cli) = Self::parse_run_alone(std::env::args_os()) {
            return cli;
        }
        Self::try_parse().unwrap_or_else(|err| match unknown_option(&err) {
            Some(message) => {
                say!("{message}");
                std::process::exit(2);
            }
            None => err.exit(),
        })
    }

    /// `wrt run …`, the command nearly every invocation is, parsed by `wrt run`'s arguments
    /// alone: building every command's arguments (bench, policy, cache, compile) took about
    /// 0.3 ms of a run of hello. `None` for any other command line, and for one that does not
    /// parse this way (help, a version request, a mistake): the whole command line then parses
    /// it again and prints what it always prints.
    fn parse_run_alone(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<Self> {
        use clap::{Args, FromArgMatches};
        let mut args = args.into_iter();
        let bin = args.next()?;
        if args.next()? != "run" {
            return None;
        }
        let command = run::RunArgs::augment_args(clap::Command::new("wrt").disable_version_flag(true));
        let matches = command.try_get_matches_from(std::iter::once(bin).chain(args)).ok()?;
        let run = run::RunArgs::from_arg_matches(&matches).ok()?;
        Some(Self { command: None, run })
    }

    /// Whether wrt may make itself the subreaper of every descendant, which kills every child
    /// no spawner tracks when a guest ends and reaps such children as they exit: not for
    /// `wrt bench`, which starts and waits for host programs of its own (the floors).
    pub(crate) fn contains_descendants(&self) -> bool {
        !self.starts_own_children()
    }

    /// Whether the command handles `SIGINT` and `SIGTERM` itself: `wrt serve`, which shuts
    /// down gracefully and exits 0.
    pub(crate) fn handles_own_signals(&self) -> bool {
        matches!(self.command, Some(Command::Serve(_)))
    }

    /// Whether the command starts host programs of its own, outside any spawner: `wrt bench`
    /// (the floors and the peers).
    pub(crate) fn starts_own_children(&self) -> bool {
        #[cfg(feature = "bench")]
        if matches!(self.command, Some(Command::Bench(_))) {
            return true;
        }
        false
    }

    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Some(Command::Run(args)) => args.run(),
            Some(Command::Serve(args)) => args.run(),
            #[cfg(feature = "bench")]
            Some(Command::Bench(args)) => args.run(),
            #[cfg(not(feature = "bench"))]
            Some(Command::Bench { .. }) => {
                say!("wrt: this wrt was built without `wrt bench` (the cargo feature `bench`, on by default)");
                Ok(ExitCode::from(2))
            }
            #[cfg(unix)]
            Some(Command::Policy(args)) => args.run(),
            Some(Command::Cache(args)) => args.run(),
            Some(Command::Compile(args)) => args.run(),
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
        _ => nearest_flag(option).map(|flag| format!("; did you mean `{flag}`?")).unwrap_or_default(),
    };
    Some(format!(
        "wrt: unknown option `{option}`{similar} (wrt's options come before the module, everything after it \
         goes to the guest; see `wrt run --help`)"
    ))
}

/// The long flag of `wrt run` nearest to `option` (clap suggests none for short misspellings
/// such as `--dri`): at most one edit or swap of neighbours away, or two for longer flags.
fn nearest_flag(option: &str) -> Option<String> {
    use clap::CommandFactory;
    let typed = option.strip_prefix("--")?.split('=').next()?;
    let command = Cli::command();
    let run = command.find_subcommand("run")?;
    let most = if typed.len() <= 5 { 1 } else { 2 };
    run.get_arguments()
        .filter_map(|arg| arg.get_long())
        .map(|long| (edits(typed, long), long))
        .filter(|&(distance, _)| distance <= most)
        .min()
        .map(|(_, long)| format!("--{long}"))
}

/// Edits (insert, delete, replace, swap of neighbours) between `a` and `b`.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command};

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    /// `wrt run …` parsed by `wrt run`'s arguments alone gives what the whole command line
    /// gives; help, version and mistakes are left to the whole command line.
    #[test]
    fn run_alone_parses_as_the_whole_command_line() {
        let os = |argv: &[&str]| argv.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for argv in [
            &["wrt", "run", "app.wasm"][..],
            &["wrt", "run", "--dir", "/tmp::/t", "--timeout", "2s", "app.wasm", "a", "--b", "-c"],
            &["wrt", "run", "--allow-run", "sh", "--env", "A=1", "-W", "fuel=10", "app.wasm", "run"],
            &["wrt", "run", "--invoke", "add", "app.wasm", "1", "2"],
            &["wrt", "run", "--", "app.wasm", "--help"],
        ] {
            let alone = Cli::parse_run_alone(os(argv)).unwrap_or_else(|| panic!("{argv:?}"));
            let Some(Command::Run(whole)) = Cli::try_parse_from(argv).unwrap().command else { panic!("{argv:?}") };
            assert_eq!(format!("{:?}", alone.run), format!("{whole:?}"), "{argv:?}");
            assert!(alone.command.is_none());
        }
        for argv in [
            &["wrt", "run", "--help"][..],
            &["wrt", "run", "--version"],
            &["wrt", "run", "--dri", "x", "app.wasm"],
            &["wrt", "run"],
            &["wrt", "app.wasm"],
            &["wrt", "bench", "startup"],
            &["wrt"],
        ] {
            assert!(Cli::parse_run_alone(os(argv)).is_none(), "{argv:?}");
        }
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
        for (typed, meant) in [("--dri", "--dir"), ("--ro-dri", "--ro-dir"), ("--timout", "--timeout")] {
            let err = Cli::try_parse_from(["wrt", "run", typed, "x", "app.wasm"]).unwrap_err();
            let message = super::unknown_option(&err).unwrap();
            assert!(message.contains(&format!("did you mean `{meant}`?")), "{typed}: {message}");
        }
        let err = Cli::try_parse_from(["wrt", "run", "--zzzzzz", "app.wasm"]).unwrap_err();
        assert!(!super::unknown_option(&err).unwrap().contains("did you mean"));
    }

    /// The options `wrt --help` lists by hand are options of `wrt run`.
    #[test]
    fn top_help_names_real_options() {
        let command = Cli::command();
        let run = command.find_subcommand("run").unwrap();
        let longs: Vec<&str> = run.get_arguments().filter_map(|a| a.get_long()).collect();
        let listed: Vec<&str> = super::TOP_HELP
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("--"))
            .map(|rest| rest.split([' ', '<']).next().unwrap())
            .filter(|flag| !["help", "version"].contains(flag))
            .collect();
        assert!(listed.len() >= 8, "{listed:?}");
        for flag in listed {
            assert!(longs.contains(&flag), "`--{flag}` is not an option of `wrt run`");
        }
    }

    #[test]
    fn subcommands_still_win() {
        let cli = Cli::try_parse_from(["wrt", "cache", "dir"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Cache(_))));
    }
}

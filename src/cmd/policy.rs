//! `wrt policy`: check a spawn policy file, and explain the decision a spawn request would get.
//! The logic lives in `wrt-host-spawn` (`Policy::report`, `Policy::explain`).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use wrt_runtime::wrt_host_spawn::{ChildSandbox, Command, Explanation, Policy, landlock_abi};
use wrt_text::Shown;

use super::OnOff;

/// Check a spawn policy file, or explain what it decides
#[derive(Debug, Args)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Validate a policy file, show what every rule resolves to, and warn about rules that
    /// are effectively allow-all. Exits 0 when clean, 1 with warnings, 2 on errors
    Check {
        /// The policy file (TOML, see docs/policy.md)
        file: PathBuf,
    },
    /// Print the decision a guest's spawn request would get (allow or deny, the rule, the
    /// resolved path, the child's argv, environment and working directory) without running
    /// anything. Exits 0 when the program would run, 1 when not, 2 on errors
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// The policy file (TOML, see docs/policy.md)
    file: PathBuf,

    /// The working directory the request asks for
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// A variable the request sets; repeatable
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,

    /// A directory the guest would be given read-write (as `wrt run --dir`); repeatable
    #[arg(long = "dir", value_name = "HOST")]
    dirs: Vec<PathBuf>,

    /// A directory the guest would be given read-only (as `wrt run --ro-dir`); repeatable
    #[arg(long = "ro-dir", value_name = "HOST")]
    ro_dirs: Vec<PathBuf>,

    /// The child sandbox, as `wrt run --child-sandbox`
    #[arg(long, value_name = "on|off", default_value = "on")]
    child_sandbox: OnOff,

    /// The child view, as `wrt run --child-view`
    #[arg(long, value_name = "on|off", default_value = "on")]
    child_view: OnOff,

    /// The program and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "PROGRAM ARGS")]
    argv: Vec<OsString>,
}

impl PolicyArgs {
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            PolicyCommand::Check { file } => check(&file),
            PolicyCommand::Explain(args) => args.run(),
        }
    }
}

fn check(file: &PathBuf) -> anyhow::Result<ExitCode> {
    let policy = Policy::from_file(file)?;
    let report = policy.report().with_context(|| format!("invalid policy file `{}`", file.display()))?;
    let mut out = std::io::stdout().lock();
    for (index, (written, path)) in report.allow.iter().enumerate() {
        writeln!(out, "allow rule {}: `{}` runs {}", index + 1, written.display(), path.display())?;
    }
    for (index, (written, paths)) in report.deny.iter().enumerate() {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        writeln!(out, "deny rule {}: `{}` covers {}", index + 1, written.display(), paths.join(", "))?;
    }
    for warning in &report.warnings {
        writeln!(out, "warning: {}", warning.message)?;
    }
    let verdict = if report.warnings.is_empty() { "ok" } else { "valid, with warnings" };
    writeln!(out, "policy `{}`: {verdict}", file.display())?;
    Ok(ExitCode::from(u8::from(!report.warnings.is_empty())))
}

impl ExplainArgs {
    fn run(self) -> anyhow::Result<ExitCode> {
        let policy = Policy::from_file(&self.file)?;
        let (program, args) = self.argv.split_first().context("no program given after `--`")?;
        let mut command = Command::new(program);
        command.args(args);
        if let Some(cwd) = &self.cwd {
            command.cwd(cwd);
        }
        for spec in &self.env {
            let (name, value) = spec.split_once('=').with_context(|| format!("`--env {spec}` is not NAME=VALUE"))?;
            command.env(name, value);
        }
        let mut sandbox = match self.child_sandbox {
            OnOff::On => ChildSandbox::confined().view(self.child_view == OnOff::On),
            OnOff::Off => ChildSandbox::off(),
        };
        for dir in &self.ro_dirs {
            sandbox =
                sandbox.read(std::fs::canonicalize(dir).with_context(|| format!("--ro-dir `{}`", dir.display()))?);
        }
        for dir in &self.dirs {
            sandbox = sandbox.write(std::fs::canonicalize(dir).with_context(|| format!("--dir `{}`", dir.display()))?);
        }
        let explanation = policy.explain_with(&command, &sandbox)?;
        print(&explanation)?;
        let runs = explanation.decision.runs();
        Ok(ExitCode::from(u8::from(!runs)))
    }
}

fn print(e: &Explanation) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    // Every name and value is escaped: a newline in a guest's argument or variable must not
    // forge a line of its own (`decision: allow`).
    writeln!(out, "decision: {}", e.decision)?;
    // The reason is the spawner's message, whose guest strings are escaped already.
    writeln!(out, "reason: {}", e.reason)?;
    if let Some(rule) = &e.rule {
        writeln!(out, "rule: {}", Shown::new(rule))?;
    }
    if let Some(path) = &e.path {
        writeln!(out, "path: {}", Shown::new(path))?;
    }
    if e.argv.is_empty() {
        return Ok(());
    }
    let argv: Vec<String> = e.argv.iter().map(|a| format!("\"{}\"", Shown::new(a))).collect();
    writeln!(out, "argv: [{}]", argv.join(", "))?;
    if let Some(cwd) = &e.cwd {
        writeln!(out, "cwd: {}", Shown::new(cwd))?;
    }
    if e.env.is_empty() {
        writeln!(out, "env: (empty)")?;
    }
    for (name, value) in &e.env {
        writeln!(out, "env: {}={}", Shown::new(name), Shown::new(value))?;
    }
    match e.timeout {
        Some(timeout) => writeln!(out, "timeout: {timeout:?}")?,
        None => writeln!(out, "timeout: none")?,
    }
    if let Some(limit) = e.output_limit {
        writeln!(out, "output limit: {limit} bytes per stream")?;
    }
    if !e.rlimits.is_empty() {
        writeln!(out, "rlimits: {:?}", e.rlimits)?;
    }
    if let Some(strategy) = e.strategy {
        writeln!(out, "strategy: {strategy}")?;
    }
    if let Some(sandbox) = &e.sandbox {
        if !sandbox.enabled {
            writeln!(out, "sandbox: off (the child has wrt's own authority)")?;
            return Ok(());
        }
        writeln!(out, "sandbox: on (Landlock ABI {}, no new privileges, no capabilities)", landlock_abi())?;
        let list = |dirs: &[String]| if dirs.is_empty() { "none".to_owned() } else { dirs.join(", ") };
        writeln!(
            out,
            "sandbox read: the system locations, the policy's programs and search path; {}",
            list(&sandbox.read)
        )?;
        writeln!(out, "sandbox write: {}", list(&sandbox.write))?;
        if sandbox.private_tmp {
            let at = if sandbox.view { " at /tmp" } else { "" };
            writeln!(
                out,
                "sandbox tmp: a directory of the guest's children{at} (TMPDIR), removed when the guest ends"
            )?;
        }
        if sandbox.view {
            writeln!(
                out,
                "sandbox view: the file system read-only but for the write directories; /proc of the guest's \
                 children only; System V IPC of their own"
            )?;
        } else {
            writeln!(
                out,
                "sandbox view: off (the host's mounts; no /proc; file metadata open where Landlock reaches)"
            )?;
        }
        writeln!(out, "sandbox network: {}", if sandbox.network { "allowed by the rule" } else { "none" })?;
        let scope = if sandbox.scoped {
            "signals and abstract unix sockets stay within the child's tree"
        } else {
            "none (Landlock ABI < 6)"
        };
        writeln!(out, "sandbox scope: {scope}")?;
        match sandbox.max_processes {
            Some(max) => writeln!(out, "sandbox processes: at most {max} tasks for all of the guest's children")?,
            None => writeln!(out, "sandbox processes: unbounded (no pids control group can be made here)")?,
        }
    }
    Ok(())
}

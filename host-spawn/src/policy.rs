//! The deny-by-default policy: which programs may run, with which arguments, environment,
//! working directory and limits.

mod compiled;
mod file;
mod lint;
mod pattern;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use self::compiled::CompiledPolicy;
pub(crate) use self::compiled::Grant;
pub use self::lint::{PolicyReport, PolicyWarning};
use crate::error::PolicyError;
use crate::limits::Rlimits;
use crate::pin::Sha256;

/// The directories searched for bare program names unless the policy says otherwise.
pub const DEFAULT_SEARCH_PATH: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

/// Which host programs a [`Spawner`](crate::Spawner) may start, and how.
///
/// Deny by default: a program runs only if an allow rule names it, no deny rule names it
/// (deny wins), and its arguments, environment and working directory pass the rule's and the
/// policy's checks. Rules name programs by bare name (looked up on the policy's search path,
/// never the host's or the guest's `PATH`) or by absolute path; both are resolved to a
/// canonical path (symlinks followed) when the spawner is created, and a request matches a
/// rule when it resolves to the same canonical path.
///
/// Defaults of [`Policy::deny_all`]: no program allowed, search path
/// `/usr/local/bin:/usr/bin:/bin`, empty environment with no passthrough, `LD_*`/`DYLD_*`
/// refused, no working directory allowed besides the default `/`, 30 s timeout, 2 s grace
/// between `SIGTERM` and `SIGKILL`, 16 MiB output limit per stream, no resource limits,
/// 16 concurrent children, enforcing (not audit-only).
///
/// The same policy can be written as a TOML file; see [`Policy::from_toml_str`] and
/// `docs/policy.md`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use wrt_host_spawn::{Policy, ProgramRule};
///
/// let policy = Policy::deny_all()
///     .allow_program("true")
///     .allow(ProgramRule::new("git").args(["status", "**"]).timeout(Duration::from_secs(5)))
///     .deny_program("/usr/bin/sh")
///     .env_passthrough(["LANG"])
///     .max_children(4);
/// policy.validate()?;
/// # Ok::<(), wrt_host_spawn::PolicyError>(())
/// ```
///
/// # Ambient authority
///
/// Allowing a program hands it the host user's full authority: a shell or interpreter
/// (`sh -c`, `python -c`, `env`, `xargs`, `find -exec`, busybox) runs anything. Restrict such
/// programs with argument patterns or do not allow them. Environment passthrough copies host
/// values into the child.
#[derive(Debug, Clone)]
pub struct Policy {
    search_path: Vec<PathBuf>,
    allow: Vec<ProgramRule>,
    deny: Vec<PathBuf>,
    env_passthrough: Vec<OsString>,
    env_allow: Vec<OsString>,
    allow_ld_env: bool,
    cwd_allow: Vec<PathBuf>,
    default_cwd: PathBuf,
    timeout: Option<Duration>,
    kill_grace: Duration,
    output_limit: u64,
    rlimits: Rlimits,
    max_children: usize,
    audit_only: bool,
    sandbox: SandboxSettings,
    source: Option<PathBuf>,
}

/// The policy's part of the child sandbox (its `[sandbox]` table): whether children are
/// confined, and the locations they may reach besides the system's and the guest's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SandboxSettings {
    pub(crate) enabled: bool,
    pub(crate) read: Vec<PathBuf>,
    pub(crate) write: Vec<PathBuf>,
    pub(crate) max_processes: u64,
    /// Whether confined children run in the child view (`[sandbox] view`).
    pub(crate) view: bool,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            read: Vec::new(),
            write: Vec::new(),
            max_processes: crate::process_budget::DEFAULT_MAX_PROCESSES,
            view: true,
        }
    }
}

/// An allow rule for one program, with optional argument patterns and limits that replace
/// the policy's defaults for this program.
///
/// Defaults: any arguments, the policy's timeout, output limit and resource limits.
#[derive(Debug, Clone)]
pub struct ProgramRule {
    program: PathBuf,
    args: Option<Vec<Vec<String>>>,
    env: Vec<(OsString, OsString)>,
    timeout: Option<Option<Duration>>,
    output_limit: Option<u64>,
    rlimits: Option<Rlimits>,
    pub(super) sha256: Option<Sha256>,
    network: bool,
}

impl ProgramRule {
    /// A rule for `program`: a bare name (resolved on the policy's search path) or an
    /// absolute path.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: None,
            env: Vec::new(),
            timeout: None,
            output_limit: None,
            rlimits: None,
            sha256: None,
            network: false,
        }
    }

    /// Sets `name` to `value` in this program's environment, whatever the host and the request
    /// say (for example `PATH`, which a compiler needs to find its own tools). A request cannot
    /// override it.
    #[must_use]
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Adds one accepted argument list. Once any is added, the arguments must match one of
    /// them. Each element is a pattern matched against one argument: `*` matches any run of
    /// characters, `?` any one character (newlines and shell metacharacters too), `[0-9]` or
    /// `[!@-]` one character of a class, `\` escapes the next character, and a last element
    /// `**` matches any number of further arguments.
    ///
    /// A rule whose argument lists were all removed again cannot exist: at least one list is
    /// added by this call, and [`ProgramRule::args`] with an empty iterator accepts exactly
    /// "no arguments".
    #[must_use]
    pub fn args<I, S>(mut self, pattern: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let pattern = pattern.into_iter().map(Into::into).collect();
        self.args.get_or_insert_with(Vec::new).push(pattern);
        self
    }

    /// Replaces the policy's timeout for this program.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Runs this program without a timeout (requests may still set one).
    #[must_use]
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Replaces the policy's output limit (bytes per stream) for this program.
    #[must_use]
    pub fn output_limit(mut self, bytes: u64) -> Self {
        self.output_limit = Some(bytes);
        self
    }

    /// Replaces the policy's resource limits for this program.
    #[must_use]
    pub fn rlimits(mut self, rlimits: Rlimits) -> Self {
        self.rlimits = Some(rlimits);
        self
    }

    /// Pins the program's contents: it runs only while its file has this SHA-256, checked
    /// on each spawn on the descriptor that is then executed (see `docs/policy.md`). Only
    /// binaries can be pinned, not `#!` scripts.
    #[must_use]
    pub fn sha256(mut self, digest: Sha256) -> Self {
        self.sha256 = Some(digest);
        self
    }

    /// Lets this program (and what it starts) open sockets under the child sandbox, which
    /// otherwise refuses them (see [`ChildSandbox`](crate::ChildSandbox)).
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }
}

impl Default for Policy {
    fn default() -> Self {
        Self::deny_all()
    }
}

impl Policy {
    /// A policy that allows nothing, with the defaults listed on [`Policy`].
    pub fn deny_all() -> Self {
        Self {
            search_path: DEFAULT_SEARCH_PATH.iter().map(PathBuf::from).collect(),
            allow: Vec::new(),
            deny: Vec::new(),
            env_passthrough: Vec::new(),
            env_allow: Vec::new(),
            allow_ld_env: false,
            cwd_allow: Vec::new(),
            default_cwd: PathBuf::from("/"),
            timeout: Some(Duration::from_secs(30)),
            kill_grace: Duration::from_secs(2),
            output_limit: 16 << 20,
            rlimits: Rlimits::none(),
            max_children: 16,
            audit_only: false,
            sandbox: SandboxSettings::default(),
            source: None,
        }
    }

    /// Allows `program` (a bare name or an absolute path) with any arguments.
    #[must_use]
    pub fn allow_program(self, program: impl Into<PathBuf>) -> Self {
        self.allow(ProgramRule::new(program))
    }

    /// Adds an allow rule.
    #[must_use]
    pub fn allow(mut self, rule: ProgramRule) -> Self {
        self.allow.push(rule);
        self
    }

    /// Denies `program` (a bare name or an absolute path), even if an allow rule names it. A
    /// bare name covers every file it resolves to in any search directory, not only the first.
    /// A rule that can never match (relative, found nowhere, not an executable) makes the
    /// policy invalid.
    #[must_use]
    pub fn deny_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.deny.push(program.into());
        self
    }

    /// Replaces the directories searched for bare program names (absolute paths, in order).
    #[must_use]
    pub fn search_path<I, P>(mut self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.search_path = dirs.into_iter().map(Into::into).collect();
        self
    }

    /// Adds host environment variables copied into every child (when set on the host at
    /// spawn time).
    #[must_use]
    pub fn env_passthrough<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.env_passthrough.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds environment variables a request may set.
    #[must_use]
    pub fn env_allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.env_allow.extend(names.into_iter().map(Into::into));
        self
    }

    /// Lets `LD_*` and `DYLD_*` variables be listed in the passthrough and allow lists
    /// (default: refused everywhere). glibc's other unsafe variables (`GCONV_PATH`, `TMPDIR`,
    /// `TZDIR`, …) stay refused whatever this says.
    #[must_use]
    pub fn allow_ld_env(mut self, allow: bool) -> Self {
        self.allow_ld_env = allow;
        self
    }

    /// Allows requests to run in `dir` or any directory below it (`dir` must be absolute).
    #[must_use]
    pub fn cwd_allow(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd_allow.push(dir.into());
        self
    }

    /// Sets the working directory of requests that do not name one (default `/`; never the
    /// host's own working directory). It must be absolute; requests may also name it.
    #[must_use]
    pub fn default_cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.default_cwd = dir.into();
        self
    }

    /// Sets the default timeout; `None` runs children without one unless a rule or request
    /// sets it. Zero makes the policy invalid (it would kill every child at once).
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the grace period between `SIGTERM` and `SIGKILL` when a child times out.
    #[must_use]
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Sets the default output limit in bytes per piped stream.
    #[must_use]
    pub fn output_limit(mut self, bytes: u64) -> Self {
        self.output_limit = bytes;
        self
    }

    /// Sets the default resource limits.
    #[must_use]
    pub fn rlimits(mut self, rlimits: Rlimits) -> Self {
        self.rlimits = rlimits;
        self
    }

    /// Sets how many children may run at once.
    #[must_use]
    pub fn max_children(mut self, max: usize) -> Self {
        self.max_children = max;
        self
    }

    /// Audit-only mode: requests the policy would deny run anyway (with the policy's default
    /// limits and exactly the requested environment and working directory), and the audit log
    /// records them as `would-deny`. For finding out what a policy needs, never for production.
    #[must_use]
    pub fn audit_only(mut self, audit_only: bool) -> Self {
        self.audit_only = audit_only;
        self
    }

    /// Whether children are confined by the child sandbox (default on). Turning it off
    /// here turns it off for every spawner using this policy, whatever the spawner says.
    #[must_use]
    pub fn child_sandbox(mut self, enabled: bool) -> Self {
        self.sandbox.enabled = enabled;
        self
    }

    /// Lets confined children read (and execute) beneath `path` too, as they may the
    /// system locations: a tool installed outside `/usr`, for example.
    #[must_use]
    pub fn sandbox_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.sandbox.read.push(path.into());
        self
    }

    /// Lets confined children read and write beneath `dir` too: a scratch directory of the
    /// host's, for example. Every guest's children share it.
    #[must_use]
    pub fn sandbox_write(mut self, dir: impl Into<PathBuf>) -> Self {
        self.sandbox.write.push(dir.into());
        self
    }

    /// How many tasks (processes and threads) the confined children of one spawner, and
    /// everything they start, may have at once (default
    /// [`DEFAULT_MAX_PROCESSES`](crate::DEFAULT_MAX_PROCESSES)), where a pids control group can
    /// be made (see [`ChildSandbox`](crate::ChildSandbox)).
    #[must_use]
    pub fn sandbox_max_processes(mut self, max: u64) -> Self {
        self.sandbox.max_processes = max;
        self
    }

    /// Whether confined children run in the child view (on by default; `[sandbox] view` in a
    /// policy file; see [`ChildSandbox::view`](crate::ChildSandbox::view)). The view is on only
    /// where both the spawner's sandbox and the policy have it.
    #[must_use]
    pub fn sandbox_view(mut self, on: bool) -> Self {
        self.sandbox.view = on;
        self
    }

    /// The file the policy was read from ([`Policy::from_file`]), if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Whether the policy is in audit-only mode.
    pub fn is_audit_only(&self) -> bool {
        self.audit_only
    }

    /// Whether children run in the child sandbox ([`Policy::child_sandbox`]).
    pub fn is_child_sandboxed(&self) -> bool {
        self.sandbox.enabled
    }

    /// Checks that the policy can be used: every allowed program resolves, patterns parse,
    /// directories exist. [`Spawner::new`](crate::Spawner::new) runs the same checks.
    ///
    /// # Errors
    ///
    /// The first problem found, naming the rule.
    pub fn validate(&self) -> Result<(), PolicyError> {
        self.compile().map(drop)
    }
}

//! The deny-by-default policy: which programs may run, with which arguments, environment,
//! working directory and limits.

mod explain;
mod file;
mod lint;
mod pattern;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use self::explain::Explanation;
pub use self::lint::{PolicyReport, PolicyWarning};
use self::pattern::ArgsPattern;
use crate::command::Command;
use crate::error::{Denial, PolicyError};
use crate::limits::Rlimits;
use crate::pin::Sha256;
use crate::resolve::{ResolveError, resolve};

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

    /// Whether the policy is in audit-only mode.
    pub fn is_audit_only(&self) -> bool {
        self.audit_only
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

    pub(crate) fn compile(&self) -> Result<CompiledPolicy, PolicyError> {
        if let Some(dir) = self.search_path.iter().find(|d| !d.is_absolute()) {
            return Err(PolicyError::RelativeSearchDir { dir: dir.clone() });
        }
        if self.max_children == 0 {
            return Err(PolicyError::ZeroMaxChildren);
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(PolicyError::ZeroTimeout { index: None });
        }
        for name in self.env_passthrough.iter().chain(&self.env_allow) {
            self.check_env_name(name)?;
        }

        let mut allow = HashMap::with_capacity(self.allow.len());
        let mut first_index = HashMap::with_capacity(self.allow.len());
        for (index, rule) in self.allow.iter().enumerate() {
            let program = &rule.program;
            let path = match resolve(program.as_os_str(), &self.search_path) {
                Ok(path) => path,
                Err(ResolveError::Relative) => {
                    return Err(PolicyError::RelativeProgram { index, program: program.clone() });
                }
                Err(ResolveError::NotFound) => {
                    return Err(PolicyError::ProgramNotFound { index, program: program.clone() });
                }
                Err(ResolveError::NotExecutable(_)) => {
                    return Err(PolicyError::NotExecutable { index, program: program.clone() });
                }
            };
            let args = match &rule.args {
                None => None,
                Some(patterns) if patterns.is_empty() => return Err(PolicyError::EmptyArgs { index }),
                Some(patterns) => Some(
                    patterns
                        .iter()
                        .enumerate()
                        .map(|(pattern, parts)| {
                            ArgsPattern::parse(parts).map_err(|reason| PolicyError::BadPattern {
                                index,
                                pattern,
                                reason,
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            if rule.timeout == Some(Some(Duration::ZERO)) {
                return Err(PolicyError::ZeroTimeout { index: Some(index) });
            }
            for (name, value) in &rule.env {
                self.check_env_name(name)?;
                if value.as_bytes().contains(&0) {
                    return Err(PolicyError::BadEnvName { name: name.to_string_lossy().into() });
                }
            }
            if let Some(&first) = first_index.get(&path) {
                return Err(PolicyError::DuplicateRule { index, first, path });
            }
            if let Some(expected) = rule.sha256 {
                crate::pin::check_rule(&path, expected).map_err(|reason| PolicyError::Sha256 {
                    index,
                    program: program.clone(),
                    reason,
                })?;
            }
            first_index.insert(path.clone(), index);
            allow.insert(
                path,
                CompiledRule {
                    written: program.clone(),
                    args,
                    env: rule.env.iter().cloned().collect(),
                    timeout: rule.timeout,
                    output_limit: rule.output_limit,
                    rlimits: rule.rlimits,
                    sha256: rule.sha256,
                },
            );
        }

        // A deny rule by name covers every file that name resolves to on the search path (not
        // only the first, which is what runs): another copy further down the path, with an
        // allow rule of its own, is denied as well. A deny rule that can never match is an
        // error, so a typo cannot leave the program it meant allowed.
        let mut deny = Vec::new();
        for (index, rule) in self.deny.iter().enumerate() {
            let paths = resolve_all(rule.as_os_str(), &self.search_path);
            match paths {
                Err(ResolveError::Relative) => {
                    return Err(PolicyError::RelativeDeny { index, program: rule.clone() });
                }
                Err(ResolveError::NotFound) => {
                    return Err(PolicyError::DenyNotFound { index, program: rule.clone() });
                }
                Err(ResolveError::NotExecutable(_)) => {
                    return Err(PolicyError::DenyNotExecutable { index, program: rule.clone() });
                }
                Ok(paths) => deny.extend(paths.into_iter().map(|path| (path, rule.clone()))),
            }
        }

        let canonical_dir =
            |dir: &PathBuf| {
                if !dir.is_absolute() {
                    return Err(PolicyError::RelativeCwd { dir: dir.clone() });
                }
                fs::canonicalize(dir)
                    .and_then(|c| {
                        if c.is_dir() { Ok(c) } else { Err(std::io::Error::from(std::io::ErrorKind::NotADirectory)) }
                    })
                    .map_err(|source| PolicyError::Cwd { dir: dir.clone(), source })
            };
        let cwd_allow = self.cwd_allow.iter().map(canonical_dir).collect::<Result<_, _>>()?;
        let default_cwd = canonical_dir(&self.default_cwd)?;

        Ok(CompiledPolicy {
            search_path: self.search_path.clone(),
            allow,
            deny,
            env_passthrough: self.env_passthrough.clone(),
            env_allow: self.env_allow.iter().cloned().collect(),
            cwd_allow,
            default_cwd,
            timeout: self.timeout,
            kill_grace: self.kill_grace,
            output_limit: self.output_limit,
            rlimits: self.rlimits,
            max_children: self.max_children,
            audit_only: self.audit_only,
        })
    }

    /// A name the policy lists (passthrough, allow, or a rule's fixed environment) is well
    /// formed, not one of glibc's unsafe variables, and `LD_*`/`DYLD_*` only with
    /// `allow_ld_env`.
    fn check_env_name(&self, name: &OsStr) -> Result<(), PolicyError> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
            return Err(PolicyError::BadEnvName { name: name.to_string_lossy().into() });
        }
        match env_class(name) {
            EnvClass::Loader if !self.allow_ld_env => {
                Err(PolicyError::LoaderEnv { name: name.to_string_lossy().into() })
            }
            EnvClass::Unsafe => Err(PolicyError::UnsafeEnv { name: name.to_string_lossy().into() }),
            _ => Ok(()),
        }
    }
}

/// Every canonical path `program` resolves to: for a bare name, the executable in each search
/// directory that has one; for an absolute path, that path.
fn resolve_all(program: &OsStr, search_path: &[PathBuf]) -> Result<Vec<PathBuf>, ResolveError> {
    if program.as_bytes().contains(&b'/') {
        return resolve(program, search_path).map(|path| vec![path]);
    }
    let mut found = Vec::new();
    let mut first_err = None;
    for dir in search_path {
        match resolve(program, std::slice::from_ref(dir)) {
            Ok(path) if !found.contains(&path) => found.push(path),
            Ok(_) => {}
            Err(err) => {
                first_err.get_or_insert(err);
            }
        }
    }
    if found.is_empty() {
        return Err(match first_err {
            Some(ResolveError::NotExecutable(path)) => ResolveError::NotExecutable(path),
            _ => ResolveError::NotFound,
        });
    }
    Ok(found)
}

/// How the policy treats an environment variable's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvClass {
    /// `LD_*` and `DYLD_*`: refused unless `allow_ld_env` is set and the name is listed.
    Loader,
    /// glibc's other unsafe variables (those it removes for set-user-ID programs): refused
    /// always, `allow_ld_env` or not.
    Unsafe,
    /// Anything else: allowed when listed.
    Plain,
}

/// glibc's list of variables it drops for set-user-ID programs (`unsecvars.h`), apart from
/// `LD_*`, plus `GLIBC_TUNABLES`: each makes a program load or read files the caller chooses.
pub(crate) const UNSAFE_ENV: [&str; 13] = [
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_TRACE",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    "TMPDIR",
    "TZDIR",
];

pub(crate) fn env_class(name: &OsStr) -> EnvClass {
    let bytes = name.as_bytes();
    if bytes.starts_with(b"LD_") || bytes.starts_with(b"DYLD_") {
        EnvClass::Loader
    } else if UNSAFE_ENV.iter().any(|unsafe_name| unsafe_name.as_bytes() == bytes) {
        EnvClass::Unsafe
    } else {
        EnvClass::Plain
    }
}

#[derive(Debug)]
struct CompiledRule {
    written: PathBuf,
    args: Option<Vec<ArgsPattern>>,
    env: BTreeMap<OsString, OsString>,
    timeout: Option<Option<Duration>>,
    output_limit: Option<u64>,
    rlimits: Option<Rlimits>,
    sha256: Option<Sha256>,
}

/// A validated policy with every rule resolved to a canonical path.
#[derive(Debug)]
pub(crate) struct CompiledPolicy {
    pub(crate) search_path: Vec<PathBuf>,
    allow: HashMap<PathBuf, CompiledRule>,
    /// (canonical path, rule as written)
    deny: Vec<(PathBuf, PathBuf)>,
    env_passthrough: Vec<OsString>,
    env_allow: HashSet<OsString>,
    cwd_allow: Vec<PathBuf>,
    default_cwd: PathBuf,
    timeout: Option<Duration>,
    pub(crate) kill_grace: Duration,
    output_limit: u64,
    rlimits: Rlimits,
    pub(crate) max_children: usize,
    pub(crate) audit_only: bool,
}

/// What the policy lets a request do.
#[derive(Debug)]
pub(crate) struct Grant {
    /// Set only in audit-only mode: the denial that was not enforced.
    pub(crate) would_deny: Option<Denial>,
    /// The allow rule as written, if one matched; in audit-only mode, the rule (allow or
    /// deny) that would have denied the request, if one did.
    pub(crate) rule: Option<PathBuf>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) output_limit: u64,
    pub(crate) rlimits: Rlimits,
    /// The child's complete environment, sorted by name.
    pub(crate) env: BTreeMap<OsString, OsString>,
    /// The canonical working directory.
    pub(crate) cwd: PathBuf,
    /// The SHA-256 the matching allow rule pins.
    pub(crate) sha256: Option<Sha256>,
}

fn min_some<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl CompiledPolicy {
    /// Whether an allow rule is written exactly as `program` (a name or a path), so that
    /// failing to find it may be reported as such. For any other program a failed lookup is
    /// reported as a denial: a guest without permissions learns nothing about the host's files.
    pub(crate) fn names_allowed(&self, program: &OsStr) -> bool {
        self.allow.values().any(|rule| rule.written.as_os_str() == program)
    }

    /// Whether `--allow-run`-style advice helps a request for `program`: it resolves to an
    /// executable that no allow rule and no deny rule covers.
    pub(crate) fn allow_rule_would_help(&self, program: &OsStr) -> bool {
        resolve(program, &self.search_path)
            .is_ok_and(|path| !self.allow.contains_key(&path) && !self.deny.iter().any(|(denied, _)| *denied == path))
    }

    /// Every allow rule: (rule as written, canonical path).
    pub(crate) fn allowed(&self) -> impl Iterator<Item = (&Path, &Path)> + Clone {
        self.allow.iter().map(|(path, rule)| (rule.written.as_path(), path.as_path()))
    }

    /// Checks a validated request whose program resolved to `path`.
    pub(crate) fn check(&self, path: &Path, command: &Command) -> Result<Grant, (Denial, Option<PathBuf>)> {
        let mut env = BTreeMap::new();
        for name in &self.env_passthrough {
            if let Some(value) = std::env::var_os(name) {
                env.insert(name.clone(), value);
            }
        }
        for (name, value) in command.get_envs() {
            env.insert(name.clone(), value.clone());
        }
        let requested_cwd = command.get_cwd();

        match self.decide(path, command) {
            Ok((rule, cwd)) => {
                // The rule's own variables win over the host's and the request's.
                env.extend(rule.env.iter().map(|(k, v)| (k.clone(), v.clone())));
                Ok(Grant {
                    would_deny: None,
                    rule: Some(rule.written.clone()),
                    timeout: min_some(command.get_timeout(), rule.timeout.unwrap_or(self.timeout)),
                    output_limit: command
                        .get_output_limit()
                        .unwrap_or(u64::MAX)
                        .min(rule.output_limit.unwrap_or(self.output_limit)),
                    rlimits: command.get_rlimits().min(rule.rlimits.unwrap_or(self.rlimits)),
                    env,
                    cwd,
                    sha256: rule.sha256,
                })
            }
            // Audit-only mode waives the rules, not the meaning of a request: a relative
            // working directory would be resolved against the host's own, so it stays denied.
            Err((denial, rule)) if self.audit_only && requested_cwd.is_none_or(|cwd| cwd.is_absolute()) => Ok(Grant {
                would_deny: Some(denial),
                rule,
                timeout: min_some(command.get_timeout(), self.timeout),
                output_limit: command.get_output_limit().unwrap_or(u64::MAX).min(self.output_limit),
                rlimits: command.get_rlimits().min(self.rlimits),
                env,
                cwd: requested_cwd.map_or_else(
                    || self.default_cwd.clone(),
                    |cwd| fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned()),
                ),
                sha256: None,
            }),
            Err(denied) => Err(denied),
        }
    }

    /// The matching allow rule and the canonical working directory, or the first denial with
    /// the rule (deny or allow, as written) that decided it, if one did.
    fn decide(&self, path: &Path, command: &Command) -> Result<(&CompiledRule, PathBuf), (Denial, Option<PathBuf>)> {
        if let Some((_, rule)) = self.deny.iter().find(|(denied, _)| denied == path) {
            // Named by the request's spelling: what a symlink resolves to stays the host's secret.
            let denial = Denial::DenyRule { path: PathBuf::from(command.get_program()), rule: rule.clone() };
            return Err((denial, Some(rule.clone())));
        }
        let rule = self.allow.get(path).ok_or_else(|| (Denial::NotAllowed { path: path.to_owned() }, None))?;
        let written = || Some(rule.written.clone());
        if let Some(patterns) = &rule.args
            && !patterns.iter().any(|p| p.matches(command.get_args()))
        {
            return Err((Denial::Args { rule: rule.written.clone() }, written()));
        }
        for (name, _) in command.get_envs() {
            if env_class(name) != EnvClass::Plain && !self.env_allow.contains(name) {
                return Err((Denial::LoaderEnv { name: name.to_string_lossy().into() }, written()));
            }
            if !self.env_allow.contains(name) {
                return Err((Denial::Env { name: name.to_string_lossy().into() }, written()));
            }
        }
        let cwd = match command.get_cwd() {
            None => self.default_cwd.clone(),
            Some(requested) => {
                let denied = || (Denial::Cwd { cwd: requested.to_owned() }, written());
                if !requested.is_absolute() {
                    return Err(denied());
                }
                let canonical = fs::canonicalize(requested).map_err(|_| denied())?;
                // The default directory may also be asked for by name.
                let allowed = canonical == self.default_cwd
                    || self.cwd_allow.iter().any(|allowed| canonical.starts_with(allowed));
                if !canonical.is_dir() || !allowed {
                    return Err(denied());
                }
                canonical
            }
        };
        Ok((rule, cwd))
    }
}

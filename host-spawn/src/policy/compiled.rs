//! The compiled checker: a [`Policy`] validated and resolved into a [`CompiledPolicy`], and
//! the decision (a [`Grant`] or a [`Denial`]) for one request.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::pattern::ArgsPattern;
use super::{Policy, SandboxSettings};
use crate::command::Command;
use crate::error::{Denial, PolicyError};
use crate::limits::Rlimits;
use crate::pin::Sha256;
use crate::resolve::{FileId, ResolveError, resolve, resolve_id};

impl Policy {
    /// Validates the policy and resolves every rule to a canonical path, once: share the result
    /// (in an `Arc`) between the [`Spawner`](crate::Spawner)s of many guests with
    /// [`Spawner::from_compiled`](crate::Spawner::from_compiled), so that starting a guest
    /// resolves nothing.
    ///
    /// A compiled policy keeps the paths its rules resolved to when it was compiled: a rule
    /// naming a symlink keeps the target it had then (after the link is re-pointed, its new
    /// target is denied unless another rule allows it), a program deleted since is not found at
    /// spawn time, and a pinned rule still hashes the file at every spawn.
    ///
    /// # Errors
    ///
    /// As [`Policy::validate`].
    ///
    /// # Ambient authority
    ///
    /// Resolves programs and directories on the host's file system.
    pub fn compile(&self) -> Result<CompiledPolicy, PolicyError> {
        if let Some(dir) = self.search_path.iter().find(|d| !d.is_absolute()) {
            return Err(PolicyError::RelativeSearchDir { dir: dir.clone() });
        }
        if self.max_children == 0 {
            return Err(PolicyError::ZeroMaxChildren);
        }
        if self.sandbox.max_processes == 0 {
            return Err(PolicyError::ZeroMaxProcesses);
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
            if program.as_os_str().is_empty() {
                return Err(PolicyError::EmptyProgram { index });
            }
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
                    network: rule.network,
                },
            );
        }

        // A deny rule by name covers every file that name resolves to on the search path (not
        // only the first, which is what runs): another copy further down the path, with an
        // allow rule of its own, is denied as well. Each file is kept with its identity (device
        // and inode), so every hard link of it is denied too, whatever its name. A deny rule
        // that can never match is an error, so a typo cannot leave the program it meant allowed.
        let mut deny = Vec::new();
        for (index, rule) in self.deny.iter().enumerate() {
            let paths = self.resolve_deny(index)?;
            deny.extend(paths.into_iter().map(|(path, id)| (path, id, rule.clone())));
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
            default_path: default_path(&self.search_path),
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
            sandbox: SandboxSettings {
                enabled: self.sandbox.enabled,
                read: self.sandbox.read.iter().map(|p| canonical_sandbox_path(p)).collect::<Result<_, _>>()?,
                write: self.sandbox.write.iter().map(|p| canonical_sandbox_path(p)).collect::<Result<_, _>>()?,
                max_processes: self.sandbox.max_processes,
                view: self.sandbox.view,
            },
            source: self.source.clone(),
        })
    }

    /// Every file deny rule `index` covers, or why it could never match.
    fn resolve_deny(&self, index: usize) -> Result<Vec<(PathBuf, FileId)>, PolicyError> {
        let rule = &self.deny[index];
        resolve_all(rule.as_os_str(), &self.search_path).map_err(|err| match err {
            ResolveError::Relative => PolicyError::RelativeDeny { index, program: rule.clone() },
            ResolveError::NotFound => PolicyError::DenyNotFound { index, program: rule.clone() },
            ResolveError::NotExecutable(_) => PolicyError::DenyNotExecutable { index, program: rule.clone() },
        })
    }

    /// Why each deny rule that could never match could not, in rule order: what
    /// [`Policy::validate`] reports of the first, for all of them (a policy file reports them
    /// together).
    pub(super) fn deny_errors(&self) -> Vec<PolicyError> {
        (0..self.deny.len()).filter_map(|index| self.resolve_deny(index).err()).collect()
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

/// Every canonical path `program` resolves to, with the file's identity: for a bare name, the
/// executable in each search directory that has one; for an absolute path, that path.
fn resolve_all(program: &OsStr, search_path: &[PathBuf]) -> Result<Vec<(PathBuf, FileId)>, ResolveError> {
    if program.as_bytes().contains(&b'/') {
        return resolve_id(program, search_path).map(|found| vec![found]);
    }
    let mut found = Vec::new();
    let mut first_err = None;
    for dir in search_path {
        match resolve_id(program, std::slice::from_ref(dir)) {
            Ok(file) if !found.contains(&file) => found.push(file),
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
pub(super) struct CompiledRule {
    pub(super) written: PathBuf,
    pub(super) args: Option<Vec<ArgsPattern>>,
    env: BTreeMap<OsString, OsString>,
    timeout: Option<Option<Duration>>,
    output_limit: Option<u64>,
    rlimits: Option<Rlimits>,
    sha256: Option<Sha256>,
    network: bool,
}

/// A `[sandbox]` path: absolute and existing, canonicalised (Landlock rules hold for the
/// object, so the policy's spelling does not matter once it is opened).
fn canonical_sandbox_path(path: &Path) -> Result<PathBuf, PolicyError> {
    if !path.is_absolute() {
        return Err(PolicyError::RelativeSandboxPath { path: path.to_owned() });
    }
    fs::canonicalize(path).map_err(|source| PolicyError::SandboxPath { path: path.to_owned(), source })
}

/// A validated policy with every rule resolved to a canonical path: see [`Policy::compile`].
#[derive(Debug)]
pub struct CompiledPolicy {
    pub(crate) search_path: Vec<PathBuf>,
    /// The `PATH` a child gets when nothing else sets one ([`default_path`]).
    default_path: OsString,
    pub(super) allow: HashMap<PathBuf, CompiledRule>,
    /// (canonical path, the file's identity when compiled, rule as written)
    pub(super) deny: Vec<(PathBuf, FileId, PathBuf)>,
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
    pub(crate) sandbox: SandboxSettings,
    source: Option<PathBuf>,
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
    /// Whether the matching allow rule lets the child open sockets under the sandbox.
    pub(crate) network: bool,
}

fn min_some<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl CompiledPolicy {
    /// The directories a child may run in (the default one first), which the child view keeps
    /// visible.
    pub(crate) fn working_dirs(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.default_cwd.as_path()).chain(self.cwd_allow.iter().map(PathBuf::as_path))
    }

    /// Whether an allow rule is written exactly as `program` (a name or a path), so that
    /// failing to find it may be reported as such. For any other program a failed lookup is
    /// reported as a denial: a guest without permissions learns nothing about the host's files.
    pub(crate) fn names_allowed(&self, program: &OsStr) -> bool {
        self.allow.values().any(|rule| rule.written.as_os_str() == program)
    }

    /// Whether `--allow-run`-style advice helps a request for `program`: it resolves to an
    /// executable that no allow rule and no deny rule covers.
    pub(crate) fn allow_rule_would_help(&self, program: &OsStr) -> bool {
        resolve_id(program, &self.search_path)
            .is_ok_and(|(path, id)| !self.allow.contains_key(&path) && self.deny_rule(&path, id).is_none())
    }

    /// The deny rule (as written) that covers the file at canonical `path` with identity `id`:
    /// one that resolved to this path, or to another hard link of the same file.
    fn deny_rule(&self, path: &Path, id: FileId) -> Option<&PathBuf> {
        self.deny.iter().find(|(denied, denied_id, _)| denied == path || *denied_id == id).map(|(_, _, rule)| rule)
    }

    /// Every program the policy allows: the rule as written and the canonical path it
    /// resolved to when the policy was compiled.
    pub fn allowed_programs(&self) -> impl Iterator<Item = (&Path, &Path)> + Clone {
        self.allow.iter().map(|(path, rule)| (rule.written.as_path(), path.as_path()))
    }

    /// Whether any allow rule lets its program use the network (`network = true`).
    pub(crate) fn any_rule_allows_network(&self) -> bool {
        self.allow.values().any(|rule| rule.network)
    }

    /// The directories searched for bare program names, as the policy lists them.
    pub fn search_path(&self) -> &[PathBuf] {
        &self.search_path
    }

    /// The file the policy was read from ([`Policy::from_file`]), if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Checks a validated request whose program resolved to `path`, a file with identity `id`.
    pub(crate) fn check(&self, path: &Path, id: FileId, command: &Command) -> Result<Grant, (Denial, Option<PathBuf>)> {
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
        let with_path = |mut env: BTreeMap<OsString, OsString>| {
            if !env.contains_key(OsStr::new("PATH")) {
                env.insert(OsString::from("PATH"), self.default_path.clone());
            }
            env
        };

        match self.decide(path, id, command) {
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
                    env: with_path(env),
                    cwd,
                    sha256: rule.sha256,
                    network: rule.network,
                })
            }
            // Audit-only mode waives the rules, not the meaning of a request nor what keeps the
            // host safe: a working directory that is relative (it would be resolved against the
            // host's own) or not a directory (the spawn would fail) stays denied, and so do the
            // variables that change what a program loads, unless the policy allows them.
            Err((denial, rule)) if self.audit_only => {
                if let Some(name) = self.loader_env_refused(command) {
                    return Err((Denial::LoaderEnv { name }, rule));
                }
                let cwd = match requested_cwd {
                    None => self.default_cwd.clone(),
                    Some(cwd) => match fs::canonicalize(cwd) {
                        Ok(canonical) if cwd.is_absolute() && canonical.is_dir() => canonical,
                        _ => return Err((Denial::Cwd { cwd: cwd.to_owned() }, rule)),
                    },
                };
                Ok(Grant {
                    would_deny: Some(denial),
                    rule,
                    timeout: min_some(command.get_timeout(), self.timeout),
                    output_limit: command.get_output_limit().unwrap_or(u64::MAX).min(self.output_limit),
                    rlimits: command.get_rlimits().min(self.rlimits),
                    env: with_path(env),
                    cwd,
                    sha256: None,
                    network: false,
                })
            }
            Err(denied) => Err(denied),
        }
    }

    /// The first variable of the request that changes what a program loads (`LD_*`, glibc's
    /// unsafe ones) and that the policy does not allow: refused in audit-only mode too.
    fn loader_env_refused(&self, command: &Command) -> Option<String> {
        command
            .get_envs()
            .iter()
            .find(|(name, _)| env_class(name) != EnvClass::Plain && !self.env_allow.contains(name.as_os_str()))
            .map(|(name, _)| name.to_string_lossy().into_owned())
    }

    /// The matching allow rule and the canonical working directory, or the first denial with
    /// the rule (deny or allow, as written) that decided it, if one did.
    fn decide(
        &self,
        path: &Path,
        id: FileId,
        command: &Command,
    ) -> Result<(&CompiledRule, PathBuf), (Denial, Option<PathBuf>)> {
        if let Some(rule) = self.deny_rule(path, id) {
            // Named by the request's spelling: what a symlink resolves to stays the host's secret.
            let denial = Denial::DenyRule { path: PathBuf::from(command.get_program()), rule: rule.clone() };
            return Err((denial, Some(rule.clone())));
        }
        // Named by the request's spelling too: a bare name's denial must not tell where the
        // search path found it.
        let not_allowed = || (Denial::NotAllowed { path: PathBuf::from(command.get_program()) }, None);
        let rule = self.allow.get(path).ok_or_else(not_allowed)?;
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

/// The `PATH` a child gets when neither the host (`env.passthrough`), the request nor its rule
/// sets one: the search path, in order (a directory whose name holds `:`, which `PATH` cannot
/// say, left out).
fn default_path(search_path: &[PathBuf]) -> OsString {
    let dirs = search_path.iter().filter(|dir| !dir.as_os_str().as_bytes().contains(&b':'));
    std::env::join_paths(dirs).unwrap_or_default()
}

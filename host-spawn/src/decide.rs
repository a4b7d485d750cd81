//! The decision on a spawn request, made in one place for the [`Spawner`](crate::Spawner) and
//! for [`Policy::explain`](crate::Policy::explain): validation, resolution, the policy's rules
//! and the pin, and what a refused request may learn about the host.

use std::ffi::{CString, OsStr};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;

use crate::command::{Command, Stdio, Stream};
use crate::error::{Denial, InvalidRequest, SpawnError};
use crate::pin::Sha256;
use crate::policy::{CompiledPolicy, Grant};
use crate::resolve::{ResolveCache, ResolveError};
use crate::spawn_step::SpawnStep;
use crate::strategy::Strategy;
use crate::sys::{self, CStringArray};

/// How a request was decided, as the audit log and `wrt policy explain` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Decision {
    /// Allowed (and, by a spawner, started).
    Allow,
    /// Refused by the policy.
    Deny,
    /// The policy would refuse it, but audit-only mode runs it.
    WouldDeny,
    /// Not started for another reason: invalid, not found, not executable, a failed spawn.
    Error,
}

impl Decision {
    /// `"allow"`, `"deny"`, `"would-deny"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::WouldDeny => "would-deny",
            Self::Error => "error",
        }
    }

    /// Whether the request runs (allowed, or run anyway in audit-only mode).
    pub fn runs(self) -> bool {
        matches!(self, Self::Allow | Self::WouldDeny)
    }

    /// The decision a request that ended in `err` got.
    pub(crate) fn of_error(err: &SpawnError) -> Self {
        match err {
            SpawnError::Denied { .. } | SpawnError::TooManyChildren { .. } | SpawnError::TooManyDescriptors { .. } => {
                Self::Deny
            }
            _ => Self::Error,
        }
    }

    /// The decision of a request the policy let through, and its reason.
    pub(crate) fn of_grant(grant: &Grant) -> (Self, String) {
        match &grant.would_deny {
            Some(denial) => (Self::WouldDeny, denial.to_string()),
            None => (Self::Allow, "allowed".to_owned()),
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request the policy lets through, ready to be started.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// The canonical path to execute.
    pub(crate) path: PathBuf,
    pub(crate) grant: Grant,
    /// The child's arguments: `argv[0]` is the allow rule as written, so that a request cannot
    /// choose which personality a multi-call binary (git, busybox, bash as sh) takes through a
    /// symlink or path of its own; in audit-only mode, when no allow rule matched or a deny
    /// rule decided, the program as the request gave it.
    pub(crate) argv: CStringArray,
    /// For a rule with `sha256`: the program's descriptor, the file that was hashed, to be
    /// executed instead of its path.
    pub(crate) pinned: Option<OwnedFd>,
}

/// A request that does not start, with what the audit log records about it.
#[derive(Debug)]
pub(crate) struct Refused {
    /// What the requester is told.
    pub(crate) error: SpawnError,
    /// The canonical path, for the audit log only.
    pub(crate) path: Option<PathBuf>,
    /// The allow or deny rule that decided, as written.
    pub(crate) rule: Option<PathBuf>,
}

impl From<SpawnError> for Box<Refused> {
    fn from(error: SpawnError) -> Self {
        Box::new(Refused { error, path: None, rule: None })
    }
}

/// Checks `command` for malformed fields, without system calls, and returns its argument
/// vector (`argv[0]` the program as requested).
pub(crate) fn validate(command: &Command) -> Result<CStringArray, InvalidRequest> {
    let program = command.get_program();
    if program.is_empty() {
        return Err(InvalidRequest::EmptyProgram);
    }
    let mut argv = CStringArray::with_capacity(command.get_args().len() + 1);
    argv.push(CString::new(program.as_bytes()).map_err(|_| InvalidRequest::NulInProgram)?);
    for (index, arg) in command.get_args().iter().enumerate() {
        argv.push(CString::new(arg.as_bytes()).map_err(|_| InvalidRequest::NulInArg { index })?);
    }
    for (name, value) in command.get_envs() {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
            return Err(InvalidRequest::InvalidEnvName { name: lossy(name) });
        }
        if value.as_bytes().contains(&0) {
            return Err(InvalidRequest::NulInEnvValue { name: lossy(name) });
        }
    }
    if command.get_cwd().is_some_and(|cwd| cwd.as_os_str().as_bytes().contains(&0)) {
        return Err(InvalidRequest::NulInCwd);
    }
    for stream in [Stream::Stdin, Stream::Stdout] {
        if matches!(command.get_stdio(stream), Stdio::MergeWithStdout) {
            return Err(InvalidRequest::MergeNotStderr { stream });
        }
    }
    Ok(argv)
}

fn lossy(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}

/// Decides `command` under `policy`: everything a spawn checks before it reserves a slot and
/// opens descriptors. `strategy` names the preferred strategy in a failure to open a pinned
/// program.
///
/// What a refused request learns: a program given by path, or a bare name, that no allow rule
/// names as written is reported as not allowed under the request's own spelling, whether it
/// exists, is a directory, a dangling symlink or a denied program; only a bare name may be
/// reported not found (a lookup on the policy's own search path). The canonical path and the
/// deciding rule go to the audit log only.
pub(crate) fn decide(
    policy: &CompiledPolicy,
    resolved: &ResolveCache,
    command: &Command,
    strategy: Strategy,
) -> Result<Admitted, Box<Refused>> {
    // Named in errors only, so made when one is.
    let program = || PathBuf::from(command.get_program());
    let mut argv = match validate(command) {
        Ok(argv) => argv,
        Err(reason) => return Err(SpawnError::InvalidRequest { program: program(), reason }.into()),
    };
    let named = policy.names_allowed(command.get_program());
    let hidden =
        || SpawnError::Denied { path: None, reason: Denial::NotAllowed { path: program() }, program: program() };

    let (path, id) = match resolved.resolve_id(command.get_program(), &policy.search_path) {
        Ok(found) => found,
        Err(ResolveError::Relative) => {
            return Err(SpawnError::Denied { program: program(), path: None, reason: Denial::RelativeProgram }.into());
        }
        Err(_) if !named && !policy.audit_only && is_path(command.get_program()) => return Err(hidden().into()),
        Err(ResolveError::NotFound) => return Err(SpawnError::NotFound { program: program() }.into()),
        // A bare name no rule names that is not an executable (`..` is the search directory's
        // parent) would reveal where it resolved.
        Err(ResolveError::NotExecutable(_)) if !named && !policy.audit_only => return Err(hidden().into()),
        Err(ResolveError::NotExecutable(path)) => {
            return Err(SpawnError::NotExecutable { program: program(), path }.into());
        }
    };
    let grant = match policy.check(&path, id, command) {
        Ok(grant) => grant,
        Err((reason, rule)) => {
            // A request that no rule names as written learns nothing about what it resolved to
            // (symlink targets, that it is a denied program): the error names only its own
            // spelling.
            let error = match reason {
                Denial::NotAllowed { .. } | Denial::DenyRule { .. } if !named => hidden(),
                reason => SpawnError::Denied { program: program(), path: Some(path.clone()), reason },
            };
            return Err(Box::new(Refused { error, path: Some(path), rule }));
        }
    };
    let refused = |error| Box::new(Refused { error, path: Some(path.clone()), rule: grant.rule.clone() });
    let pinned = match grant.sha256 {
        None => None,
        Some(expected) => match open_pinned(&program(), &path, expected, grant.rule.as_deref(), strategy) {
            Ok(fd) => Some(fd),
            Err(err) => return Err(refused(err)),
        },
    };
    if let Some(rule) = &grant.rule
        && !matches!(grant.would_deny, Some(Denial::DenyRule { .. } | Denial::NotAllowed { .. }))
    {
        // Neither can contain NUL: the rule was validated when the policy was loaded.
        argv.set_first(CString::new(rule.as_os_str().as_bytes()).unwrap_or_default());
    }
    Ok(Admitted { path, grant, argv, pinned })
}

fn is_path(program: &OsStr) -> bool {
    program.as_bytes().contains(&b'/')
}

/// Opens the program at `path`, hashes it, and returns its descriptor if it has the `expected`
/// digest.
fn open_pinned(
    program: &Path,
    path: &Path,
    expected: Sha256,
    rule: Option<&Path>,
    strategy: Strategy,
) -> Result<OwnedFd, SpawnError> {
    let setup = |source| SpawnError::Spawn { program: path.to_owned(), strategy, step: SpawnStep::Setup, source };
    let opened = crate::pin::open_and_hash(path)
        .map_err(|err| setup(err.raw_os_error().map_or(Errno::EACCES, Errno::from_raw)))?;
    if opened.digest != expected {
        return Err(SpawnError::Denied {
            program: program.to_owned(),
            path: Some(path.to_owned()),
            reason: Denial::Sha256 { rule: rule.unwrap_or(path).to_owned(), actual: opened.digest.to_string() },
        });
    }
    sys::above_stdio(opened.fd).map_err(setup)
}

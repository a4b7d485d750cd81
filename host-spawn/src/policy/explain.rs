//! What `wrt policy explain` prints: the decision a spawn request would get, without running
//! anything.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::Policy;
use crate::command::Command;
use crate::error::{Denial, PolicyError};
use crate::limits::Rlimits;
use crate::resolve::{ResolveError, resolve_id};
use crate::sandbox::{self, ChildSandbox, Confinement};
use crate::strategy::Strategy;

/// The decision a request would get from a [`Spawner`](crate::Spawner) with this policy, and
/// what the child would get. Built by [`Policy::explain`]; nothing is run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Explanation {
    /// `"allow"`, `"deny"`, `"would-deny"` (audit-only mode) or `"error"` (invalid request,
    /// not found, not executable), as in the audit log.
    pub decision: &'static str,
    /// The denial or error message; `"allowed"`.
    pub reason: String,
    /// The allow or deny rule that decided, as written.
    pub rule: Option<PathBuf>,
    /// The canonical path that would be executed, if the program resolved.
    pub path: Option<PathBuf>,
    /// The child's argument vector (`argv[0]` is the allow rule as written), if it would run.
    pub argv: Vec<OsString>,
    /// The child's complete environment, if it would run.
    pub env: BTreeMap<OsString, OsString>,
    /// The child's working directory, if it would run.
    pub cwd: Option<PathBuf>,
    /// The timeout in force, if it would run with one.
    pub timeout: Option<Duration>,
    /// The output limit per piped stream, if it would run.
    pub output_limit: Option<u64>,
    /// The resource limits, if it would run.
    pub rlimits: Rlimits,
    /// vfork-exec for a confined child; else `posix_spawn`, or fork-exec when resource limits
    /// apply; if it would run.
    pub strategy: Option<Strategy>,
    /// What the child sandbox would let the child reach, if it would run.
    pub sandbox: Option<Confinement>,
}

impl Policy {
    /// The decision a spawn of `command` would get, and what the child would get, as
    /// [`Spawner::spawn`](crate::Spawner::spawn) decides it (validation, resolution, deny and
    /// allow rules, arguments, environment, working directory), without running anything.
    /// The concurrency limit is not considered. Host variables of `env.passthrough` are read
    /// now.
    ///
    /// # Errors
    ///
    /// The policy does not validate (as [`Policy::validate`]).
    ///
    /// # Ambient authority
    ///
    /// Resolves programs and directories on the host's file system, and reads the host's
    /// environment.
    pub fn explain(&self, command: &Command) -> Result<Explanation, PolicyError> {
        self.explain_with(command, &ChildSandbox::confined())
    }

    /// As [`Policy::explain`], for a spawner whose child sandbox is `sandbox` (the directories
    /// its guest was given, or off).
    ///
    /// # Errors
    ///
    /// The policy does not validate (as [`Policy::validate`]).
    ///
    /// # Ambient authority
    ///
    /// As [`Policy::explain`].
    pub fn explain_with(&self, command: &Command, sandbox: &ChildSandbox) -> Result<Explanation, PolicyError> {
        let policy = self.compile()?;
        let mut explanation = Explanation {
            decision: "error",
            reason: String::new(),
            rule: None,
            path: None,
            argv: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            timeout: None,
            output_limit: None,
            rlimits: Rlimits::none(),
            strategy: None,
            sandbox: None,
        };
        let program = command.get_program();
        if let Err(reason) = crate::spawner::validate_request(command) {
            explanation.reason = format!("invalid request: {reason}");
            return Ok(explanation);
        }
        let (path, id) = match resolve_id(program, &policy.search_path) {
            Ok(found) => found,
            Err(ResolveError::Relative) => {
                explanation.decision = "deny";
                explanation.reason = Denial::RelativeProgram.to_string();
                return Ok(explanation);
            }
            Err(ResolveError::NotFound) => {
                explanation.reason = format!("program `{}` not found", program.to_string_lossy());
                return Ok(explanation);
            }
            Err(ResolveError::NotExecutable(path)) => {
                explanation.reason = format!("`{}` is not executable", path.display());
                explanation.path = Some(path);
                return Ok(explanation);
            }
        };
        explanation.path = Some(path.clone());
        let grant = match policy.check(&path, id, command) {
            Ok(grant) => grant,
            Err((denial, rule)) => {
                explanation.decision = "deny";
                explanation.reason = denial.to_string();
                explanation.rule = rule;
                return Ok(explanation);
            }
        };
        (explanation.decision, explanation.reason) = match &grant.would_deny {
            Some(denial) => ("would-deny", denial.to_string()),
            None => ("allow", "allowed".to_owned()),
        };
        // As the spawner: the allow rule as written, not a deny rule that decided in audit-only
        // mode.
        let argv0 = match (&grant.rule, &grant.would_deny) {
            (Some(_), Some(Denial::DenyRule { .. } | Denial::NotAllowed { .. })) | (None, _) => program.to_owned(),
            (Some(rule), _) => rule.as_os_str().to_owned(),
        };
        explanation.argv = std::iter::once(argv0).chain(command.get_args().iter().cloned()).collect();
        explanation.rule = grant.rule;
        explanation.env = grant.env;
        explanation.cwd = Some(grant.cwd);
        explanation.timeout = grant.timeout;
        explanation.output_limit = Some(grant.output_limit);
        explanation.rlimits = grant.rlimits;
        let confinement = sandbox::describe(sandbox, &policy, grant.network);
        explanation.strategy = Some(if confinement.enabled {
            Strategy::VforkExec
        } else if grant.rlimits.is_empty() {
            Strategy::PosixSpawn
        } else {
            Strategy::ForkExec
        });
        explanation.sandbox = Some(confinement);
        Ok(explanation)
    }
}

//! What `wrt policy explain` prints: the decision a spawn request would get, without running
//! anything.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use std::os::unix::ffi::OsStringExt;

use crate::command::Command;
use crate::decide::{Admitted, Decision, Refused, decide};
use crate::error::{PolicyError, SpawnError};
use crate::limits::Rlimits;
use crate::policy::{CompiledPolicy, Policy};
use crate::resolve::ResolveCache;
use crate::sandbox::{self, ChildSandbox, Confinement};
use crate::strategy::Strategy;

/// The decision a request would get from a [`Spawner`](crate::Spawner) with this policy, and
/// what the child would get. Built by [`Policy::explain`]; nothing is run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Explanation {
    /// As in the audit log: allow, deny, would-deny (audit-only mode) or error (invalid
    /// request, not found, not executable).
    pub decision: Decision,
    /// The denial or error message, as the spawner gives it; `"allowed"`.
    pub reason: String,
    /// The allow or deny rule that decided, as written.
    pub rule: Option<PathBuf>,
    /// The canonical path that would be executed, if it would run or the refusal names it.
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
        Ok(explain(&policy, command, sandbox))
    }
}

/// The spawner's own decision ([`decide`]) on `command`, as an [`Explanation`].
fn explain(policy: &CompiledPolicy, command: &Command, sandbox: &ChildSandbox) -> Explanation {
    let admitted = match decide(policy, &ResolveCache::default(), command, Strategy::PosixSpawn) {
        Ok(admitted) => admitted,
        Err(refused) => {
            let Refused { error, rule, path } = *refused;
            // A refusal shows the canonical path only where the error itself names it: what the
            // requester would learn, no more.
            let path = match &error {
                SpawnError::Denied { path: shown, .. } => shown.as_ref().and(path),
                SpawnError::NotExecutable { path, .. } => Some(path.clone()),
                _ => None,
            };
            return Explanation {
                decision: Decision::of_error(&error),
                reason: wrt_text::error_chain(&error),
                rule,
                path,
                argv: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
                timeout: None,
                output_limit: None,
                rlimits: Rlimits::none(),
                strategy: None,
                sandbox: None,
            };
        }
    };
    let Admitted { path, grant, argv, .. } = admitted;
    let (decision, reason) = Decision::of_grant(&grant);
    let confinement = sandbox::describe(sandbox, policy, grant.network);
    let strategy = if confinement.enabled {
        Strategy::VforkExec
    } else if grant.rlimits.is_empty() {
        Strategy::PosixSpawn
    } else {
        Strategy::ForkExec
    };
    Explanation {
        decision,
        reason,
        rule: grant.rule,
        path: Some(path),
        argv: argv.iter().map(|arg| OsString::from_vec(arg.to_bytes().to_vec())).collect(),
        env: grant.env,
        cwd: Some(grant.cwd),
        timeout: grant.timeout,
        output_limit: Some(grant.output_limit),
        rlimits: grant.rlimits,
        strategy: Some(strategy),
        sandbox: Some(confinement),
    }
}

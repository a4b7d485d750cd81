//! What one guest instance holds for the spawn ABI: its spawner, its children by handle, and
//! the message of its last error.

use std::sync::Arc;

use wrt_host_spawn::{Child, Outcome, SpawnError, Spawner, error_chain};

use super::code::ErrorCode;
use super::handles::Handles;

/// A spawn the policy denied, as reported to [`crate::SandboxBuilder::on_spawn_denied`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DeniedSpawn {
    /// The guest that asked.
    pub guest: String,
    /// The program as the guest named it.
    pub program: String,
    /// The canonical path it resolved to, if it resolved.
    pub resolved: Option<std::path::PathBuf>,
    /// Whether no allow rule named the program at all (as opposed to a deny rule or a
    /// refused argument, variable or directory).
    pub no_allow_rule: bool,
    /// Whether an allow rule for the program as the guest spelled it would let it through: it
    /// resolves to an executable that no allow rule and no deny rule covers. (For a program
    /// given by path, showing this to the guest would tell it which files exist.)
    pub allow_rule_would_help: bool,
    /// Why, in one line.
    pub reason: String,
}

/// Called for every denied spawn; a returned hint is appended to the message the guest sees.
pub type DenialHook = Arc<dyn Fn(&DeniedSpawn) -> Option<String> + Send + Sync>;

/// One child of the guest.
#[derive(Debug)]
pub(crate) struct ChildEntry {
    pub(crate) child: Child,
    /// Its outcome, once it has been reaped.
    pub(crate) outcome: Option<Outcome>,
}

pub(crate) struct SpawnState {
    pub(crate) spawner: Spawner,
    pub(crate) children: Handles<ChildEntry>,
    pub(crate) last_error: String,
    pub(crate) on_denied: Option<DenialHook>,
    pub(crate) guest: String,
    /// Whether the sandbox's stdin, stdout and stderr are the host's own, so a child may
    /// inherit them.
    pub(crate) inherit: [bool; 3],
    /// Programs started so far.
    pub(crate) spawns: u64,
}

impl SpawnState {
    pub(crate) fn new(spawner: Spawner, on_denied: Option<DenialHook>, guest: String, inherit: [bool; 3]) -> Self {
        Self { spawner, children: Handles::default(), last_error: String::new(), on_denied, guest, inherit, spawns: 0 }
    }

    /// Records `message` as the last error and returns `code` as a host function's result.
    pub(crate) fn fail(&mut self, code: ErrorCode, message: impl Into<String>) -> i32 {
        self.last_error = message.into();
        code.to_return()
    }

    /// Fails a spawn request that never reached the spawner (outside linear memory, or
    /// malformed): like [`SpawnState::fail`], and writes its audit record, so that every
    /// request leaves one. `program` is the program's bytes as far as they could be read.
    pub(crate) fn fail_request(&mut self, code: ErrorCode, program: &[u8], message: String) -> i32 {
        // The request fails either way; a failed audit write cannot make it fail harder.
        let _ = self.spawner.audit_malformed(program, &message);
        self.fail(code, message)
    }

    /// Maps a spawn error to its code, records its message, and reports denials.
    pub(crate) fn spawn_failed(&mut self, program: &str, err: &SpawnError) -> i32 {
        let code = match err {
            SpawnError::InvalidRequest { .. } => ErrorCode::InvalidArgument,
            SpawnError::Denied { .. } => ErrorCode::Denied,
            SpawnError::NotFound { .. } => ErrorCode::NotFound,
            SpawnError::NotExecutable { .. } => ErrorCode::NotExecutable,
            SpawnError::TooManyChildren { .. } => ErrorCode::TooManyChildren,
            SpawnError::TooManyDescriptors { .. } => ErrorCode::NoMemory,
            _ => ErrorCode::SpawnFailed,
        };
        let mut message = error_chain(err);
        if let SpawnError::Denied { path, reason, .. } = err
            && let Some(hook) = &self.on_denied
        {
            let hint = hook(&DeniedSpawn {
                guest: self.guest.clone(),
                program: program.to_owned(),
                resolved: path.clone(),
                no_allow_rule: matches!(reason, wrt_host_spawn::Denial::NotAllowed { .. }),
                allow_rule_would_help: matches!(reason, wrt_host_spawn::Denial::NotAllowed { .. })
                    && self.spawner.allow_rule_would_help(program),
                reason: message.clone(),
            });
            if let Some(hint) = hint {
                message = format!("{message}; {hint}");
            }
        }
        self.fail(code, message)
    }
}

impl SpawnState {
    /// Kills every child still running and everything below it (SIGKILL to every descendant,
    /// whatever its session, and to its process group), reaps it, and releases every handle;
    /// then, if the process contains its descendants, kills and reaps the orphans they left
    /// ([`wrt_host_spawn::containment::sweep`]). The guest has ended, and its children never
    /// outlive it.
    pub(crate) fn end_children(&mut self) {
        let had_children = self.spawns > 0;
        self.spawner.kill_all();
        for mut entry in self.children.drain() {
            if entry.outcome.is_none() {
                let _ = entry.child.wait();
            }
        }
        if had_children {
            wrt_host_spawn::containment::sweep();
        }
    }
}

impl Drop for SpawnState {
    fn drop(&mut self) {
        self.end_children();
    }
}

//! What one guest instance holds for its children: its spawner, its children by handle, the
//! drains of captured streams, and counts for its statistics.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use wrt_host_spawn::{Child, ChildOutcome, RateLimit, SpawnError, Spawner, Verdict};
use wrt_text::error_chain;

use super::Failure;
use super::drain::{Drain, Drains, FINISH_WITHIN};
use crate::capture::Capture;
use crate::process_service::handles::Handles;
use wrt_abi::ErrorCode;

/// A spawn the policy denied, as reported to [`crate::RunOptions::on_spawn_denied`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DeniedSpawn {
    /// The guest that asked.
    pub guest: String,
    /// The program as the guest named it: raw, untrusted bytes. Print it only through
    /// [`wrt_text::Shown`], which escapes and caps it.
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
    /// Why, in one line, with every guest-controlled string in it escaped and capped
    /// ([`wrt_text::Shown`]): safe to print.
    pub reason: String,
}

/// Called for every denied spawn within the rate limit; a returned hint is appended to the
/// message the guest sees when the guest named the program by bare name
/// ([`guest_may_see_hint`]).
pub type DenialHook = Arc<dyn Fn(&DeniedSpawn) -> Option<String> + Send + Sync>;

/// Called with the guest's name and the number of denied spawns the rate limit kept from the
/// [`DenialHook`]: before the next denial it lets through, and when the guest instance ends.
pub type SuppressedHook = Arc<dyn Fn(&str, u64) + Send + Sync>;

/// The hooks that report denied spawns, and their rate limit.
#[derive(Clone, Default)]
pub(crate) struct DenialReporting {
    pub(crate) on_denied: Option<DenialHook>,
    pub(crate) on_suppressed: Option<SuppressedHook>,
    pub(crate) limit: RateLimit,
}

impl std::fmt::Debug for DenialReporting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenialReporting")
            .field("on_denied", &self.on_denied.as_ref().map(|_| "Fn"))
            .field("on_suppressed", &self.on_suppressed.as_ref().map(|_| "Fn"))
            .field("limit", &self.limit)
            .finish()
    }
}

/// One child of the guest.
#[derive(Debug)]
pub(crate) struct ChildEntry {
    /// Shared with the streams a component took from it (`wrt:process`), which read and
    /// write through it, so that its output limit and its own timeout hold for them too.
    pub(crate) child: SharedChild,
    /// Its outcome, once it has been reaped.
    pub(crate) outcome: Option<ChildOutcome>,
    /// The drains copying its inherited streams into the guest's captures.
    pub(crate) drains: Vec<Drain>,
    /// Which of stdin, stdout and stderr a component took as a stream.
    pub(crate) taken: [bool; 3],
}

/// A child that a handle and the streams taken from it share.
#[derive(Debug, Clone)]
pub(crate) struct SharedChild(Arc<Mutex<Child>>);

impl SharedChild {
    pub(crate) fn new(child: Child) -> Self {
        Self(Arc::new(Mutex::new(child)))
    }

    /// The child. Never held across a call into the guest, so never contended for long; a
    /// panic while it was held leaves a child that is still safe to use.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Child> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ChildEntry {
    pub(crate) fn new(child: Child, drains: Vec<Drain>) -> Self {
        Self { child: SharedChild::new(child), outcome: None, drains, taken: [false; 3] }
    }

    /// Records the child's outcome, once reaped, after what it wrote into the guest's captures
    /// has been copied there (see `process_service::drain`).
    pub(crate) fn reaped(&mut self, outcome: Option<ChildOutcome>) {
        if outcome.is_some() {
            let until = Instant::now() + FINISH_WITHIN;
            for drain in self.drains.drain(..) {
                drain.finish(until);
            }
        }
        self.outcome = outcome;
    }
}

pub(crate) struct SpawnState {
    /// `None` for a guest that imports none of wrt's functions and so can start nothing
    /// (`Guest::may_spawn`): building and dropping a spawner was a tenth of a run of such a
    /// guest. Boxed: a run's state is moved into its store, and a spawner is over 500 bytes.
    spawner: Option<Box<Spawner>>,
    pub(crate) children: Handles<ChildEntry>,
    pub(crate) denials: DenialReporting,
    pub(crate) guest: Arc<str>,
    /// Whether the sandbox's stdin, stdout and stderr are the host's own, so a child may
    /// inherit them.
    pub(crate) inherit: [bool; 3],
    /// The guest's captured stdout and stderr, where a child's inherited stream goes.
    pub(crate) captures: [Option<Capture>; 2],
    /// The threads copying children's inherited streams into those captures.
    pub(crate) drains: Drains,
    /// Programs started so far.
    pub(crate) spawns: u64,
    /// Spawn requests the spawner refused so far.
    pub(crate) refused: u64,
    /// Bytes the guest wrote to or read from its children's pipes through the ABI.
    pub(crate) stream_bytes: u64,
    /// The same, through `wasi:io` streams of a component's children, which count them here:
    /// made for the first such stream.
    pub(crate) shared_stream_bytes: Option<Arc<std::sync::atomic::AtomicU64>>,
}

impl SpawnState {
    pub(crate) fn new(
        spawner: Option<Spawner>,
        denials: DenialReporting,
        guest: Arc<str>,
        inherit: [bool; 3],
        captures: [Option<Capture>; 2],
    ) -> Self {
        let drains = Drains::default();
        Self {
            spawner: spawner.map(Box::new),
            children: Handles::default(),
            denials,
            guest,
            inherit,
            captures,
            drains,
            spawns: 0,
            refused: 0,
            stream_bytes: 0,
            shared_stream_bytes: None,
        }
    }

    /// Maps a spawn error to its code and message, and reports denials.
    pub(crate) fn spawn_error(&mut self, program: &str, err: &SpawnError) -> (ErrorCode, String) {
        self.refused += 1;
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
            && let Some(hook) = &self.denials.on_denied
            && let Verdict::Report { suppressed_before } = self.denials.limit.check(Instant::now())
        {
            if let Some(on_suppressed) = &self.denials.on_suppressed
                && suppressed_before > 0
            {
                on_suppressed(&self.guest, suppressed_before);
            }
            let hint = hook(&DeniedSpawn {
                guest: self.guest.to_string(),
                program: program.to_owned(),
                resolved: path.clone(),
                no_allow_rule: matches!(reason, wrt_host_spawn::Denial::NotAllowed { .. }),
                allow_rule_would_help: matches!(reason, wrt_host_spawn::Denial::NotAllowed { .. })
                    && self.spawner.as_deref().is_some_and(|spawner| spawner.allow_rule_would_help(program)),
                reason: message.clone(),
            });
            if let Some(hint) = hint
                && guest_may_see_hint(program)
            {
                message = format!("{message}; {hint}");
            }
        }
        (code, message)
    }
}

/// Whether the guest may read the embedder's hint about its denied spawn of `program`: only
/// when it named the program by bare name. For a path, a hint such as "allow it with
/// `--allow-run /some/path`" is given only when the path resolves to an executable
/// ([`DeniedSpawn::allow_rule_would_help`]), so the guest would learn which files exist on the
/// host; the embedder's own report (the hook's caller) still gets it.
pub(crate) fn guest_may_see_hint(program: &str) -> bool {
    !program.contains('/')
}

impl SpawnState {
    /// The spawner, or the failure of a guest that has none: one that imports none of wrt's
    /// functions, and so cannot ask (`Guest::may_spawn`).
    pub(crate) fn spawner(&self) -> Result<&Spawner, Failure> {
        self.spawner.as_deref().ok_or_else(|| {
            Failure::new(ErrorCode::Denied, "this guest imports no function of wrt's and starts no program")
        })
    }

    /// Names `request` in the audit records its spawner writes from now on.
    pub(crate) fn label_request(&self, request: Option<String>) {
        if let Some(spawner) = &self.spawner {
            spawner.label_request(request);
        }
    }

    /// Its kill switch, if it has a spawner.
    pub(crate) fn kill_switch(&self) -> Option<wrt_host_spawn::KillSwitch> {
        self.spawner.as_deref().map(Spawner::kill_switch)
    }

    /// The failure of a spawn the spawner refused or could not start
    /// ([`SpawnState::spawn_error`]).
    pub(crate) fn spawn_failure(&mut self, program: &str, err: &SpawnError) -> Failure {
        let (code, message) = self.spawn_error(program, err);
        Failure::new(code, message)
    }

    /// The failure of a spawn request that never reached the spawner (outside linear memory,
    /// or malformed), with its audit record written, so that every request leaves one.
    /// `program` is the program's bytes as far as they could be read.
    pub(crate) fn refuse_request(&mut self, code: ErrorCode, program: &[u8], message: String) -> Failure {
        // The request fails either way; a failed audit write cannot make it fail harder.
        if let Some(spawner) = &self.spawner {
            let _ = spawner.audit_malformed(program, &message);
        }
        Failure::new(code, message)
    }
}

impl SpawnState {
    /// Kills every child still running and everything below it (SIGKILL to every descendant,
    /// whatever its session, and to its process group), reaps it, and releases every handle;
    /// then, if the process contains its descendants, kills and reaps the orphans they left
    /// ([`wrt_host_spawn::containment::sweep`]). The guest has ended, and its children never
    /// outlive it.
    pub(crate) fn end_children(&mut self) {
        if self.spawns == 0 {
            // Nothing was ever started (every start, even one that failed later, counts): no
            // child, drain or orphan of this guest to end.
            return;
        }
        if let Some(spawner) = &self.spawner {
            spawner.kill_all();
        }
        for entry in self.children.drain() {
            if entry.outcome.is_none() {
                let _ = entry.child.lock().wait();
            }
        }
        wrt_host_spawn::containment::sweep();
        // Every writer of a drained pipe is gone now: let the drains copy what is left.
        self.drains.finish();
    }
}

impl SpawnState {
    /// Whether the guest ever started a child (its end then walks the process table) or had a
    /// spawn refused (its end may then report the refusals a rate limit held back, to the audit
    /// log's file and the embedder's hook).
    pub(crate) fn spawned_or_refused(&self) -> bool {
        self.spawns > 0 || self.refused > 0
    }
}

impl Drop for SpawnState {
    fn drop(&mut self) {
        self.end_children();
        let suppressed = self.denials.limit.take_suppressed();
        if let Some(on_suppressed) = &self.denials.on_suppressed
            && suppressed > 0
        {
            on_suppressed(&self.guest, suppressed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::guest_may_see_hint;

    #[test]
    fn the_guest_sees_a_denial_hint_only_for_a_bare_name() {
        assert!(guest_may_see_hint("ls"));
        assert!(guest_may_see_hint("git-upload-pack"));
        assert!(!guest_may_see_hint("/usr/bin/env"));
        assert!(!guest_may_see_hint("./tool"));
        assert!(!guest_may_see_hint("bin/tool"));
    }
}

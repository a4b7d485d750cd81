//! [`Spawner`]: checks requests against the policy, starts children, and cleans up after them.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::audit::{AuditLog, DecisionRecord, SuppressedRecord, Timestamp};
use crate::child::{Child, ChildParts};
use crate::command::{Command, Stdio, Stream};
use crate::decide::{Admitted, Decision, Refused, decide};
use crate::error::{OutputError, PolicyError, SpawnError};
use crate::escape::{shown, shown_list};
use crate::fd_budget;
use crate::outcome::Output;
use crate::policy::{CompiledPolicy, Grant, Policy};
use crate::rate_limit::{RateLimit, Verdict};
use crate::registry::Shared;
use crate::resolve::ResolveCache;
use crate::sandbox::{self, ChildSandbox, Confinement};
use crate::spawn_step::SpawnStep;
use crate::strategy::{self, Strategy};
use crate::sys::{self, CStringArray, Exec, PtyExec, SpawnFailure};

/// Starts host programs under a [`Policy`] and keeps track of them.
///
/// Defaults: [`Strategy::PosixSpawn`] with fallback to [`Strategy::ForkExec`] when a request
/// needs it (strict mode off), no audit log, records of refused requests limited to
/// [`RateLimit::default`].
///
/// The spawner keeps one descriptor open, `/dev/null` (close-on-exec), once a request asks for
/// [`Stdio::Null`].
///
/// Dropping the spawner sends `SIGKILL` to the process group of every child it started that
/// has not been reaped yet, and reaps them; [`Child`] handles that outlive it then report the
/// `SIGKILL`. Children stay accounted to the spawner until their handle is dropped or they are
/// reaped.
///
/// # Examples
///
/// ```no_run
/// use wrt_host_spawn::{Command, Policy, Spawner};
///
/// let spawner = Spawner::new(Policy::deny_all().allow_program("uname"))?;
/// let output = spawner.output(Command::new("uname").arg("-s"), None)?;
/// assert_eq!(output.stdout, b"Linux\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Ambient authority
///
/// Without a sandbox ([`Spawner::with_sandbox`]), a spawner starts host processes with the
/// host's user, capabilities and file system, and the policy is the only limit. With one, each
/// child reaches only what the [`ChildSandbox`] gives it.
#[derive(Debug)]
pub struct Spawner {
    policy: Arc<CompiledPolicy>,
    shared: Arc<Shared>,
    strategy: Strategy,
    strict: bool,
    null: OnceLock<OwnedFd>,
    /// The `posix_spawn` file actions of the last spawn, for the next one with the same stdio
    /// descriptors and working directory.
    actions: sys::ActionsCache,
    /// The programs this spawner resolved, for its next spawns of them.
    resolved: ResolveCache,
    /// How many records of refused requests are written.
    refusals: Mutex<RateLimit>,
    /// What children may reach (on by default).
    sandbox: ChildSandbox,
    /// The sandbox's ruleset and filters, built on the first confined spawn.
    prepared: sandbox::Prepared,
    /// Whether a spawning thread installs the children's seccomp filter on itself.
    filter_on_thread: bool,
}

/// The descriptors for the child's stdio: the host's ends and the sources for 0, 1, 2.
struct StdioSetup {
    parent: [Option<OwnedFd>; 3],
    /// The pseudo-terminal, if a stream is one: its master (a copy the child keeps for
    /// resizing), its slave's path, and which of 0, 1, 2 it is.
    pty: Option<(OwnedFd, CString, [bool; 3])>,
    /// Descriptors this setup opened for the child; closed in the host after the spawn.
    owned: Vec<OwnedFd>,
    /// For each of 0, 1, 2: an index into `owned`, or a descriptor of the command.
    source: [Source; 3],
}

#[derive(Clone, Copy)]
enum Source {
    Inherit,
    Owned(usize),
    Null,
    Command,
    /// Stderr only: whatever stdout's source is (`2>&1`).
    Stdout,
    /// The pseudo-terminal's slave, which the child opens itself.
    Pty,
}

/// The spawner's `/dev/null`, opened (close-on-exec, above 2) on first use.
fn dev_null(cell: &OnceLock<OwnedFd>) -> io::Result<BorrowedFd<'_>> {
    if cell.get().is_none() {
        let file = File::options().read(true).write(true).open("/dev/null")?;
        // Another thread may have won the race; its descriptor is as good.
        let _ = cell.set(sys::above_stdio(file.into())?);
    }
    Ok(cell.get().expect("set above").as_fd())
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // A new pipe end has no file status flags to keep.
    fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    Ok(())
}

impl StdioSetup {
    fn new(command: &Command, pipe_stdin: bool, null: &OnceLock<OwnedFd>) -> Result<Self, (Stream, io::Error)> {
        let mut setup = Self { parent: [None, None, None], pty: None, owned: Vec::new(), source: [Source::Inherit; 3] };
        setup.open_pty(command, pipe_stdin)?;
        for stream in [Stream::Stdin, Stream::Stdout, Stream::Stderr] {
            let i = stream.index();
            let stdio = match command.get_stdio(stream) {
                _ if pipe_stdin && stream == Stream::Stdin => &Stdio::Piped,
                stdio => stdio,
            };
            let fail = |err: io::Error| (stream, err);
            setup.source[i] = match stdio {
                _ if setup.pty.as_ref().is_some_and(|(_, _, targets)| targets[i]) => Source::Pty,
                Stdio::Inherit => Source::Inherit,
                Stdio::Piped => {
                    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| fail(e.into()))?;
                    let (ours, theirs) = if stream == Stream::Stdin { (write, read) } else { (read, write) };
                    set_nonblocking(&ours).map_err(fail)?;
                    setup.parent[i] = Some(ours);
                    setup.owned.push(sys::above_stdio(theirs).map_err(|e| fail(e.into()))?);
                    Source::Owned(setup.owned.len() - 1)
                }
                Stdio::Null => {
                    dev_null(null).map_err(fail)?;
                    Source::Null
                }
                Stdio::File(fd) if fd.as_raw_fd() > 2 => Source::Command,
                Stdio::File(fd) => {
                    setup.owned.push(fd.as_fd().try_clone_to_owned().map_err(fail)?);
                    Source::Owned(setup.owned.len() - 1)
                }
                // Validated: only stderr gets here, after stdout. An inherited stdout is the
                // host's descriptor 1: stderr gets a copy of it above 2, like any other source.
                Stdio::MergeWithStdout => match setup.source[Stream::Stdout.index()] {
                    Source::Inherit => {
                        let copy = io::stdout().as_fd().try_clone_to_owned().map_err(fail)?;
                        setup.owned.push(sys::above_stdio(copy).map_err(|e| fail(e.into()))?);
                        Source::Owned(setup.owned.len() - 1)
                    }
                    _ => Source::Stdout,
                },
                // Not a target: only with stdin piped by `output`, which replaces it.
                Stdio::Pty => Source::Inherit,
            };
        }
        Ok(setup)
    }

    /// Opens the pseudo-terminal if a stream is [`Stdio::Pty`] (stderr merged into a `Pty`
    /// stdout is the terminal too), and hands out its master: stdin writes to it, stdout (or
    /// stderr, when stdout is not the terminal) reads from it.
    fn open_pty(&mut self, command: &Command, pipe_stdin: bool) -> Result<(), (Stream, io::Error)> {
        let is_pty = |stream: Stream| {
            !(pipe_stdin && stream == Stream::Stdin) && matches!(command.get_stdio(stream), Stdio::Pty)
        };
        let stdout = is_pty(Stream::Stdout);
        let stderr =
            is_pty(Stream::Stderr) || stdout && matches!(command.get_stdio(Stream::Stderr), Stdio::MergeWithStdout);
        let targets = [is_pty(Stream::Stdin), stdout, stderr];
        let Some(first) = [Stream::Stdin, Stream::Stdout, Stream::Stderr].into_iter().find(|s| targets[s.index()])
        else {
            return Ok(());
        };
        let fail = |err: io::Error| (first, err);
        let (rows, cols) = command.get_pty_size();
        let pty = sys::open_pty(rows, cols).map_err(|e| fail(e.into()))?;
        set_nonblocking(&pty.master).map_err(fail)?;
        let copy = || {
            let copy = pty.master.as_fd().try_clone_to_owned().map_err(fail)?;
            sys::above_stdio(copy).map_err(|e| fail(e.into()))
        };
        if targets[0] {
            self.parent[0] = Some(copy()?);
        }
        if stdout {
            self.parent[1] = Some(copy()?);
        } else if stderr {
            self.parent[2] = Some(copy()?);
        }
        // The host must not keep the slave open after the spawn, or the master never sees the
        // end of the child's output.
        self.owned.push(pty.slave);
        self.pty = Some((pty.master, pty.path, targets));
        Ok(())
    }

    fn child_fds<'a>(&'a self, command: &'a Command, null: &'a OnceLock<OwnedFd>) -> [Option<BorrowedFd<'a>>; 3] {
        let fd = |stream: Stream| match self.source[stream.index()] {
            Source::Inherit | Source::Stdout | Source::Pty => None,
            Source::Owned(index) => Some(self.owned[index].as_fd()),
            Source::Null => null.get().map(AsFd::as_fd),
            Source::Command => match command.get_stdio(stream) {
                Stdio::File(fd) => Some(fd.as_fd()),
                _ => None,
            },
        };
        let stdout = fd(Stream::Stdout);
        let stderr = match self.source[Stream::Stderr.index()] {
            Source::Stdout => stdout,
            _ => fd(Stream::Stderr),
        };
        [fd(Stream::Stdin), stdout, stderr]
    }
}

impl Spawner {
    /// A spawner for `policy`, resolving every rule now.
    ///
    /// # Errors
    ///
    /// The policy does not validate (see [`Policy::validate`]).
    ///
    /// # Ambient authority
    ///
    /// Resolves programs and directories on the host's file system.
    pub fn new(policy: Policy) -> Result<Self, PolicyError> {
        Ok(Self::from_compiled(Arc::new(policy.compile()?)))
    }

    /// A spawner for a policy compiled once with [`Policy::compile`]: nothing is resolved now,
    /// so a server can start a spawner per guest for free. Each spawner has its own children,
    /// `max_children` count and audit log.
    pub fn from_compiled(policy: Arc<CompiledPolicy>) -> Self {
        let shared = Arc::new(Shared::new(policy.max_children));
        Self {
            policy,
            shared,
            strategy: Strategy::PosixSpawn,
            strict: false,
            null: OnceLock::new(),
            actions: sys::ActionsCache::default(),
            resolved: ResolveCache::default(),
            refusals: Mutex::new(RateLimit::default()),
            sandbox: ChildSandbox::off(),
            prepared: sandbox::Prepared::default(),
            filter_on_thread: false,
        }
    }

    /// Confines children with `sandbox`; [`ChildSandbox::confined`] gives them the system
    /// locations only. Default off for a bare spawner, which is a mechanism: wrt's runtime
    /// (`RunOptions`) turns it on for every guest, with the guest's directories. The policy
    /// can turn the sandbox off for all its spawners, never on.
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: ChildSandbox) -> Self {
        self.sandbox = sandbox;
        self.prepared = sandbox::Prepared::default();
        self
    }

    /// Lets each thread that starts a confined child install the children's seccomp filter on
    /// itself, once, instead of every child installing it: the kernel's compile of the filter
    /// and of its action cache is then paid once per thread rather than once per spawn (about
    /// half of what confinement adds to a spawn). Off by default.
    ///
    /// The thread keeps the filter and no-new-privileges for good (the kernel cannot take a
    /// filter back), and so does every thread and process it creates later, confined or not:
    /// with no network rule in the policy it can no longer open sockets (nor can an unconfined
    /// child it starts later), and it cannot create namespaces nor use `io_uring`. Turn this on
    /// only for threads that do nothing else but run guests, as `wrt run`'s does. A thread that
    /// holds the no-network filter refuses to start a child whose rule allows the network
    /// ([`SandboxUnavailable::ThreadWithoutNetwork`](crate::SandboxUnavailable)).
    #[must_use]
    pub fn filter_on_spawning_thread(mut self, on: bool) -> Self {
        self.filter_on_thread = on;
        self
    }

    /// Whether children are confined: the spawner's sandbox and the policy's both on.
    pub fn is_confined(&self) -> bool {
        self.sandbox.is_enabled() && self.policy.sandbox.enabled
    }

    /// What a child gets from the sandbox, with or without network (its rule's `network`).
    pub fn confinement(&self, network: bool) -> Confinement {
        sandbox::describe(&self.sandbox, &self.policy, network)
    }

    /// Writes every decision and exit to `log`.
    #[must_use]
    pub fn with_audit_log(self, log: AuditLog) -> Self {
        self.shared.set_audit(Some(log));
        self
    }

    /// Names `request` in the `"request"` label of every audit record written from now on
    /// (`None`: no label), for a spawner that serves one request of the embedder's after
    /// another; records already written keep theirs. Without an audit log, nothing.
    pub fn label_request(&self, request: Option<String>) {
        self.shared.set_audit_request(request);
    }

    /// How many audit records of refused requests (denied, invalid, not found, failed) are
    /// written: past the limit they are counted, and one `"suppressed"` record with the count
    /// is written before the next record let through, or when the spawner is dropped.
    /// Records of started children are never suppressed. Default: [`RateLimit::default`].
    #[must_use]
    pub fn with_refusal_rate_limit(self, limit: RateLimit) -> Self {
        *self.refusals.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = limit;
        self
    }

    /// Prefers `strategy` (default [`Strategy::PosixSpawn`]).
    #[must_use]
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Strict mode: fail with [`SpawnError::StrategyUnavailable`] instead of falling back
    /// from `posix_spawn` to fork-exec (default off).
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Every program the policy allows: the rule as written and the canonical path it
    /// resolved to when the spawner was created.
    pub fn allowed_programs(&self) -> impl Iterator<Item = (&Path, &Path)> + Clone {
        self.policy.allowed_programs()
    }

    /// Children started and not yet reaped.
    pub fn running(&self) -> usize {
        self.shared.running()
    }

    /// Sends `SIGKILL` to every process below each running child (in any session, see
    /// [`containment`](crate::containment)) and to its process group, and reaps the children.
    /// Children spawned concurrently from other threads may be missed.
    pub fn kill_all(&self) {
        self.shared.kill_all();
    }

    /// A handle that kills this spawner's children from any thread ([`KillSwitch::kill_all`]),
    /// for whoever must stop them while the spawner's owner is blocked waiting on one.
    pub fn kill_switch(&self) -> KillSwitch {
        KillSwitch { shared: Arc::downgrade(&self.shared) }
    }

    /// Checks `command` against the policy and starts it.
    ///
    /// In order: the request is validated without system calls (NUL bytes, empty program,
    /// malformed environment names); the program is resolved to a canonical path with the
    /// policy's search path; the policy checks path, arguments, environment and working
    /// directory; the concurrency limit is checked; the strategy is chosen; the program at
    /// the canonical path is executed. Every outcome of these steps is written to the audit
    /// log, if any.
    ///
    /// # Errors
    ///
    /// One [`SpawnError`] variant per step that can fail: `InvalidRequest`, `NotFound`,
    /// `NotExecutable`, `Denied` (with the rule), `TooManyChildren`, `StrategyUnavailable`
    /// (strict mode), `TooManyDescriptors`, `Stdio`, `Spawn` (with the step and `errno`), `Audit`.
    ///
    /// # Ambient authority
    ///
    /// Starts a host process (see [`Spawner`]).
    pub fn spawn(&self, command: &Command) -> Result<Child, SpawnError> {
        self.spawn_inner(command, false)
    }

    /// Starts `command` and collects its output: [`Spawner::spawn`] then
    /// [`Child::communicate`]. With `Some(input)`, stdin is a pipe fed with `input` (whatever
    /// the command says); with `None`, stdin is as the command says.
    ///
    /// # Errors
    ///
    /// [`OutputError::Spawn`] if it did not start, [`OutputError::Communicate`] if talking to
    /// it failed. Timeouts and truncation are not errors: see [`ChildOutcome`](crate::ChildOutcome).
    ///
    /// # Ambient authority
    ///
    /// Starts a host process (see [`Spawner`]).
    pub fn output(&self, command: &Command, input: Option<&[u8]>) -> Result<Output, OutputError> {
        let mut child = self.spawn_inner(command, input.is_some())?;
        Ok(child.communicate(input.unwrap_or_default())?)
    }

    fn spawn_inner(&self, command: &Command, pipe_stdin: bool) -> Result<Child, SpawnError> {
        // Named in the errors below only, so made when one is.
        let program = || PathBuf::from(command.get_program());
        let Admitted { path, grant, argv, pinned } = match decide(&self.policy, &self.resolved, command, self.strategy)
        {
            Ok(admitted) => admitted,
            Err(refused) => {
                let Refused { error, path, rule } = *refused;
                return Err(self.refuse(command, path.as_deref(), rule.as_deref(), error));
            }
        };
        let reservation = match self.shared.reserve() {
            Ok(reservation) => reservation,
            Err(running) => {
                let err =
                    SpawnError::TooManyChildren { program: program(), limit: self.shared.max_children(), running };
                return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
            }
        };
        let needs_rlimits = !grant.rlimits.is_empty();
        let confined = self.is_confined();
        let strategy = match strategy::choose(
            self.strategy,
            self.strict,
            needs_rlimits,
            confined,
            confined && sandbox::wants_view(&self.sandbox, &self.policy),
            sys::posix_spawn_support(),
        ) {
            Ok(strategy) => strategy,
            Err(reason) => {
                let err = SpawnError::StrategyUnavailable { program: path.clone(), strategy: self.strategy, reason };
                return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
            }
        };
        let confine = if confined {
            match self.prepared.confine(&self.sandbox, &self.policy, grant.network, self.filter_on_thread) {
                Ok(confine) => Some(confine),
                Err(reason) => {
                    let err = SpawnError::Sandbox { program: path.clone(), reason };
                    return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
                }
            }
        } else {
            None
        };
        // The view the child starts in, made by `confine`.
        let view = if confine.is_some() { self.prepared.view_processes() } else { None };

        // A program under the host's `/tmp` is not what its path names in a view that covers
        // `/tmp` (the children's own directory, which they write): it runs from a descriptor
        // opened here, as a pinned one does.
        let pinned = match pinned {
            None if view.is_some() && self.prepared.covers_tmp() && path.starts_with("/tmp") => {
                match open_beneath_cover(&path) {
                    Ok(fd) => Some(fd),
                    Err(source) => {
                        let err = SpawnError::Spawn { program: path.clone(), strategy, step: SpawnStep::Exec, source };
                        return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
                    }
                }
            }
            pinned => pinned,
        };

        // The last check before any descriptor is opened for the child.
        if let Err(exhausted) = fd_budget::check(fd_budget::needed(command, pipe_stdin, self.null.get().is_some())) {
            let fd_budget::Exhausted { open, needed, limit } = exhausted;
            let err = SpawnError::TooManyDescriptors { program: program(), open, needed, limit };
            return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
        }
        let setup = match StdioSetup::new(command, pipe_stdin, &self.null) {
            Ok(setup) => setup,
            Err((stream, source)) => {
                let err = SpawnError::Stdio { program: path.clone(), stream, source };
                return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
            }
        };
        // Neither can contain NUL: the path comes from `realpath`, the directory from the
        // policy or a validated request.
        let path_c = match &pinned {
            None => CString::new(path.as_os_str().as_bytes()).unwrap_or_default(),
            Some(fd) => CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default(),
        };
        let cwd_c = CString::new(grant.cwd.as_os_str().as_bytes()).unwrap_or_default();
        // A confined child's temporary directory, unless its environment names one (no request
        // nor rule can: `TMPDIR` is refused always).
        let tmp = match confine.is_some() {
            true => self.prepared.child_tmp(&self.sandbox),
            false => None,
        };
        let tmp = tmp.filter(|_| !grant.env.contains_key(OsStr::new("TMPDIR")));
        let mut envp = CStringArray::with_capacity(grant.env.len() + 1);
        if let Some(tmp) = tmp {
            let mut entry = b"TMPDIR=".to_vec();
            entry.extend_from_slice(tmp.as_os_str().as_bytes());
            envp.push(CString::new(entry).unwrap_or_default());
        }
        for (name, value) in &grant.env {
            let mut entry = Vec::with_capacity(name.len() + value.len() + 1);
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            // Validated: names have no NUL or `=`, values no NUL.
            envp.push(CString::new(entry).unwrap_or_default());
        }
        let exec = Exec {
            path: &path_c,
            argv: &argv,
            envp: &envp,
            stdio: setup.child_fds(command, &self.null),
            cwd: &cwd_c,
            fd: pinned.as_ref().map(AsFd::as_fd),
            pty: setup.pty.as_ref().map(|(_, path, targets)| PtyExec { path, targets: *targets }),
        };
        // No sweep may run between the child's creation and its registration.
        let gate = match crate::containment::spawn_gate() {
            Ok(gate) => gate,
            Err(source) => {
                let err = SpawnError::Spawn { program: path.clone(), strategy, step: SpawnStep::Setup, source };
                return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
            }
        };
        let started = Instant::now();
        let spawned = match strategy {
            Strategy::PosixSpawn => sys::posix_spawn(&exec, &self.actions),
            // A view's children are started by its starter, which only vfork-exec asks.
            Strategy::ForkExec if view.is_some() => Err(SpawnFailure { step: SpawnStep::Setup, errno: Errno::EINVAL }),
            Strategy::ForkExec => sys::fork_exec(&exec, &grant.rlimits.to_sys(), confine),
            Strategy::VforkExec => sys::vfork_exec(&exec, &grant.rlimits.to_sys(), confine, view),
        };
        let StdioSetup { parent, owned, pty, .. } = setup;
        drop(owned);
        let pid = match spawned {
            Ok(pid) => pid,
            Err(failure) => {
                let err =
                    SpawnError::Spawn { program: path.clone(), strategy, step: failure.step, source: failure.errno };
                return Err(self.refuse(command, Some(&path), grant.rule.as_deref(), err));
            }
        };
        let id = reservation.register(pid);
        drop(gate);

        let child = Child::new(ChildParts {
            pid,
            id,
            path: path.clone(),
            strategy,
            stdio: parent,
            pty: pty.map(|(master, _, _)| master),
            output_limit: grant.output_limit,
            started,
            spawner_peak_kib: sys::own_peak_at_least_kib(),
            timeout: grant.timeout,
            grace: command.get_kill_grace().map_or(self.policy.kill_grace, |g| g.min(self.policy.kill_grace)),
            shared: Arc::clone(&self.shared),
        });
        let pid = child.pid();
        let written = self.shared.audit(|log| log.write(&self.record(command, &path, &grant, strategy, pid)));
        if let Err(source) = written {
            drop(child);
            return Err(SpawnError::Audit { program: program(), source });
        }
        Ok(child)
    }

    fn record(&self, command: &Command, path: &Path, grant: &Grant, strategy: Strategy, pid: u32) -> DecisionRecord {
        let (decision, reason) = Decision::of_grant(grant);
        DecisionRecord {
            time: Timestamp::now(),
            event: "decision",
            decision,
            reason,
            program: shown(command.get_program()),
            path: Some(shown(path)),
            argv: argv(command),
            env_keys: shown_list(grant.env.keys().map(|k| k.as_os_str())),
            cwd: Some(shown(&grant.cwd)),
            rule: grant.rule.as_ref().map(shown),
            strategy: Some(strategy.as_str()),
            pid: Some(pid),
            sha256: grant.sha256.map(|digest| digest.to_string()),
            sandbox: Some(Confinement {
                private_tmp: self.is_confined() && self.prepared.tmp(&self.sandbox).is_some(),
                ..self.confinement(grant.network)
            }),
        }
    }

    /// Writes the decision record for a request that did not start, and returns `err`.
    /// `rule` is the allow or deny rule that decided, if one did.
    fn refuse(&self, command: &Command, path: Option<&Path>, rule: Option<&Path>, err: SpawnError) -> SpawnError {
        let decision = Decision::of_error(&err);
        let record = || DecisionRecord {
            time: Timestamp::now(),
            event: "decision",
            decision,
            reason: wrt_text::error_chain(&err),
            program: shown(command.get_program()),
            path: path.map(shown),
            argv: argv(command),
            env_keys: shown_list(command.get_envs().iter().map(|(k, _)| k.as_os_str())),
            cwd: command.get_cwd().map(shown),
            rule: rule.map(shown),
            strategy: None,
            pid: None,
            sha256: None,
            sandbox: None,
        };
        let verdict = self.refusals.lock().unwrap_or_else(std::sync::PoisonError::into_inner).check(Instant::now());
        // The request fails either way; a failed audit write cannot make it fail harder.
        match verdict {
            Verdict::Suppress => {}
            Verdict::Report { suppressed_before } => {
                self.write_suppressed(suppressed_before);
                let _ = self.shared.audit(|log| log.write(&record()));
            }
        }
        err
    }

    /// Writes a `"suppressed"` record for `count` refusals, if any.
    fn write_suppressed(&self, count: u64) {
        if count > 0 {
            let record = SuppressedRecord { time: Timestamp::now(), event: "suppressed", count };
            let _ = self.shared.audit(|log| log.write(&record));
        }
    }
}

impl Spawner {
    /// Writes the audit record of a spawn request that could not even be decoded (by an
    /// embedder's own request format, such as the guest ABI's), so that every request leaves
    /// a record. `program` is the program's bytes as far as they could be read (empty if
    /// none could); it is written escaped and capped at 256 characters.
    ///
    /// # Errors
    ///
    /// Writing the audit record failed.
    pub fn audit_malformed(&self, program: &[u8], reason: &str) -> io::Result<()> {
        self.audit_unspawned(program, Decision::Error, |program| {
            format!("invalid request to spawn `{program}`: {reason}")
        })
    }

    /// Writes the audit record of a valid request that the embedder refused before the spawner
    /// saw it (the guest ABI, when the guest holds every handle it may), so that every request
    /// leaves a record. `program` is written escaped and capped at 256 characters.
    ///
    /// # Errors
    ///
    /// Writing the audit record failed.
    pub fn audit_refused(&self, program: &[u8], reason: &str) -> io::Result<()> {
        self.audit_unspawned(program, Decision::Deny, |program| format!("cannot spawn `{program}`: {reason}"))
    }

    fn audit_unspawned(
        &self,
        program: &[u8],
        decision: Decision,
        reason: impl FnOnce(&str) -> String,
    ) -> io::Result<()> {
        let program = shown(OsStr::from_bytes(program));
        let record = DecisionRecord {
            time: Timestamp::now(),
            event: "decision",
            decision,
            reason: reason(&program),
            argv: vec![program.clone()],
            program,
            path: None,
            env_keys: Vec::new(),
            cwd: None,
            rule: None,
            strategy: None,
            pid: None,
            sha256: None,
            sandbox: None,
        };
        self.shared.audit(|log| log.write(&record))
    }

    /// Whether allowing `program`, spelled as the request spelled it, would let a request for
    /// it through: it resolves to an executable that no allow rule and no deny rule covers.
    /// For hints such as "allow it with `--allow-run PROGRAM`"; never show its answer to the
    /// guest for a program given by path, or it tells the guest which files exist.
    ///
    /// # Ambient authority
    ///
    /// Resolves `program` on the host's file system.
    pub fn allow_rule_would_help(&self, program: impl AsRef<OsStr>) -> bool {
        self.policy.allow_rule_would_help(program.as_ref())
    }
}

fn argv(command: &Command) -> Vec<String> {
    shown_list(std::iter::once(command.get_program()).chain(command.get_args().iter().map(|a| a.as_os_str())))
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.shared.kill_all();
        let suppressed = self.refusals.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take_suppressed();
        self.write_suppressed(suppressed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_can_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Spawner>();
        send_sync::<Child>();
    }
}

/// Kills the children of a [`Spawner`] from any thread ([`Spawner::kill_switch`]). Cheap to
/// clone; it keeps nothing of the spawner alive, and does nothing once the spawner is gone.
#[derive(Debug, Clone)]
pub struct KillSwitch {
    shared: std::sync::Weak<Shared>,
}

impl KillSwitch {
    /// Sends `SIGKILL` to every process below each running child (in any session, see
    /// [`containment`](crate::containment)) and to its process group, and returns at once,
    /// without reaping: the children's owner sees them end in its waits and reads, and reaps
    /// them as it does any child (or with [`Spawner::kill_all`]). For good: every child the
    /// spawner starts afterwards, or is starting now, is killed the moment it is registered,
    /// so none escapes by being started concurrently.
    pub fn kill_all(&self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.signal_all(true);
        }
    }
}

/// Opens a program that the child view's `/tmp` hides, to run it from its descriptor. A script
/// cannot run so (its interpreter reopens it by path, which names something else in the view):
/// `ENOEXEC`.
fn open_beneath_cover(path: &Path) -> Result<OwnedFd, Errno> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let errno = |err: io::Error| Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO));
    // `O_PATH`: a program that may be executed but not read runs as by its path.
    let program = File::options().read(true).custom_flags(libc::O_PATH | libc::O_CLOEXEC).open(path).map_err(errno)?;
    let readable = File::options().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path);
    let mut magic = [0u8; 2];
    if readable.is_ok_and(|file| (&file).read_exact(&mut magic).is_ok() && magic == *b"#!") {
        return Err(Errno::ENOEXEC);
    }
    sys::above_stdio(program.into())
}

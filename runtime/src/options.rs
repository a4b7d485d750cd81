//! The options of one run: everything a guest sees and every limit it runs under, cheap to
//! build and change per run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use wrt_host_spawn::{AuditLog, AuditSink, ChildSandbox, CompiledPolicy, Policy, RateLimit, Spawner, Strategy};

use crate::cancel::CancelToken;
use crate::error::ConfigError;
use crate::external::gc_policy::GcPolicy;
use crate::guest_stdio::{GuestOutput, GuestStdin};
use crate::network::{HttpRule, NetRule};
use crate::preopen::{DirAccess, Preopen};
use crate::process_service::spawn_state::{DenialReporting, DeniedSpawn};

/// The options of a run: arguments, environment, preopened directories, stdio, limits, the
/// spawn policy and the collection policy. Building and changing them costs no system call and
/// no compilation (a spawn policy is compiled once, when it is set, and shared by clones), so a
/// server can make one per request.
///
/// Defaults: no arguments, an empty environment, no preopened directories, stdin at end of
/// file, stdout and stderr discarded, no memory limit beyond wasm's own, no fuel limit, no
/// timeout, no preopen of a kernel pseudo-filesystem, no CPU-time measurement, no network (no
/// socket address and no server of outgoing HTTP requests); for host
/// programs: a policy that denies every spawn, no audit log, the `posix_spawn` strategy with
/// fallback to fork-exec.
///
/// The defaults grant nothing a guest could use against the host, not even the host's own
/// streams: a server that never sets stdout and stderr gets no guest's output in its logs, and a
/// command line that wants it asks for [`GuestOutput::Inherit`](crate::GuestOutput::Inherit)
/// (as `wrt run` does) or captures it. What a server should set itself: a memory limit and a
/// timeout, since without them a guest may take all the memory and time the process has; and
/// a capture or a writer ([`GuestOutput`](crate::GuestOutput)) for the output it wants.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
///
/// # fn main() -> wrt_runtime::Result<()> {
/// let runtime = Runtime::new()?;
/// let guest = runtime.load_file("app.wasm")?;
/// let options = RunOptions::new()
///     .arg("--verbose")
///     .env("LANG", "C")?
///     .stdout(GuestOutput::Capture { limit: 1 << 20 })
///     .max_memory(256 << 20)
///     .timeout(Duration::from_secs(2));
/// let report = guest.run(&options)?;
/// assert_eq!(report.outcome, Outcome::Exited(0));
/// println!("{}", String::from_utf8_lossy(&report.stdout));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RunOptions {
    pub(crate) argv0: Option<String>,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) preopens: Vec<Preopen>,
    pub(crate) stdin: GuestStdin,
    pub(crate) stdout: GuestOutput,
    pub(crate) stderr: GuestOutput,
    pub(crate) max_memory: Option<u64>,
    pub(crate) fuel: Option<u64>,
    pub(crate) measure_cpu_time: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancelToken>,
    pub(crate) host_data: Option<Arc<dyn std::any::Any + Send + Sync>>,
    pub(crate) policy: Arc<CompiledPolicy>,
    pub(crate) audit_log: Option<PathBuf>,
    pub(crate) audit_sink: Option<AuditSink>,
    pub(crate) request_id: Option<String>,
    pub(crate) strategy: Strategy,
    pub(crate) strict_strategy: bool,
    pub(crate) denials: DenialReporting,
    pub(crate) gc_policy: GcPolicy,
    pub(crate) allow_pseudo_fs: bool,
    pub(crate) child_sandbox: bool,
    pub(crate) child_view: bool,
    pub(crate) filter_on_guest_thread: bool,
    pub(crate) network: Arc<[NetRule]>,
    pub(crate) http_servers: Arc<[HttpRule]>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("argv0", &self.argv0)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("preopens", &self.preopens)
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .field("max_memory", &self.max_memory)
            .field("fuel", &self.fuel)
            .field("timeout", &self.timeout)
            .field("cancel", &self.cancel)
            .field("host_data", &self.host_data.as_ref().map(|_| "Any"))
            .field("policy", &self.policy)
            .field("audit_log", &self.audit_log)
            .field("audit_sink", &self.audit_sink)
            .field("request_id", &self.request_id)
            .field("strategy", &self.strategy)
            .field("strict_strategy", &self.strict_strategy)
            .field("denials", &self.denials)
            .field("gc_policy", &self.gc_policy)
            .field("allow_pseudo_fs", &self.allow_pseudo_fs)
            .field("child_sandbox", &self.child_sandbox)
            .field("child_view", &self.child_view)
            .field("filter_on_guest_thread", &self.filter_on_guest_thread)
            .field("network", &self.network)
            .field("http_servers", &self.http_servers)
            .finish()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            argv0: None,
            args: Vec::new(),
            env: Vec::new(),
            preopens: Vec::new(),
            stdin: GuestStdin::Null,
            stdout: GuestOutput::Null,
            stderr: GuestOutput::Null,
            max_memory: None,
            fuel: None,
            measure_cpu_time: false,
            timeout: None,
            cancel: None,
            host_data: None,
            policy: deny_all(),
            audit_log: None,
            audit_sink: None,
            request_id: None,
            strategy: Strategy::PosixSpawn,
            strict_strategy: false,
            denials: DenialReporting::default(),
            gc_policy: GcPolicy::default(),
            allow_pseudo_fs: false,
            child_sandbox: true,
            child_view: true,
            filter_on_guest_thread: false,
            network: Arc::new([]),
            http_servers: Arc::new([]),
        }
    }
}

impl RunOptions {
    /// Options with the defaults listed above.
    pub fn new() -> Self {
        Self::default()
    }

    /// The guest's `argv[0]`. Default: the guest's file name.
    pub fn argv0(mut self, argv0: impl Into<String>) -> Self {
        self.argv0 = Some(argv0.into());
        self
    }

    /// Appends one argument after `argv[0]`.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments after `argv[0]`.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable of the guest, replacing an earlier value of the same name.
    /// The guest sees no host variable unless it is set here.
    ///
    /// # Errors
    ///
    /// An empty name, or a name containing `=` or NUL, or a value containing NUL.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Result<Self, ConfigError> {
        let (name, value) = (name.into(), value.into());
        if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
            return Err(ConfigError::BadEnv { spec: format!("{name}={value}") });
        }
        self.env.retain(|(existing, _)| *existing != name);
        self.env.push((name, value));
        Ok(self)
    }

    /// Sets the guest's variable `name` to the host's value of `name`, replacing an earlier
    /// value of the same name (what `wrt run --env NAME` and `wasmtime run --env NAME` do).
    ///
    /// # Errors
    ///
    /// As [`RunOptions::env`], and [`ConfigError::EnvNotSet`] for a name that the host does
    /// not set (or sets to something that is not UTF-8).
    ///
    /// # Ambient authority
    ///
    /// Passes the host's value to the guest.
    pub fn env_from_host(self, name: &str) -> Result<Self, ConfigError> {
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(ConfigError::BadEnv { spec: name.to_owned() });
        }
        match std::env::var(name) {
            Ok(value) => self.env(name, value),
            Err(_) => Err(ConfigError::EnvNotSet { name: name.to_owned() }),
        }
    }

    /// Passes the host's whole environment to the guest (variables whose name or value is not
    /// UTF-8 are left out), as `wasmtime run -S inherit-env` does. Variables set with
    /// [`RunOptions::env`] afterwards replace the host's. Default: nothing of the host's
    /// environment.
    ///
    /// # Ambient authority
    ///
    /// The guest reads every host variable: tokens, paths, the user's name.
    pub fn inherit_env(mut self) -> Self {
        for (name, value) in std::env::vars_os() {
            if let (Some(name), Some(value)) = (name.to_str(), value.to_str())
                && !name.is_empty()
            {
                self.env.retain(|(existing, _)| existing != name);
                self.env.push((name.to_owned(), value.to_owned()));
            }
        }
        self
    }

    /// Gives the guest a host directory.
    ///
    /// # Ambient authority
    ///
    /// The guest reaches the files below `host` with the host process's own permissions,
    /// narrowed to `access`.
    pub fn preopen(mut self, host: impl AsRef<Path>, guest: impl Into<String>, access: DirAccess) -> Self {
        self.preopens.push(Preopen { host: host.as_ref().to_owned(), guest: guest.into(), access });
        self
    }

    /// Gives the guest the directory of a [`Preopen`] (as [`RunOptions::preopen`]).
    ///
    /// # Ambient authority
    ///
    /// As [`RunOptions::preopen`].
    pub fn preopen_spec(mut self, preopen: Preopen) -> Self {
        self.preopens.push(preopen);
        self
    }

    /// Lets a preopen be, lie inside or contain a kernel pseudo-filesystem: `/proc`, `/sys`, a
    /// device file system (`devtmpfs`, `devpts`), cgroups, `debugfs`, `tracefs`,
    /// `securityfs`, … (a preopen of `/` contains them all). Without it such a run is refused
    /// with [`ConfigError::PseudoFs`]. Default: refused.
    ///
    /// # Ambient authority
    ///
    /// Through `/proc` the guest reads the environment, memory maps and open files of every
    /// process of the host user, wrt's own included (and, read-write, writes wrt's memory
    /// through `/proc/self/mem`); through `/sys` and device directories, the kernel's settings
    /// and devices, as far as the host user may.
    pub fn allow_pseudo_fs(mut self, allow: bool) -> Self {
        self.allow_pseudo_fs = allow;
        self
    }

    /// The read-write preopen through which the guest could write `path`, if one does: `path`
    /// lies inside it (compared by device and inode of every directory on the way, so a bind
    /// mount, a symlink or a parent counts), or it is a file with more than one hard link
    /// that the host user may write, on the preopen's file system. `path` need not exist yet:
    /// the directory that would hold it is checked. The run makes the same check for the
    /// compile cache, the audit log, the policy file, the policy's programs and its search
    /// path; an embedder uses it for files of its own.
    ///
    /// # Ambient authority
    ///
    /// Reads the file system's metadata and `/proc/self/mountinfo`.
    pub fn writable_preopen_reaching(&self, path: impl AsRef<Path>) -> Option<&Preopen> {
        // Without a read-write preopen nothing is reached, and `/proc` need not be read.
        if !self.preopens.iter().any(|p| p.access == DirAccess::ReadWrite) {
            return None;
        }
        let mounts = crate::preopen_reach::mounts();
        crate::preopen_reach::WritableRoots::of(&self.preopens, &mounts)
            .reaching(path.as_ref())
            .map(|(preopen, _)| preopen)
    }

    /// The guest's standard input. Default: end of file.
    pub fn stdin(mut self, stdin: GuestStdin) -> Self {
        self.stdin = stdin;
        self
    }

    /// The guest's standard output. Default: discarded.
    pub fn stdout(mut self, stdout: GuestOutput) -> Self {
        self.stdout = stdout;
        self
    }

    /// The guest's standard error. Default: discarded.
    pub fn stderr(mut self, stderr: GuestOutput) -> Self {
        self.stderr = stderr;
        self
    }

    /// The most bytes of memory the guest may hold: all its linear memories (and GC heap)
    /// plus its host buffers. `memory.grow` past it returns -1; a host buffer past it is
    /// collected for and then refused with `NO_MEMORY`. Default: no limit beyond the module's
    /// own maximum, and 4 GiB of host buffers.
    pub fn max_memory(mut self, bytes: u64) -> Self {
        self.max_memory = Some(bytes);
        self
    }

    /// Fuel for a run (roughly one unit per wasm instruction): instantiation (the module's start
    /// function) and the first call share it, and each later call on the same
    /// [`crate::Instance`] gets it afresh; running out ends the run with
    /// [`crate::Outcome::OutOfFuel`]. Default: unlimited (and no fuel accounting in the
    /// generated code).
    pub fn fuel(mut self, fuel: u64) -> Self {
        self.fuel = Some(fuel);
        self
    }

    /// Whether the run measures the CPU time its guest takes ([`crate::Stats::cpu_time`]).
    /// Default: off. Reading a thread's CPU clock is a system call that takes the scheduler's
    /// lock; on a virtual machine four of them (two per call) cost about as much as
    /// instantiating and running a small guest.
    pub fn measure_cpu_time(mut self, on: bool) -> Self {
        self.measure_cpu_time = on;
        self
    }

    /// Wall-clock time a run may take, counted from the start of instantiation (the module's
    /// start function) through the first call; each later call on the same [`crate::Instance`]
    /// gets it afresh. Past it the run ends with [`crate::Outcome::TimedOut`], also while the
    /// guest is blocked in a `wrt_v1` call, a read of the inherited stdin, or a `poll_oneoff`
    /// sleep on a relative clock. Default: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// A token that cancels the run from any thread ([`CancelToken::cancel`]); clones of these
    /// options share it, so give each request its own. Default: none. A run on a runtime built
    /// without timeouts ([`crate::RuntimeBuilder::timeouts`]) cannot be stopped in guest code
    /// and refuses a token.
    ///
    /// A cancel ends the run with [`crate::Outcome::Cancelled`] and its children as a timeout
    /// does. It kills the run's children (and everything below them) at once, so a guest
    /// blocked on one (a wait, a read of its output, a write to its input, through the
    /// `wrt_v1` ABI or `wrt:process`) stops within milliseconds; so does a guest running wasm
    /// (at its next epoch check, within one 5 ms tick), one blocked in a system call that knows
    /// no deadline (a FIFO's open, a device read: its thread is interrupted every tick). A
    /// guest sleeping (a `poll_oneoff` or `wasi:clocks` timer), reading the inherited stdin or
    /// writing to an inherited stream nobody reads stops when that call returns: give such
    /// runs a timeout as well. A run that starts with a cancelled token
    /// runs nothing (not even instantiation) and ends with [`crate::Outcome::Cancelled`].
    pub fn cancel_token(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Data of the embedder's own for this run (a request's context: its id, its tenant, a
    /// connection), which the embedder's host functions read with
    /// [`GuestState::host_data`](crate::GuestState::host_data). Clones of these options share
    /// it. Default: none.
    pub fn host_data(mut self, data: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self.host_data = Some(data);
        self
    }

    /// The policy for host programs the guest asks to run (the `wrt_v1` ABI), compiled now
    /// (see [`Policy::compile`]); clones of these options share it. Default: deny every spawn.
    ///
    /// # Errors
    ///
    /// [`ConfigError::SpawnPolicy`] when the policy does not validate.
    ///
    /// # Ambient authority
    ///
    /// Every program the policy allows runs with the host user's authority. Compiling resolves
    /// the policy's programs and directories on the host's file system.
    pub fn spawn_policy(self, policy: &Policy) -> Result<Self, ConfigError> {
        let compiled = policy.compile().map_err(|reason| ConfigError::SpawnPolicy { reason })?;
        Ok(self.compiled_spawn_policy(Arc::new(compiled)))
    }

    /// A spawn policy compiled once with [`Policy::compile`], shared with other options: as
    /// [`RunOptions::spawn_policy`], without compiling.
    pub fn compiled_spawn_policy(mut self, policy: Arc<CompiledPolicy>) -> Self {
        self.policy = policy;
        self
    }

    /// Appends a JSONL record of every spawn decision and exit to this file, opened for each
    /// run (replacing [`RunOptions::audit_sink`]). Every record names the guest (`"guest"`)
    /// and, if set, the request ([`RunOptions::request_id`]). Default: none.
    pub fn audit_log(mut self, path: impl AsRef<Path>) -> Self {
        self.audit_log = Some(path.as_ref().to_owned());
        self.audit_sink = None;
        self
    }

    /// Writes the JSONL records of every spawn decision and exit to `sink`, which the runs of
    /// a server share (clone it into each run's options; replaces [`RunOptions::audit_log`]):
    /// each record reaches it whole, never interleaved with another run's, and names its guest
    /// (`"guest"`) and, if set, its request ([`RunOptions::request_id`]). A record that cannot
    /// be written fails the spawn it records (docs/policy.md, "Audit log"). Default: none.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::wrt_host_spawn::AuditSink;
    /// use wrt_runtime::RunOptions;
    ///
    /// let sink = AuditSink::new(std::io::stderr());
    /// let per_request = |id: u64| RunOptions::new().audit_sink(sink.clone()).request_id(format!("req-{id}"));
    /// # drop(per_request(1));
    /// ```
    pub fn audit_sink(mut self, sink: AuditSink) -> Self {
        self.audit_sink = Some(sink);
        self.audit_log = None;
        self
    }

    /// Lets the guest's `wasi:sockets` use the addresses of `rules` ([`NetRule`] says what each
    /// use needs), besides those of earlier calls. Default: none, so every socket address is
    /// refused (`access-denied`) and a guest can reach no network through sockets. Names are
    /// never resolved for a guest (`ip-name-lookup` is refused).
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{NetRule, RunOptions};
    ///
    /// let options = RunOptions::new().allow_network(NetRule::parse("loopback").unwrap());
    /// # drop(options);
    /// ```
    pub fn allow_network(mut self, rules: impl IntoIterator<Item = NetRule>) -> Self {
        self.network = self.network.iter().copied().chain(rules).collect();
        self
    }

    /// Lets the guest's outgoing `wasi:http` requests go to `server` ([`HttpRule`]), over plain
    /// HTTP/1.1, besides the servers of earlier calls. Default: none, so every outgoing request
    /// is refused (`HTTP-request-denied`) before any connection is made; so is a request for
    /// `https` (wrt has no TLS client) or to a server no rule names.
    pub fn allow_http(mut self, server: HttpRule) -> Self {
        self.http_servers = self.http_servers.iter().cloned().chain([server]).collect();
        self
    }

    /// Whether the guest has a network of its own: socket addresses or HTTP servers.
    fn grants_network(&self) -> bool {
        !self.network.is_empty() || !self.http_servers.is_empty()
    }

    /// The embedder's id of the request this run serves, written as `"request"` into every
    /// audit record of the run. Default: none.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Confines every program the guest starts to what the guest was given (default on): its
    /// read-only preopens readable, its read-write preopens writable, the system locations a
    /// program needs to start, no network unless the program's rule allows it, no new
    /// privileges (see [`ChildSandbox`](wrt_host_spawn::ChildSandbox)). `false` runs them with
    /// the host's authority, limited only by the policy; audit records say so. The policy's
    /// `[sandbox] enabled = false` turns it off too.
    pub fn child_sandbox(mut self, enabled: bool) -> Self {
        self.child_sandbox = enabled;
        self
    }

    /// Runs the confined programs the guest starts in a view of their own (default on; see
    /// [`ChildSandbox::view`](wrt_host_spawn::ChildSandbox::view)): the file system read-only
    /// but for the guest's read-write preopens, a `/tmp` and a `/proc` of their own. `false`
    /// shows them the host's mounts (the sandbox still bounds what they reach). The policy's
    /// `[sandbox] view = false` turns it off too.
    pub fn child_view(mut self, enabled: bool) -> Self {
        self.child_view = enabled;
        self
    }

    /// Lets the thread that starts the guest's first confined child install the children's
    /// seccomp filter on itself, so that no child compiles it again: a confined spawn then
    /// costs close to an unconfined one (see `Spawner::filter_on_spawning_thread`). Default
    /// off. The thread keeps the filter and no-new-privileges for good: it (and every thread
    /// and process it creates later) can no longer open sockets unless the policy has a rule
    /// that allows the network, create namespaces nor use `io_uring`. `wrt run` turns it on,
    /// as its process runs one guest; a server should turn it on only for threads that run
    /// nothing but guests. It is ignored for a guest granted a network of its own
    /// ([`RunOptions::allow_network`], [`RunOptions::allow_http`]), whose sockets are opened on
    /// its thread.
    pub fn filter_on_guest_thread(mut self, on: bool) -> Self {
        self.filter_on_guest_thread = on;
        self
    }

    /// How host programs are started. Default: [`Strategy::PosixSpawn`], falling back to
    /// fork-exec for requests it cannot express (rlimits) unless `strict`; children confined by
    /// the child sandbox start with [`Strategy::VforkExec`] (or fork-exec, if asked for), and
    /// a strict [`Strategy::PosixSpawn`] refuses them.
    pub fn spawn_strategy(mut self, strategy: Strategy, strict: bool) -> Self {
        self.strategy = strategy;
        self.strict_strategy = strict;
        self
    }

    /// When the host asks the guest (and wasmtime) to collect host buffers: see [`GcPolicy`].
    /// Default: [`GcPolicy::default`]. External bytes always count against
    /// [`RunOptions::max_memory`].
    pub fn gc_policy(mut self, policy: GcPolicy) -> Self {
        self.gc_policy = policy;
        self
    }

    /// Called for every spawn the policy denies, for example to tell a user which flag would
    /// allow it. A hint it returns is appended to the message the guest reads with
    /// `last_error` when the guest named the program by bare name; for a program given by
    /// path it is not, since a hint given only for paths that lead to an executable would tell
    /// the guest which files exist on the host. Default: none.
    ///
    /// Calls are rate-limited per guest instance (by default 20 per 10 seconds, see
    /// [`RunOptions::spawn_denial_rate_limit`]): past the limit the hook is not called
    /// (and the guest's message has no hint); the count of what was left out goes to
    /// [`RunOptions::on_spawn_denials_suppressed`].
    pub fn on_spawn_denied(mut self, hook: impl Fn(&DeniedSpawn) -> Option<String> + Send + Sync + 'static) -> Self {
        self.denials.on_denied = Some(Arc::new(hook));
        self
    }

    /// Called with the guest's name and how many denied spawns the rate limit kept from
    /// [`RunOptions::on_spawn_denied`]: before the next call the limit lets through, and
    /// when the guest instance ends. Default: none.
    pub fn on_spawn_denials_suppressed(mut self, hook: impl Fn(&str, u64) + Send + Sync + 'static) -> Self {
        self.denials.on_suppressed = Some(Arc::new(hook));
        self
    }

    /// How often [`RunOptions::on_spawn_denied`] is called, per guest instance. Default:
    /// [`RateLimit::default`] (20 per 10 seconds). The audit log has its own limit of the same
    /// default (see `docs/policy.md`).
    pub fn spawn_denial_rate_limit(mut self, limit: RateLimit) -> Self {
        self.denials.limit = limit;
        self
    }

    /// Checks the options before a run of a runtime caching compiled code in `cache`: no zero
    /// limit, no preopen of a pseudo-filesystem unless allowed, and nothing the host keeps
    /// reachable through a read-write preopen.
    pub(crate) fn check(&self, cache: Option<&Path>) -> Result<(), ConfigError> {
        if self.fuel == Some(0) {
            return Err(ConfigError::BadLimit { what: "fuel", reason: "must be at least 1".into() });
        }
        if self.max_memory == Some(0) {
            return Err(ConfigError::BadLimit { what: "memory limit", reason: "must be at least 1 byte".into() });
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(ConfigError::BadLimit { what: "timeout", reason: "must be longer than zero".into() });
        }
        if self.preopens.is_empty() {
            return Ok(());
        }
        let mounts = crate::preopen_reach::mounts();
        if !self.allow_pseudo_fs {
            for preopen in &self.preopens {
                if let Some(found) = crate::preopen_reach::pseudo_fs(&preopen.host, &mounts) {
                    return Err(ConfigError::PseudoFs {
                        preopen: preopen.host.clone(),
                        fs_type: found.fs_type,
                        mount: found.point,
                        contains: found.contains,
                    });
                }
            }
        }
        self.check_unreachable(&crate::preopen_reach::WritableRoots::of(&self.preopens, &mounts), cache)
    }

    /// Refuses what the host keeps when a read-write preopen reaches it.
    fn check_unreachable(
        &self,
        roots: &crate::preopen_reach::WritableRoots<'_>,
        cache: Option<&Path>,
    ) -> Result<(), ConfigError> {
        use crate::error::Reach;
        if roots.is_empty() {
            return Ok(());
        }
        let owned = |preopen: &Preopen| (preopen.host.clone(), preopen.guest.clone());
        for (rule, path) in self.policy.allowed_programs() {
            let (rule, path) = (rule.to_owned(), path.to_owned());
            match roots.reaching(&path) {
                None => {}
                Some((preopen, how @ (Reach::Inside | Reach::LinkInside))) => {
                    let (preopen, guest) = owned(preopen);
                    return Err(ConfigError::WritableProgram { rule, path, how, preopen, guest });
                }
                Some((preopen, Reach::Linked(links))) => {
                    let (preopen, guest) = owned(preopen);
                    return Err(ConfigError::LinkedProgram { rule, path, links, preopen, guest });
                }
            }
        }
        for dir in self.policy.search_path() {
            if let Some((preopen, how)) = roots.reaching(dir) {
                let (preopen, guest) = owned(preopen);
                return Err(ConfigError::WritableSearchDir { dir: dir.clone(), how, preopen, guest });
            }
        }
        if let Some(path) = &self.audit_log
            && let Some((preopen, how)) = roots.reaching(path)
        {
            let (preopen, guest) = owned(preopen);
            return Err(ConfigError::WritableAuditLog { path: path.clone(), how, preopen, guest });
        }
        if let Some(path) = self.policy.source()
            && let Some((preopen, how)) = roots.reaching(path)
        {
            let (preopen, guest) = owned(preopen);
            return Err(ConfigError::WritablePolicyFile { path: path.to_owned(), how, preopen, guest });
        }
        if let Some(dir) = cache
            && let Some((preopen, _)) = roots.reaching(dir)
        {
            let (preopen, guest) = owned(preopen);
            return Err(ConfigError::WritableCache { dir: dir.to_owned(), preopen, guest });
        }
        Ok(())
    }

    /// The spawner of one instance of the guest `guest`: none for a guest that cannot start
    /// programs (`may_spawn` unset: it imports none of wrt's functions).
    pub(crate) fn spawner(&self, guest: &str, may_spawn: bool) -> Result<Option<Spawner>, ConfigError> {
        if !may_spawn {
            // Nothing will be audited, but a log that cannot be opened is still the run's
            // error, whatever the guest.
            if let Some(path) = &self.audit_log {
                AuditLog::append_to_file(path)
                    .map_err(|reason| ConfigError::AuditLog { path: path.clone(), reason })?;
            }
            return Ok(None);
        }
        let mut spawner = Spawner::from_compiled(Arc::clone(&self.policy))
            .with_strategy(self.strategy)
            .strict(self.strict_strategy)
            .with_sandbox(self.child_sandbox_of_preopens())
            // A thread with the children's filter opens no socket: not for a guest that has a
            // network of its own (its sockets and HTTP requests are opened on its thread).
            .filter_on_spawning_thread(self.filter_on_guest_thread && !self.grants_network());
        let log = match (&self.audit_log, &self.audit_sink) {
            (Some(path), _) => Some(
                AuditLog::append_to_file(path)
                    .map_err(|reason| ConfigError::AuditLog { path: path.clone(), reason })?,
            ),
            (None, Some(sink)) => Some(AuditLog::shared(sink)),
            (None, None) => None,
        };
        if let Some(log) = log {
            spawner = spawner.with_audit_log(log.labelled(guest, self.request_id.clone()));
        }
        Ok(Some(spawner))
    }
}

impl RunOptions {
    /// The child sandbox: the preopens' canonical host directories, as the guest may use them
    /// (a preopen that cannot be resolved is left out: the run refuses it anyway).
    fn child_sandbox_of_preopens(&self) -> ChildSandbox {
        if !self.child_sandbox {
            return ChildSandbox::off();
        }
        self.preopens.iter().fold(ChildSandbox::confined().view(self.child_view), |sandbox, preopen| {
            match (std::fs::canonicalize(&preopen.host), preopen.access) {
                (Ok(dir), DirAccess::ReadOnly) => sandbox.read(dir),
                (Ok(dir), DirAccess::ReadWrite) => sandbox.write(dir),
                (Err(_), _) => sandbox,
            }
        })
    }
}

/// The compiled deny-all policy, shared by every default [`RunOptions`].
fn deny_all() -> Arc<CompiledPolicy> {
    static DENY_ALL: std::sync::OnceLock<Arc<CompiledPolicy>> = std::sync::OnceLock::new();
    Arc::clone(DENY_ALL.get_or_init(|| {
        // The deny-all policy has no rule to resolve; its only directory is `/`.
        Arc::new(Policy::deny_all().compile().expect("the deny-all policy compiles"))
    }))
}

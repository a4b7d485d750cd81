//! The sandbox builder: every setting of a guest run, with its default.

use std::path::{Path, PathBuf};
use std::time::Duration;

use wrt_host_spawn::{Policy, RateLimit, Spawner, Strategy};

use crate::abi::spawn_state::{DenialReporting, DeniedSpawn};
use crate::cache::CacheMode;
use crate::error::ConfigError;
use crate::external::policy::GcPolicy;
use crate::preopen::{DirAccess, Preopen};
use crate::sandbox::Sandbox;
use crate::stdio::{GuestOutput, GuestStdin};

/// Settings of a sandbox. Defaults: no arguments, an empty environment, no preopened
/// directories, stdin at end of file, stdout and stderr inherited, no memory limit beyond
/// wasm's own, no fuel limit, no timeout, linear memory marked `MADV_DONTFORK`, compiled
/// modules cached in the user cache directory, guests with unknown imports refused, no
/// slow-compile hook; for host programs: a policy that denies every spawn, no audit log, the
/// `posix_spawn` strategy with fallback to fork-exec.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use wrt_runtime::{GuestOutput, Outcome, Sandbox};
///
/// # fn main() -> wasmtime::Result<()> {
/// let sandbox = Sandbox::builder()
///     .arg("--verbose")
///     .env("LANG", "C")?
///     .stdout(GuestOutput::Capture { limit: 1 << 20 })
///     .max_memory(256 << 20)
///     .timeout(Duration::from_secs(2))
///     .build()?;
/// let guest = sandbox.load_file("app.wasm")?;
/// let report = sandbox.run(&guest)?;
/// assert_eq!(report.outcome, Outcome::Exited(0));
/// println!("{}", String::from_utf8_lossy(&report.stdout));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SandboxBuilder {
    pub(crate) argv0: Option<String>,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) preopens: Vec<Preopen>,
    pub(crate) stdin: GuestStdin,
    pub(crate) stdout: GuestOutput,
    pub(crate) stderr: GuestOutput,
    pub(crate) max_memory: Option<u64>,
    pub(crate) fuel: Option<u64>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) dontfork: bool,
    pub(crate) cache: CacheMode,
    pub(crate) policy: Policy,
    pub(crate) audit_log: Option<PathBuf>,
    pub(crate) strategy: Strategy,
    pub(crate) strict_strategy: bool,
    pub(crate) denials: DenialReporting,
    pub(crate) gc_policy: GcPolicy,
    pub(crate) unknown_imports_trap: bool,
    pub(crate) on_slow_compile: Option<SlowCompileHook>,
}

/// Called once when compiling a guest takes longer than its delay: the guest's name and the
/// size of its bytes.
#[derive(Clone)]
pub(crate) struct SlowCompileHook {
    pub(crate) after: Duration,
    pub(crate) hook: std::sync::Arc<SlowCompileFn>,
}

/// The function of a [`SlowCompileHook`].
pub(crate) type SlowCompileFn = dyn Fn(&str, u64) + Send + Sync;

/// How long a compilation runs before `wrt run` says it is compiling.
pub const SLOW_COMPILE: Duration = Duration::from_secs(1);

impl std::fmt::Debug for SandboxBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxBuilder")
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
            .field("dontfork", &self.dontfork)
            .field("cache", &self.cache)
            .field("policy", &self.policy)
            .field("audit_log", &self.audit_log)
            .field("strategy", &self.strategy)
            .field("strict_strategy", &self.strict_strategy)
            .field("denials", &self.denials)
            .field("gc_policy", &self.gc_policy)
            .field("unknown_imports_trap", &self.unknown_imports_trap)
            .field("on_slow_compile", &self.on_slow_compile.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl Default for SandboxBuilder {
    fn default() -> Self {
        Self {
            argv0: None,
            args: Vec::new(),
            env: Vec::new(),
            preopens: Vec::new(),
            stdin: GuestStdin::Null,
            stdout: GuestOutput::Inherit,
            stderr: GuestOutput::Inherit,
            max_memory: None,
            fuel: None,
            timeout: None,
            dontfork: true,
            cache: CacheMode::Default,
            policy: Policy::deny_all(),
            audit_log: None,
            strategy: Strategy::PosixSpawn,
            strict_strategy: false,
            denials: DenialReporting::default(),
            gc_policy: GcPolicy::default(),
            unknown_imports_trap: false,
            on_slow_compile: None,
        }
    }
}

impl SandboxBuilder {
    /// A builder with the defaults listed above.
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

    /// Sets a variable from `NAME=VALUE`, or from `NAME` alone with the host's value of `NAME`,
    /// as `--env` takes it (and `wasmtime run --env`).
    ///
    /// # Errors
    ///
    /// As [`SandboxBuilder::env`], and [`ConfigError::EnvNotSet`] for a `NAME` that the host
    /// does not set (or sets to something that is not UTF-8).
    ///
    /// # Ambient authority
    ///
    /// `NAME` alone passes the host's value to the guest.
    pub fn env_spec(self, spec: &str) -> Result<Self, ConfigError> {
        match spec.split_once('=') {
            Some((name, value)) => self.env(name, value),
            None if spec.is_empty() || spec.contains('\0') => Err(ConfigError::BadEnv { spec: spec.to_owned() }),
            None => match std::env::var(spec) {
                Ok(value) => self.env(spec, value),
                Err(_) => Err(ConfigError::EnvNotSet { name: spec.to_owned() }),
            },
        }
    }

    /// Passes the host's whole environment to the guest (variables whose name or value is not
    /// UTF-8 are left out), as `wasmtime run -S inherit-env` does. Variables set with
    /// [`SandboxBuilder::env`] afterwards replace the host's. Default: nothing of the host's
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

    /// Lets guests that import functions wrt does not provide be instantiated: each such
    /// function traps when called (`wasmtime run -W unknown-imports-trap`). Default: off, and
    /// such a guest fails to instantiate with [`crate::InstantiateError::UnknownImport`].
    pub fn unknown_imports_trap(mut self, on: bool) -> Self {
        self.unknown_imports_trap = on;
        self
    }

    /// Called once, from another thread, when compiling a guest (a cache miss) is still running
    /// `after` it started (`wrt run` uses [`SLOW_COMPILE`]), with the guest's name and its size
    /// in bytes: for a progress line. Never called for a module loaded from the cache. Default:
    /// none.
    pub fn on_slow_compile(mut self, after: Duration, hook: impl Fn(&str, u64) + Send + Sync + 'static) -> Self {
        self.on_slow_compile = Some(SlowCompileHook { after, hook: std::sync::Arc::new(hook) });
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

    /// Gives the guest a directory described by a parsed [`Preopen`].
    pub fn preopen_spec(mut self, preopen: Preopen) -> Self {
        self.preopens.push(preopen);
        self
    }

    /// The guest's standard input. Default: end of file.
    pub fn stdin(mut self, stdin: GuestStdin) -> Self {
        self.stdin = stdin;
        self
    }

    /// The guest's standard output. Default: inherited.
    pub fn stdout(mut self, stdout: GuestOutput) -> Self {
        self.stdout = stdout;
        self
    }

    /// The guest's standard error. Default: inherited.
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

    /// Wall-clock time a run may take, counted from the start of instantiation (the module's
    /// start function) through the first call; each later call on the same [`crate::Instance`]
    /// gets it afresh. Past it the run ends with [`crate::Outcome::TimedOut`], also while the
    /// guest is blocked in a `wrt_v1` call, a read of the inherited stdin, or a `poll_oneoff`
    /// sleep on a relative clock. Default: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether guest memories are marked `MADV_DONTFORK`, so a `fork()` of the host does not
    /// copy their page tables. Default: on. Turn off only to measure what it saves.
    pub fn dontfork(mut self, on: bool) -> Self {
        self.dontfork = on;
        self
    }

    /// Where compiled modules are cached. Default: [`CacheMode::Default`].
    pub fn cache(mut self, cache: CacheMode) -> Self {
        self.cache = cache;
        self
    }

    /// The policy for host programs the guest asks to run (the `wrt_v1` ABI). Default: deny
    /// every spawn.
    ///
    /// # Ambient authority
    ///
    /// Every program the policy allows runs with the host user's authority.
    pub fn spawn_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Appends a JSONL record of every spawn decision and exit to this file. Default: none.
    pub fn audit_log(mut self, path: impl AsRef<Path>) -> Self {
        self.audit_log = Some(path.as_ref().to_owned());
        self
    }

    /// How host programs are started. Default: [`Strategy::PosixSpawn`], falling back to
    /// fork-exec for requests it cannot express (rlimits) unless `strict`.
    pub fn spawn_strategy(mut self, strategy: Strategy, strict: bool) -> Self {
        self.strategy = strategy;
        self.strict_strategy = strict;
        self
    }

    /// When the host asks the guest (and wasmtime) to collect host buffers: see [`GcPolicy`].
    /// Default: [`GcPolicy::default`]. External bytes always count against
    /// [`SandboxBuilder::max_memory`].
    pub fn gc_policy(mut self, policy: GcPolicy) -> Self {
        self.gc_policy = policy;
        self
    }

    /// Called for every spawn the policy denies, for example to tell a user which flag would
    /// allow it. A hint it returns is appended to the message the guest reads with
    /// `last_error`. Default: none.
    ///
    /// Calls are rate-limited per guest instance (by default 20 per 10 seconds, see
    /// [`SandboxBuilder::spawn_denial_rate_limit`]): past the limit the hook is not called
    /// (and the guest's message has no hint); the count of what was left out goes to
    /// [`SandboxBuilder::on_spawn_denials_suppressed`].
    pub fn on_spawn_denied(mut self, hook: impl Fn(&DeniedSpawn) -> Option<String> + Send + Sync + 'static) -> Self {
        self.denials.on_denied = Some(std::sync::Arc::new(hook));
        self
    }

    /// Called with the guest's name and how many denied spawns the rate limit kept from
    /// [`SandboxBuilder::on_spawn_denied`]: before the next call the limit lets through, and
    /// when the guest instance ends. Default: none.
    pub fn on_spawn_denials_suppressed(mut self, hook: impl Fn(&str, u64) + Send + Sync + 'static) -> Self {
        self.denials.on_suppressed = Some(std::sync::Arc::new(hook));
        self
    }

    /// How often [`SandboxBuilder::on_spawn_denied`] is called, per guest instance. Default:
    /// [`RateLimit::default`] (20 per 10 seconds). The audit log has its own limit of the same
    /// default (see `docs/policy.md`).
    pub fn spawn_denial_rate_limit(mut self, limit: RateLimit) -> Self {
        self.denials.limit = limit;
        self
    }

    /// Checks the settings and creates the sandbox (a wasmtime engine and linker).
    ///
    /// # Errors
    ///
    /// A zero fuel, memory limit or timeout ([`ConfigError::BadLimit`]); an invalid spawn
    /// policy; a program the policy allows inside a read-write preopen
    /// ([`ConfigError::WritableProgram`]); or a failure to create the engine.
    pub fn build(self) -> wasmtime::Result<Sandbox> {
        if self.fuel == Some(0) {
            return Err(ConfigError::BadLimit { what: "fuel", reason: "must be at least 1".into() }.into());
        }
        if self.max_memory == Some(0) {
            return Err(ConfigError::BadLimit { what: "memory limit", reason: "must be at least 1 byte".into() }.into());
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(ConfigError::BadLimit { what: "timeout", reason: "must be longer than zero".into() }.into());
        }
        // Resolve and check the policy now, so a bad policy fails here and not at a spawn.
        let spawner =
            Spawner::new(self.policy.clone()).map_err(|e| wasmtime::Error::new(e).context("invalid spawn policy"))?;
        crate::preopen::check_programs_outside(&self.preopens, spawner.allowed_programs())?;
        drop(spawner);
        Sandbox::new(self)
    }

    /// The spawner of one guest instance.
    pub(crate) fn spawner(&self) -> wasmtime::Result<Spawner> {
        let mut spawner = Spawner::new(self.policy.clone())
            .map_err(|e| wasmtime::Error::new(e).context("invalid spawn policy"))?
            .with_strategy(self.strategy)
            .strict(self.strict_strategy);
        if let Some(path) = &self.audit_log {
            let log = wrt_host_spawn::AuditLog::append_to_file(path).map_err(|e| {
                wasmtime::Error::new(e).context(format!("failed to open audit log `{}`", path.display()))
            })?;
            spawner = spawner.with_audit_log(log);
        }
        Ok(spawner)
    }
}

//! `wrt run`: run a guest and exit with its status.

mod compat;
mod invoke_args;
mod spec;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use wrt_runtime::{
    CacheMode, DirAccess, GcPolicy, Guest, GuestOutput, GuestStdin, HttpRule, InstantiateError, NetRule, Outcome,
    Report, RunOptions, Runtime, RuntimeBuilder, Stats,
};

use self::compat::WasmtimeOptions;
use super::OnOff;

/// Run a WebAssembly module (WASI preview 1) or a command component (WASI 0.2 or 0.3)
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Give the guest a host directory, read-write: HOST, or HOST::GUEST to mount it elsewhere
    #[arg(long = "dir", value_name = "HOST[::GUEST]")]
    dirs: Vec<String>,

    /// Give the guest a host directory, read-only: HOST, or HOST::GUEST to mount it elsewhere
    #[arg(long = "ro-dir", value_name = "HOST[::GUEST]")]
    ro_dirs: Vec<String>,

    /// Allow a --dir or --ro-dir that is, lies inside or contains a kernel pseudo-filesystem
    /// (/proc, /sys, /dev, cgroups; `/` contains them all): the guest then reads the
    /// environment, memory and open files of the user's processes, wrt's own included, and
    /// reaches the kernel's settings and devices
    #[arg(long)]
    allow_pseudo_fs: bool,

    /// Set an environment variable of the guest; `NAME` alone passes the host's value (the
    /// guest sees no host variable otherwise)
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    env: Vec<String>,

    /// Let the guest's sockets (`wasi:sockets` of WASI 0.2 and 0.3) use these addresses:
    /// `loopback`, `any`, `ADDRESS[/PREFIX][:PORT]` or `[IPV6][/PREFIX][:PORT]`; repeatable. Without
    /// it the guest reaches no network (docs/policy.md, "The guest's own network")
    #[arg(long = "allow-net", value_name = "RULE", value_parser = net_rules)]
    allow_net: Vec<NetRules>,

    /// Let the guest's outgoing HTTP requests (`wasi:http`: `-S http`, or `wrt serve`) go to
    /// this server, over plain HTTP; repeatable. Without it every outgoing request is refused
    #[arg(long = "allow-http", value_name = "HOST[:PORT]")]
    allow_http: Vec<HttpRule>,

    /// The guest's `argv[0]` (default: the module's file name)
    #[arg(long, value_name = "NAME")]
    argv0: Option<String>,

    /// Instantiate a module whose imports wrt does not provide: calling one of them traps
    #[arg(long)]
    unknown_imports_trap: bool,

    /// Memory limit of the guest, e.g. `512MiB` (a unit is required): linear memory plus host
    /// buffers. memory.grow past it returns -1; a buffer past it is collected for, then refused
    /// (NO_MEMORY)
    #[arg(long, value_name = "SIZE", value_parser = wrt_text::parse_size)]
    max_memory: Option<u64>,

    /// Ask the guest's collector to free host buffers as they pile up (off: only at the memory
    /// limit; for comparisons)
    #[arg(long, value_name = "on|off", default_value = "on")]
    gc: OnOff,

    /// Young collection after this many bytes of new host buffers, e.g. `2MiB` (at most half the
    /// soft limit). Without it, 2 MiB, doubled (up to half the soft limit) while the guest's
    /// collections take more than a quarter of its time, two in a row
    #[arg(long, value_name = "SIZE", value_parser = wrt_text::parse_size)]
    gc_young: Option<u64>,

    /// Full collection when live host buffers grew by this much (at least; it grows with the
    /// survivors of full collections), e.g. `64MiB`
    #[arg(long, value_name = "SIZE", value_parser = wrt_text::parse_size)]
    gc_soft_limit: Option<u64>,

    /// How the soft limit grows with the survivors of a full collection (at least 1.5)
    #[arg(long, value_name = "FACTOR")]
    gc_growth: Option<f64>,

    /// Print what the guest used on exit (memory, collections, spawns) to stderr, as text or as
    /// one JSON line
    #[arg(long, value_name = "text|json", num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    stats: Option<StatsFormat>,

    /// Fuel (about one unit per wasm instruction) before the guest is stopped
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,

    /// Wall-clock time before the guest is stopped, e.g. `2s` or `500ms` (exit code 124)
    #[arg(long, value_name = "DURATION", value_parser = wrt_text::parse_duration)]
    timeout: Option<Duration>,

    /// Call this exported function instead of `_start`; ARGS are its parameters
    #[arg(long, value_name = "NAME")]
    invoke: Option<String>,

    /// Mark guest memory MADV_DONTFORK so forks of the host skip it (off only for comparisons)
    #[arg(long, value_name = "on|off", default_value = "on")]
    dontfork: OnOff,

    /// Compile the module even if a compiled copy is cached
    #[arg(long)]
    no_cache: bool,

    /// Let MODULE be compiled code from `wrt compile` (loaded as is: only for artifacts you
    /// compiled yourself, since wrt cannot check what they run)
    #[arg(long)]
    allow_precompiled: bool,

    /// The guest's standard input: `null` (end of file at once) or `inherit`
    #[arg(long, value_name = "null|inherit", default_value = "inherit")]
    stdin: StdinMode,

    /// Allow the guest to run this host program (a name looked up on the policy's PATH, or an
    /// absolute path); repeatable
    #[cfg(unix)]
    #[arg(long = "allow-run", value_name = "PROGRAM")]
    allow_run: Vec<String>,

    /// Never let the guest run this host program (wins over any allow rule); repeatable
    #[cfg(unix)]
    #[arg(long = "deny-run", value_name = "PROGRAM")]
    deny_run: Vec<String>,

    /// Spawn policy file (TOML, see docs/policy.md); --allow-run and --deny-run add to it
    #[cfg(unix)]
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Append a JSONL record of every spawn decision and exit to FILE
    #[cfg(unix)]
    #[arg(long, value_name = "FILE")]
    audit_log: Option<PathBuf>,

    /// How host programs are started. Default: vfork-exec for confined children (see
    /// --child-sandbox), posix-spawn for unconfined ones (fork-exec for those with rlimits);
    /// `posix-spawn` given explicitly refuses what it cannot do instead of switching
    #[cfg(unix)]
    #[arg(long, value_name = "STRATEGY")]
    spawn_strategy: Option<wrt_host_spawn::Strategy>,

    /// Confine every program the guest runs to what the guest was given: --ro-dir readable,
    /// --dir writable, system locations readable, no network unless its rule allows it, no
    /// new privileges (Landlock ABI 3 and seccomp; see docs/policy.md). `off` runs them with
    /// wrt's own authority, and audit records say so
    #[cfg(unix)]
    #[arg(long, value_name = "on|off", default_value = "on")]
    child_sandbox: OnOff,

    /// Run the confined programs in a view of their own: the file system read-only but for
    /// --dir, a /tmp of their own, a /proc of their own processes, System V IPC of their own
    /// (user, mount, PID and IPC namespaces). `off` shows them the host's mounts
    #[cfg(unix)]
    #[arg(long, value_name = "on|off", default_value = "on")]
    child_view: OnOff,

    /// Pass this host environment variable through to programs the guest runs; repeatable
    #[cfg(unix)]
    #[arg(long = "allow-env", value_name = "NAME")]
    allow_env: Vec<String>,

    /// wasmtime's wasm options: `-W timeout=DURATION`, `-W fuel=N`, `-W max-memory-size=BYTES`,
    /// `-W unknown-imports-trap` (comma-separated or repeated); `-W exceptions`, `-W tail-call`,
    /// `-W simd` and the other proposals every guest has are accepted
    #[arg(short = 'W', long = "wasm", value_name = "KEY[=VALUE]")]
    wasm_options: Vec<String>,

    /// wasmtime's WASI options: `-S inherit-env` (the guest sees the host's whole environment),
    /// `-S cli-exit-with-code` (always on)
    #[arg(short = 'S', long = "wasi", value_name = "KEY[=VALUE]")]
    wasi_options: Vec<String>,

    /// wasmtime's codegen options: `-C cache=n` is `--no-cache`; the others are refused
    #[arg(short = 'C', long = "codegen", value_name = "KEY[=VALUE]")]
    codegen_options: Vec<String>,

    /// wasmtime's optimization options: refused (wrt compiles with its own settings)
    #[arg(short = 'O', long = "optimize", value_name = "KEY[=VALUE]")]
    optimize_options: Vec<String>,

    /// The WebAssembly module (.wasm or .wat), then the guest's arguments (or the parameters of
    /// --invoke). Everything after the module goes to the guest verbatim, `--` and anything
    /// that looks like a wrt flag included: wrt's own flags come before the module
    #[arg(value_name = "MODULE", required = true, trailing_var_arg = true)]
    module_and_args: Vec<OsString>,

    /// The module: the first of `module_and_args`.
    #[arg(skip)]
    module: PathBuf,

    /// The guest's arguments: the rest of `module_and_args`.
    #[arg(skip)]
    args: Vec<String>,
}

/// The rules one `--allow-net` stands for (`loopback` and `any` are two each).
#[derive(Debug, Clone)]
struct NetRules(Vec<NetRule>);

/// Parses the value of `--allow-net`.
fn net_rules(text: &str) -> Result<NetRules, String> {
    NetRule::parse(text).map(NetRules).map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatsFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StdinMode {
    Null,
    Inherit,
}

impl RunArgs {
    /// The module and the guest's arguments as given.
    #[cfg(test)]
    pub(crate) fn module_and_args(&self) -> impl Iterator<Item = &OsString> {
        self.module_and_args.iter()
    }

    /// Splits `module_and_args` into the module and the guest's arguments.
    fn split_module_and_args(&mut self) -> anyhow::Result<()> {
        let mut rest = std::mem::take(&mut self.module_and_args).into_iter();
        self.module = rest.next().context("no module given")?.into();
        self.args = rest
            .map(|arg| {
                arg.into_string().map_err(|arg| anyhow::anyhow!("guest argument `{}` is not UTF-8", arg.display()))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(())
    }

    /// Turns the flags into the runtime's settings and the run's options; the runtime
    /// validates them.
    fn settings(&self) -> anyhow::Result<(RuntimeBuilder, RunOptions)> {
        let wasmtime = WasmtimeOptions::parse(
            &self.wasm_options,
            &self.wasi_options,
            &self.codegen_options,
            &self.optimize_options,
        )?;
        let mut runtime = Runtime::builder()
            .dontfork(self.dontfork == OnOff::On)
            .cache(if self.no_cache || wasmtime.no_cache { CacheMode::Disabled } else { CacheMode::User })
            .unknown_imports_trap(self.unknown_imports_trap || wasmtime.unknown_imports_trap)
            .http(wasmtime.http)
            .on_cache_unusable(|err| {
                say!("wrt: compile cache not used: {}", wrt_text::error_chain(err));
            });
        if std::io::stderr().is_terminal() {
            runtime = runtime.on_slow_compile(wrt_runtime::SLOW_COMPILE, |name, bytes| {
                let mb = bytes as f64 / 1e6;
                let precision = if mb < 10.0 { 1 } else { 0 };
                say!("wrt: compiling {name} ({mb:.precision$} MB)…");
            });
        }
        let mut builder = RunOptions::new()
            .stdout(GuestOutput::Inherit)
            .stderr(GuestOutput::Inherit)
            .stdin(match self.stdin {
                StdinMode::Null => GuestStdin::Null,
                StdinMode::Inherit => GuestStdin::Inherit,
            })
            .measure_cpu_time(self.stats.is_some());
        if self.invoke.is_none() {
            builder = builder.args(self.args.iter().cloned());
        }
        if let Some(argv0) = &self.argv0 {
            builder = builder.argv0(argv0);
        }
        for (specs, access) in [(&self.dirs, DirAccess::ReadWrite), (&self.ro_dirs, DirAccess::ReadOnly)] {
            for spec in specs {
                builder = builder.preopen_spec(spec::preopen(spec, access)?);
            }
        }
        builder = builder.allow_pseudo_fs(self.allow_pseudo_fs);
        let mut network: Vec<NetRule> = self.allow_net.iter().flat_map(|rules| rules.0.iter().copied()).collect();
        if wasmtime.inherit_network {
            network.extend(NetRule::parse("any").expect("`any` is a rule"));
        }
        builder = builder.allow_network(network);
        for server in &self.allow_http {
            builder = builder.allow_http(server.clone());
        }
        if wasmtime.inherit_env {
            builder = builder.inherit_env();
        }
        for spec in &self.env {
            builder = spec::env(builder, spec)?;
        }
        if let Some(max) = either("--max-memory", self.max_memory, "-W max-memory-size", wasmtime.max_memory)? {
            builder = builder.max_memory(max);
        }
        builder = builder.gc_policy(self.gc_policy()?);
        if let Some(fuel) = either("--fuel", self.fuel, "-W fuel", wasmtime.fuel)? {
            runtime = runtime.fuel(true);
            builder = builder.fuel(fuel);
        }
        let timeout = either("--timeout", self.timeout, "-W timeout", wasmtime.timeout)?;
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        // Without a timeout, guest code is compiled as `wasmtime run` compiles it (no epoch
        // checks); `wrt compile` output has them, so precompiled code is loaded with them.
        runtime = runtime.timeouts(timeout.is_some() || self.allow_precompiled);
        #[cfg(unix)]
        {
            builder = self.spawn_settings(builder)?;
        }
        // Compiled code the guest could write would run natively in the next `wrt run`.
        if !(self.no_cache || wasmtime.no_cache)
            && let Some(dir) = CacheMode::User.dir()
            && let Some(preopen) = builder.writable_preopen_reaching(&dir)
        {
            say!(
                "wrt: not using the compile cache `{}`: it lies inside `--dir {}`, which the guest can write",
                dir.display(),
                preopen.host.display()
            );
            runtime = runtime.cache(CacheMode::Disabled);
        }
        Ok((runtime, builder))
    }

    /// The collection policy from the `--gc*` flags.
    fn gc_policy(&self) -> anyhow::Result<GcPolicy> {
        let tuned = self.gc_young.is_some() || self.gc_soft_limit.is_some() || self.gc_growth.is_some();
        if self.gc == OnOff::Off {
            anyhow::ensure!(!tuned, "`--gc off` takes no `--gc-young`, `--gc-soft-limit` or `--gc-growth`");
            return Ok(GcPolicy::disabled());
        }
        Ok(GcPolicy::with_defaults(self.gc_young, self.gc_soft_limit, self.gc_growth)?)
    }

    /// The spawn policy and its companions from the flags.
    #[cfg(unix)]
    fn spawn_settings(&self, builder: RunOptions) -> anyhow::Result<RunOptions> {
        use wrt_runtime::wrt_host_spawn::{Policy, Strategy};
        let mut policy = match &self.policy {
            Some(path) => Policy::from_file(path)?,
            None => Policy::deny_all(),
        };
        for program in &self.allow_run {
            policy = policy.allow_program(program);
        }
        for program in &self.deny_run {
            policy = policy.deny_program(program);
        }
        policy = policy.env_passthrough(&self.allow_env);
        let (strategy, strict) = match self.spawn_strategy {
            None => (Strategy::PosixSpawn, false),
            Some(strategy) => (strategy, strategy == Strategy::PosixSpawn),
        };
        let mut builder = builder
            .spawn_policy(&policy)?
            .spawn_strategy(strategy, strict)
            .child_sandbox(self.child_sandbox == OnOff::On)
            .child_view(self.child_view == OnOff::On)
            // This process runs one guest: its threads may keep the children's filter.
            .filter_on_guest_thread(true)
            .on_spawn_denied(|denied| {
                use wrt_text::Shown;
                // The program is the guest's: escaped and capped, so it can forge no line and
                // send no terminal escape. `reason` is escaped already. The hint only when it
                // would work: not for a file that is no program, nor for a program already
                // allowed or denied. The runtime decides whether the guest sees it too.
                let program = Shown::new(&denied.program);
                let hint = denied.allow_rule_would_help.then(|| format!("allow it with `--allow-run {program}`"));
                match &hint {
                    Some(hint) => say!("wrt: {}; {hint}", denied.reason),
                    None => say!("wrt: {}", denied.reason),
                }
                hint
            })
            .on_spawn_denials_suppressed(|guest, count| {
                use wrt_text::Shown;
                let guest = Shown::new(guest);
                say!("wrt: {count} more denied spawns of guest `{guest}` not shown (rate limit)");
            });
        if let Some(path) = &self.audit_log {
            builder = builder.audit_log(path);
        }
        Ok(builder)
    }

    /// The runtime's settings, the options of each request's instance, and the component, for
    /// `wrt serve`: no guest arguments, no `--invoke`, no precompiled code. The audit log, if
    /// any, is opened once, here, and shared by every request's instance; the last value says
    /// whether there is one (so that each request's records name it).
    pub(crate) fn service_settings(&mut self) -> anyhow::Result<(RuntimeBuilder, RunOptions, PathBuf, bool)> {
        self.split_module_and_args()?;
        anyhow::ensure!(self.args.is_empty(), "`wrt serve` takes one component and no arguments for it");
        anyhow::ensure!(
            self.invoke.is_none(),
            "`wrt serve` calls the component's HTTP handler: it takes no `--invoke`"
        );
        anyhow::ensure!(!self.allow_precompiled, "`wrt serve` takes no `--allow-precompiled`");
        anyhow::ensure!(self.stats.is_none(), "`wrt serve` takes no `--stats`: a server has no end to report at");
        let (runtime, mut options) = self.settings()?;
        // The server's threads run its listener and connections too: none of them may keep the
        // children's filter, which forbids sockets for good.
        options = options.filter_on_guest_thread(false);
        #[cfg(unix)]
        if let Some(path) = &self.audit_log {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .with_context(|| format!("failed to open the audit log `{}`", path.display()))?;
            options = options.audit_sink(wrt_host_spawn::AuditSink::new(file));
        }
        Ok((runtime, options, self.module.clone(), self.audit_log.is_some()))
    }

    pub(crate) fn run(mut self) -> anyhow::Result<ExitCode> {
        self.split_module_and_args()?;
        let (runtime, options) = self.settings()?;
        let runtime = runtime.build()?;
        let guest = if self.allow_precompiled && wrt_runtime::PrecompiledFile::detect(&self.module) {
            #[allow(unsafe_code, reason = "--allow-precompiled: the user vouches for the compiled code")]
            // SAFETY: the user asked for this file to be loaded as compiled code, which the
            // flag's help and docs say means vouching for its contents (`PrecompiledFile::trusted`).
            let file = unsafe { wrt_runtime::PrecompiledFile::trusted(&self.module) };
            runtime.load_precompiled(&file)
        } else {
            runtime.load_file(&self.module)
        }
        .map_err(with_hint)?;
        let report = match &self.invoke {
            Some(export) => invoke(&guest, &options, export, &self.args),
            None => guest.run(&options),
        }
        .map_err(with_hint)?;
        if let Some(format) = self.stats {
            print_stats(&report.stats, format);
        }
        let name = self.module.display();
        match &report.outcome {
            Outcome::Exited(_) => {}
            Outcome::Returned(values) => {
                let mut stdout = std::io::stdout().lock();
                for value in values {
                    writeln!(stdout, "{value}").context("failed to write the results")?;
                }
            }
            Outcome::Trapped(trap) => say!("wrt: guest `{name}` trapped: {trap}"),
            Outcome::TimedOut(after) => say!("wrt: guest `{name}` timed out after {after:?}"),
            Outcome::OutOfFuel(fuel) => say!("wrt: guest `{name}` ran out of fuel (all {fuel} units used)"),
            _ => say!("wrt: guest `{name}` ended in an unknown way"),
        }
        Ok(ExitCode::from(report.outcome.exit_status()))
    }
}

/// `--invoke EXPORT`: a fresh instance, then the arguments parsed as the export's parameters,
/// then the call. A start function that ended the guest ends the run before the export or
/// its arguments are looked at.
fn invoke(guest: &Guest, options: &RunOptions, export: &str, args: &[String]) -> wrt_runtime::Result<Report> {
    let mut instance = guest.instantiate(options)?;
    let outcome = match instance.ended() {
        Some(outcome) => outcome.clone(),
        None => {
            let values = invoke_args::parse(guest.name(), export, &guest.export_params(export)?, args)?;
            instance.invoke(export, &values)?
        }
    };
    Ok(instance.into_report(outcome))
}

/// The value of a wrt flag or of its wasmtime `-W` spelling; both at once is an error.
fn either<T>(flag: &str, value: Option<T>, option: &str, from_option: Option<T>) -> anyhow::Result<Option<T>> {
    match (value, from_option) {
        (Some(_), Some(_)) => anyhow::bail!("`{flag}` and `{option}` set the same limit: give one"),
        (value, from_option) => Ok(value.or(from_option)),
    }
}

/// Adds the `wrt run` flag that fixes an instantiation error.
pub(crate) fn with_hint(err: wrt_runtime::wasmtime::Error) -> anyhow::Error {
    let hint = match err.downcast_ref::<InstantiateError>() {
        Some(InstantiateError::UnknownImport { .. }) => {
            Some("`--unknown-imports-trap` instantiates it with imports that trap when called")
        }
        Some(InstantiateError::NoSuchExport { export, .. }) if export == "_start" => {
            Some("it is not a WASI command: call one of its functions with `--invoke NAME`")
        }
        Some(InstantiateError::MemoryLimit { .. }) => Some("raise the limit with `--max-memory`"),
        _ => None,
    };
    let err = anyhow::Error::from(err);
    match hint {
        Some(hint) => anyhow::anyhow!("{err:#}; {hint}"),
        None => err,
    }
}

/// Prints `stats` to stderr.
fn print_stats(stats: &Stats, format: StatsFormat) {
    let gc_seconds = stats.gc_time.as_secs_f64();
    match format {
        StatsFormat::Json => match serde_json::to_string(stats) {
            Ok(json) => say!("{json}"),
            Err(err) => say!("wrt: failed to write the stats as JSON: {err}"),
        },
        StatsFormat::Text => {
            let mib = |bytes: u64| format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20));
            say!("wrt: stats: peak linear memory   {}", mib(stats.peak_linear_memory));
            say!("wrt: stats: peak host buffers    {}", mib(stats.peak_external));
            say!("wrt: stats: peak buffer memory   {}", mib(stats.peak_buffer_memory));
            say!("wrt: stats: final host buffers   {}", mib(stats.final_external));
            say!("wrt: stats: young collections    {}", stats.young_collections);
            say!("wrt: stats: full collections     {}", stats.full_collections);
            say!("wrt: stats: time in collections  {:.1} ms", gc_seconds * 1e3);
            say!("wrt: stats: spawns               {}", stats.spawns);
            say!("wrt: stats: spawns refused       {}", stats.spawns_refused);
            say!("wrt: stats: child stream bytes   {}", stats.stream_bytes);
            say!("wrt: stats: memory refusals      {}", stats.memory_refusals);
            say!("wrt: stats: fuel consumed        {}", stats.fuel_consumed);
            say!("wrt: stats: wall time            {:.1} ms", stats.wall_time.as_secs_f64() * 1e3);
            say!("wrt: stats: guest CPU time       {:.1} ms", stats.cpu_time.as_secs_f64() * 1e3);
        }
    }
}

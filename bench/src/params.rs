//! The parameters of each workload: typed [`Setting`]s (what `wrt bench`'s flags give), a grid
//! of configurations from lists of them ([`Params::grid`]), and the one parser of the strings a
//! user types as `--compare 'KEY=VALUE'` ([`Params::apply`]).

use std::fmt;

use serde::{Serialize, Serializer};
pub use wrt_runtime::wrt_host_spawn::Strategy;

pub use crate::buffer::BufferParams;
pub use crate::component::{ComponentSpawnParams, ComponentStartupParams};
pub use crate::instantiate::InstantiateParams;
pub use crate::overhead::SpawnOverheadParams;
pub use crate::pipeline::PipelineParams;
pub use crate::real::RealParams;
pub use crate::spawn::SpawnParams;
pub use crate::startup::StartupParams;
use crate::workload::Workload;

/// A parameter that could not be set.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamError {
    /// `KEY=VALUE` without `=`.
    #[error("`{0}` is not KEY=VALUE")]
    NotKeyValue(String),
    /// No parameter of that name for this workload.
    #[error("`{key}` is not a parameter of `wrt bench {workload}` (known: {known})")]
    UnknownKey {
        /// The workload.
        workload: &'static str,
        /// The key given.
        key: String,
        /// The workload's keys.
        known: String,
    },
    /// The value does not parse.
    #[error("invalid value `{value}` for `{key}`: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// Why.
        reason: String,
    },
}

impl ParamError {
    /// `key` is not a parameter of `workload`.
    pub fn unknown(workload: &dyn Workload, key: &str) -> Self {
        ParamError::UnknownKey { workload: workload.name(), key: key.to_owned(), known: workload.keys().join(", ") }
    }
}

/// [`Workload::get`] of a workload whose one parameter is `n`.
pub(crate) fn get_n(n: u32, key: &str) -> Option<Setting> {
    (key == "n").then_some(Setting::N(n))
}

/// [`Workload::set`] of a workload whose one parameter is `n`: the new `n`, or the error that
/// names `workload` for any other setting.
pub(crate) fn set_n(workload: &dyn Workload, setting: Setting) -> Result<u32, ParamError> {
    match setting {
        Setting::N(n) => Ok(n),
        other => Err(ParamError::unknown(workload, other.key())),
    }
}

/// Declares a closed set of values that the command line names: the enum, `ALL` (every value,
/// in the order `--help` lists them), `name` (the spelling of the flags, `--compare` and the
/// JSON) and, with the `clap` feature, its `clap::ValueEnum`.
macro_rules! named_values {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order `--help` lists them.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The value as the command line spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        #[cfg(feature = "clap")]
        impl clap::ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                &$name::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()))
            }
        }
    };
}

named_values! {
    /// What the guest does for each spawn (`wrt bench spawn --method`).
    pub enum Method {
        /// `spawn` then `wait`.
        Spawn = "spawn",
        /// The one-shot `run`, capturing output.
        Run = "run",
        /// `spawn` of `/bin/sh -c 'exec /bin/true'` (two execs).
        Shell = "shell",
    }
}

impl Method {
    /// The spawn guest's export that does this, `n` times.
    pub fn export(self) -> &'static str {
        match self {
            Method::Spawn => "spawn_wait",
            Method::Run => "run_capture",
            Method::Shell => "sh_exec",
        }
    }
}

named_values! {
    /// Which guest runs the buffer workload (`wrt bench buffer --guest`).
    pub enum BufferGuest {
        /// Rust with the SDK's `Buffer` (released on drop).
        Rust = "rust",
        /// AssemblyScript, whose collector releases buffers from finalisers.
        Assemblyscript = "assemblyscript",
        /// WAT holding buffers as `externref` (wasmtime's collector frees them).
        Externref = "externref",
    }
}

named_values! {
    /// Which guest `wrt bench instantiate` instantiates and runs (`--guest`).
    pub enum InstantiateGuest {
        /// `(func (export "_start"))`: no import, no memory.
        Trivial = "trivial",
        /// Imports five WASI preview 1 functions and a memory, calls none of them.
        Wasi = "wasi",
        /// Prints a line to stdout with `fd_write` and exits 7 with `proc_exit`.
        Hello = "hello",
    }
}

named_values! {
    /// The [`RunOptions`](wrt_runtime::RunOptions) each run of `wrt bench instantiate` gets
    /// (`--config`; built once per configuration, shared by every run).
    pub enum RunConfig {
        /// The defaults (stdout discarded).
        Defaults = "defaults",
        /// A 10 s timeout, never reached.
        Timeout = "timeout",
        /// A spawn policy with one allow rule (`/bin/true`).
        Policy = "policy",
        /// Two arguments, the policy, a memory limit, a collection policy and the timeout.
        All = "all",
    }
}

named_values! {
    /// What one configuration of `wrt bench real` runs (`--case`): a mode of the guest
    /// `bench_tree_search`, as the core module or as the component built from the same source.
    pub enum RealCase {
        /// `tree-search /t NEEDLE` over the tree, the core module.
        TreeSearchCore = "tree-search-core",
        /// `tree-search /t NEEDLE` over the tree, the component.
        TreeSearchComponent = "tree-search-component",
        /// `hexdump` of a 1 MiB file, the core module.
        HexdumpCore = "hexdump-core",
        /// `hexdump` of a 1 MiB file, the component.
        HexdumpComponent = "hexdump-component",
        /// `emit BYTES` to a pipe, the core module.
        EmitCore = "emit-core",
    }
}

/// The most files `wrt bench real --files` takes.
pub const MAX_FILES: u32 = 1_000_000;

/// The most threads `wrt bench instantiate --threads` takes (the floor's instance pool holds
/// twice as many slots).
pub const MAX_THREADS: u32 = 64;

/// The parameters of one configuration of a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "workload", rename_all = "kebab-case")]
pub enum Params {
    /// `wrt bench spawn`
    Spawn(SpawnParams),
    /// `wrt bench buffer`
    Buffer(BufferParams),
    /// `wrt bench startup`
    Startup(StartupParams),
    /// `wrt bench instantiate`
    Instantiate(InstantiateParams),
    /// `wrt bench pipeline`
    Pipeline(PipelineParams),
    /// `wrt bench component-spawn`
    ComponentSpawn(ComponentSpawnParams),
    /// `wrt bench component-startup`
    ComponentStartup(ComponentStartupParams),
    /// `wrt bench spawn-overhead`
    SpawnOverhead(SpawnOverheadParams),
    /// `wrt bench real`
    Real(RealParams),
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ParamError {
    ParamError::BadValue { key: key.to_owned(), value: value.to_owned(), reason: reason.into() }
}

fn parse_n(key: &str, value: &str) -> Result<u32, ParamError> {
    value.parse::<u32>().map_err(|e| bad(key, value, e.to_string()))
}

/// A size with a unit, or a number of bytes: parameters print sizes as bytes (`heap=1048576`).
fn parse_size(key: &str, value: &str) -> Result<u64, ParamError> {
    wrt_runtime::parse_bytes(value).map_err(|e| bad(key, value, e.to_string()))
}

fn parse_on_off(key: &str, value: &str) -> Result<bool, ParamError> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(key, value, "expected `on` or `off`")),
    }
}

pub(crate) fn serialize_strategy<S: Serializer>(strategy: &Strategy, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(strategy.flag_value())
}

/// The value of `key` named `value` among `all`, by `name`.
fn one_of<T: Copy>(key: &str, value: &str, all: &[T], name: fn(T) -> &'static str) -> Result<T, ParamError> {
    all.iter().copied().find(|v| name(*v) == value).ok_or_else(|| {
        let names: Vec<String> = all.iter().map(|v| format!("`{}`", name(*v))).collect();
        let expected = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        bad(key, value, format!("expected {expected}"))
    })
}

/// One typed value of one parameter: what a flag of `wrt bench <workload>` gives, or what
/// [`Params::apply`] parses from `KEY=VALUE`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Setting {
    /// `n` (every workload): operations per run, at least 1.
    N(u32),
    /// `heap` (spawn): touched guest linear memory, bytes.
    Heap(u64),
    /// `external` (spawn): live host buffers, bytes.
    External(u64),
    /// `strategy` (spawn).
    Strategy(Strategy),
    /// `dontfork` (spawn): `on` is true.
    Dontfork(bool),
    /// `sandbox` (spawn): `on` is true.
    Sandbox(bool),
    /// `method` (spawn).
    Method(Method),
    /// `body-size` (buffer): bytes, 1 to 64 MiB.
    BodySize(u64),
    /// `guest` (buffer).
    Guest(BufferGuest),
    /// `gc` (buffer): `on` is true.
    Gc(bool),
    /// `gc-young` (buffer): bytes.
    GcYoung(u64),
    /// `gc-soft-limit` (buffer): bytes.
    GcSoftLimit(u64),
    /// `gc-growth` (buffer).
    GcGrowth(f64),
    /// `guest` (instantiate).
    InstantiateGuest(InstantiateGuest),
    /// `config` (instantiate).
    Config(RunConfig),
    /// `threads` (instantiate): 1 to [`MAX_THREADS`].
    Threads(u32),
    /// `bytes` (pipeline: bytes through the pipeline; real: bytes that emit writes), at least 1.
    Bytes(u64),
    /// `files` (real): files in the tree, 1 to [`MAX_FILES`].
    Files(u32),
    /// `case` (real).
    Case(RealCase),
}

impl Setting {
    /// The key of this setting, as the flag is spelled without `--` (`n` for `-n`).
    pub fn key(&self) -> &'static str {
        match self {
            Setting::N(_) => "n",
            Setting::Heap(_) => "heap",
            Setting::External(_) => "external",
            Setting::Strategy(_) => "strategy",
            Setting::Dontfork(_) => "dontfork",
            Setting::Sandbox(_) => "sandbox",
            Setting::Method(_) => "method",
            Setting::BodySize(_) => "body-size",
            Setting::Guest(_) => "guest",
            Setting::Gc(_) => "gc",
            Setting::GcYoung(_) => "gc-young",
            Setting::GcSoftLimit(_) => "gc-soft-limit",
            Setting::GcGrowth(_) => "gc-growth",
            Setting::InstantiateGuest(_) => "guest",
            Setting::Config(_) => "config",
            Setting::Threads(_) => "threads",
            Setting::Bytes(_) => "bytes",
            Setting::Files(_) => "files",
            Setting::Case(_) => "case",
        }
    }

    /// `value` parsed as a value of this setting's parameter (the value this setting holds is
    /// ignored).
    ///
    /// # Errors
    ///
    /// A value that does not parse.
    fn parsed(self, value: &str) -> Result<Setting, ParamError> {
        let key = self.key();
        Ok(match self {
            Setting::N(_) => Setting::N(parse_n(key, value)?),
            Setting::Heap(_) => Setting::Heap(parse_size(key, value)?),
            Setting::External(_) => Setting::External(parse_size(key, value)?),
            Setting::Strategy(_) => Setting::Strategy(one_of(
                key,
                value,
                &[Strategy::PosixSpawn, Strategy::ForkExec, Strategy::VforkExec],
                Strategy::flag_value,
            )?),
            Setting::Dontfork(_) => Setting::Dontfork(parse_on_off(key, value)?),
            Setting::Sandbox(_) => Setting::Sandbox(parse_on_off(key, value)?),
            Setting::Method(_) => Setting::Method(one_of(key, value, &Method::ALL, Method::name)?),
            Setting::BodySize(_) => Setting::BodySize(parse_size(key, value)?),
            Setting::Guest(_) => Setting::Guest(one_of(key, value, &BufferGuest::ALL, BufferGuest::name)?),
            Setting::Gc(_) => Setting::Gc(parse_on_off(key, value)?),
            Setting::GcYoung(_) => Setting::GcYoung(parse_size(key, value)?),
            Setting::GcSoftLimit(_) => Setting::GcSoftLimit(parse_size(key, value)?),
            Setting::GcGrowth(_) => Setting::GcGrowth(value.parse().map_err(|_| bad(key, value, "not a number"))?),
            Setting::InstantiateGuest(_) => {
                Setting::InstantiateGuest(one_of(key, value, &InstantiateGuest::ALL, InstantiateGuest::name)?)
            }
            Setting::Config(_) => Setting::Config(one_of(key, value, &RunConfig::ALL, RunConfig::name)?),
            Setting::Threads(_) => Setting::Threads(parse_n(key, value)?),
            Setting::Bytes(_) => Setting::Bytes(parse_size(key, value)?),
            Setting::Files(_) => Setting::Files(parse_n(key, value)?),
            Setting::Case(_) => Setting::Case(one_of(key, value, &RealCase::ALL, RealCase::name)?),
        })
    }

    /// The error of this setting's value being out of its parameter's range, saying why.
    pub fn out_of_range(&self, reason: &str) -> ParamError {
        bad(self.key(), &self.value(), reason)
    }

    /// The value as [`Params::apply`] would take it back.
    fn value(&self) -> String {
        let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
        match *self {
            Setting::N(n) | Setting::Threads(n) | Setting::Files(n) => n.to_string(),
            Setting::Heap(b) | Setting::External(b) | Setting::BodySize(b) => size(b),
            Setting::GcYoung(b) | Setting::GcSoftLimit(b) => size(b),
            Setting::Strategy(s) => s.flag_value().to_owned(),
            Setting::Dontfork(b) | Setting::Gc(b) | Setting::Sandbox(b) => on_off(b),
            Setting::Method(m) => m.name().to_owned(),
            Setting::Guest(g) => g.name().to_owned(),
            Setting::GcGrowth(f) => f.to_string(),
            Setting::InstantiateGuest(g) => g.name().to_owned(),
            Setting::Config(c) => c.name().to_owned(),
            Setting::Bytes(b) => size(b),
            Setting::Case(c) => c.name().to_owned(),
        }
    }
}

impl Params {
    /// The workload this configuration is of: the one registration of each workload.
    pub fn workload(&self) -> &dyn Workload {
        match self {
            Params::Spawn(p) => p,
            Params::Buffer(p) => p,
            Params::Startup(p) => p,
            Params::Instantiate(p) => p,
            Params::Pipeline(p) => p,
            Params::ComponentSpawn(p) => p,
            Params::ComponentStartup(p) => p,
            Params::SpawnOverhead(p) => p,
            Params::Real(p) => p,
        }
    }

    /// The workload this configuration is of, to set its parameters.
    pub fn workload_mut(&mut self) -> &mut dyn Workload {
        match self {
            Params::Spawn(p) => p,
            Params::Buffer(p) => p,
            Params::Startup(p) => p,
            Params::Instantiate(p) => p,
            Params::Pipeline(p) => p,
            Params::ComponentSpawn(p) => p,
            Params::ComponentStartup(p) => p,
            Params::SpawnOverhead(p) => p,
            Params::Real(p) => p,
        }
    }

    /// The workload's name, as in `wrt bench <name>`.
    pub fn name(&self) -> &'static str {
        self.workload().name()
    }

    /// The keys [`Params::apply`] knows for this workload.
    pub fn keys(&self) -> &'static [&'static str] {
        self.workload().keys()
    }

    /// Parses `value` for the parameter `key` of this workload (as the flag is spelled,
    /// without `--`). This is the only parser of parameter strings.
    ///
    /// # Errors
    ///
    /// An unknown key, or a value that does not parse.
    pub fn parse(&self, key: &str, value: &str) -> Result<Setting, ParamError> {
        let workload = self.workload();
        let key = workload.aliases().iter().find(|(alias, _)| *alias == key).map_or(key, |(_, key)| key);
        // The current value says the type of the parameter.
        let current = workload.get(key).ok_or_else(|| ParamError::unknown(workload, key))?;
        let setting = current.parsed(value)?;
        // The ranges are checked once, on the typed value.
        self.clone().set(setting).map_err(|e| match e {
            ParamError::BadValue { key, reason, .. } => ParamError::BadValue { key, value: value.to_owned(), reason },
            other => other,
        })?;
        Ok(setting)
    }

    /// Sets one parameter.
    ///
    /// # Errors
    ///
    /// A setting this workload does not have, or a value out of its range.
    pub fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        if let Setting::N(0) = setting {
            return Err(setting.out_of_range("must be at least 1"));
        }
        self.workload_mut().set(setting)
    }

    /// Every combination of the axes' values, from `self` (an empty axis keeps its value):
    /// the first axis varies slowest.
    ///
    /// # Errors
    ///
    /// As [`Params::set`].
    pub fn grid(self, axes: &[Vec<Setting>]) -> Result<Vec<Params>, ParamError> {
        let mut configs = vec![self];
        for axis in axes.iter().filter(|axis| !axis.is_empty()) {
            let mut next = Vec::with_capacity(configs.len() * axis.len());
            for config in &configs {
                for &setting in axis {
                    let mut config = config.clone();
                    config.set(setting)?;
                    next.push(config);
                }
            }
            configs = next;
        }
        Ok(configs)
    }

    /// Applies `KEY=VALUE`.
    ///
    /// # Errors
    ///
    /// As [`Params::set`], or no `=`.
    pub fn apply(&mut self, key_value: &str) -> Result<(), ParamError> {
        let (key, value) = key_value.split_once('=').ok_or_else(|| ParamError::NotKeyValue(key_value.to_owned()))?;
        let setting = self.parse(key.trim_start_matches("--"), value)?;
        self.set(setting)
    }

    /// The value of `key` as [`Params::apply`] would take it back.
    pub fn get(&self, key: &str) -> Option<String> {
        self.workload().get(key).map(|setting| setting.value())
    }
}

/// `bytes` in the largest binary unit that divides it (`600MiB`, `2GiB`, `0`).
pub fn size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

impl fmt::Display for Params {
    /// The parameters as `key=value` pairs, in [`Params::keys`] order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self.keys().iter().filter_map(|k| self.get(k).map(|v| format!("{k}={v}"))).collect();
        f.write_str(&pairs.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn() -> Params {
        Params::Spawn(SpawnParams {
            n: 10,
            heap: 0,
            external: 0,
            strategy: Strategy::PosixSpawn,
            dontfork: true,
            sandbox: false,
            method: Method::Spawn,
            view: true,
        })
    }

    #[test]
    fn set_and_get_round_trip() {
        let mut p = spawn();
        for kv in ["heap=600MiB", "strategy=fork-exec", "dontfork=off", "method=shell", "n=5", "external=1GiB"] {
            p.apply(kv).unwrap();
            let (k, v) = kv.split_once('=').unwrap();
            assert_eq!(p.get(k).as_deref(), Some(v));
        }
        assert_eq!(
            p.to_string(),
            "n=5 heap=600MiB external=1GiB strategy=fork-exec dontfork=off method=shell sandbox=off"
        );
    }

    #[test]
    fn bad_keys_and_values_are_named() {
        let mut p = spawn();
        assert_eq!(p.apply("heap"), Err(ParamError::NotKeyValue("heap".into())));
        let err = p.apply("colour=red").unwrap_err().to_string();
        assert!(err.contains("`colour` is not a parameter of `wrt bench spawn`") && err.contains("heap"), "{err}");
        for kv in ["heap=lots", "n=0", "n=-1", "strategy=vfork", "dontfork=maybe", "method=exec"] {
            let err = p.apply(kv).unwrap_err();
            assert!(matches!(err, ParamError::BadValue { .. }), "{kv}: {err}");
            assert!(err.to_string().contains(kv.split_once('=').unwrap().1), "{err}");
        }
        let mut b = Params::Buffer(BufferParams {
            n: 1,
            body_size: 1,
            guest: BufferGuest::Rust,
            gc: true,
            gc_young: 1,
            gc_soft_limit: 1,
            gc_growth: 2.0,
        });
        assert!(b.apply("guest=python").is_err());
        assert!(b.apply("body-size=0").is_err());
        b.apply("guest=assemblyscript").unwrap();
        b.apply("iterations=7").unwrap();
        assert_eq!(b.get("n").as_deref(), Some("7"));
        assert!(b.apply("spawns=7").is_err());
        assert_eq!(b.get("guest").as_deref(), Some("assemblyscript"));
    }

    #[test]
    fn typed_grids_vary_the_first_axis_slowest() {
        let axes = [
            vec![Setting::Strategy(Strategy::PosixSpawn), Setting::Strategy(Strategy::ForkExec)],
            vec![],
            vec![Setting::Heap(0), Setting::Heap(600 << 20)],
        ];
        let configs = spawn().grid(&axes).unwrap();
        let shown: Vec<String> =
            configs.iter().map(|c| format!("{} {}", c.get("strategy").unwrap(), c.get("heap").unwrap())).collect();
        assert_eq!(shown, ["posix-spawn 0", "posix-spawn 600MiB", "fork-exec 0", "fork-exec 600MiB"]);
        assert!(matches!(spawn().grid(&[vec![Setting::Guest(BufferGuest::Rust)]]), Err(ParamError::UnknownKey { .. })));
        assert!(matches!(spawn().grid(&[vec![Setting::N(0)]]), Err(ParamError::BadValue { .. })));
    }

    #[test]
    fn instantiate_keys_parse_and_check_their_range() {
        let mut p = Params::Instantiate(InstantiateParams {
            n: 10,
            guest: InstantiateGuest::Trivial,
            config: RunConfig::Defaults,
            threads: 1,
        });
        for kv in ["guest=hello", "config=all", "threads=4", "instantiations=7"] {
            p.apply(kv).unwrap();
        }
        assert_eq!(p.to_string(), "n=7 guest=hello config=all threads=4");
        for kv in ["guest=rust", "config=none", "threads=0", "threads=65", "body-size=1"] {
            assert!(p.apply(kv).is_err(), "{kv}");
        }
        // `guest` names the buffer workload's guests there, and only those.
        let mut b = Params::Buffer(BufferParams {
            n: 1,
            body_size: 1,
            guest: BufferGuest::Rust,
            gc: true,
            gc_young: 1,
            gc_soft_limit: 1,
            gc_growth: 2.0,
        });
        assert!(b.apply("guest=hello").is_err());
        assert!(b.set(Setting::InstantiateGuest(InstantiateGuest::Hello)).is_err());
    }

    #[test]
    fn pipeline_bytes_are_a_size_of_at_least_one_byte() {
        let mut p = Params::Pipeline(PipelineParams { bytes: 1 });
        p.apply("bytes=1GiB").unwrap();
        assert_eq!(p.to_string(), "bytes=1GiB");
        p.apply("n=3MiB").unwrap();
        assert_eq!(p.get("bytes").as_deref(), Some("3MiB"));
        for kv in ["bytes=0", "bytes=lots", "bytes=-1"] {
            let err = p.apply(kv).unwrap_err();
            assert!(matches!(err, ParamError::BadValue { .. }), "{kv}: {err}");
        }
        assert!(p.apply("bytes=0").unwrap_err().to_string().contains("at least 1 byte"));
        assert!(matches!(p.apply("heap=0"), Err(ParamError::UnknownKey { .. })));
    }

    #[test]
    fn real_keys_parse_and_check_their_range() {
        let mut p = Params::Real(RealParams { n: 10, files: 2000, bytes: 100 << 20, case: RealCase::TreeSearchCore });
        assert_eq!(p.to_string(), "n=10 files=2000 bytes=100MiB case=tree-search-core");
        for kv in ["processes=3", "files=50", "bytes=1MiB", "case=emit-core"] {
            p.apply(kv).unwrap();
        }
        assert_eq!(p.to_string(), "n=3 files=50 bytes=1MiB case=emit-core");
        for kv in ["files=0", "files=1000001", "bytes=0", "n=0", "case=grep", "heap=0"] {
            assert!(p.apply(kv).is_err(), "{kv}");
        }
        assert!(p.apply("files=0").unwrap_err().to_string().contains("must be between 1 and 1000000"));
        let cases: Vec<&str> = RealCase::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            cases,
            ["tree-search-core", "tree-search-component", "hexdump-core", "hexdump-component", "emit-core"]
        );
    }

    #[test]
    fn sizes_print_in_their_unit() {
        assert_eq!(size(0), "0");
        assert_eq!(size(600 << 20), "600MiB");
        assert_eq!(size(2 << 30), "2GiB");
        assert_eq!(size(1000), "1000");
    }
}

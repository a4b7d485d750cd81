//! The pieces every workload's parameters are made of: the typed [`Setting`] of one parameter
//! (what a flag of `wrt bench` gives, or what `--compare 'KEY=VALUE'` parses to), the values the
//! command line names ([`Method`], [`BufferGuest`], …), the one parser of a parameter's string
//! ([`Setting::parsed`]) and [`ParamError`]. The workloads own their parameters (`spawn.rs`:
//! `SpawnParams`, …); the registry of them all, `Params`, sits above them (`params.rs`).

use serde::{Serialize, Serializer};
pub use wrt_runtime::wrt_host_spawn::Strategy;

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
    /// `key` is not a parameter of the workload `workload`, whose keys are `known`.
    pub fn unknown(workload: &'static str, known: &[&str], key: &str) -> Self {
        ParamError::UnknownKey { workload, key: key.to_owned(), known: known.join(", ") }
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
fn bad(key: &str, value: &str, reason: impl Into<String>) -> ParamError {
    ParamError::BadValue { key: key.to_owned(), value: value.to_owned(), reason: reason.into() }
}

fn parse_n(key: &str, value: &str) -> Result<u32, ParamError> {
    value.parse::<u32>().map_err(|e| bad(key, value, e.to_string()))
}

/// A size with a unit, or a number of bytes: parameters print sizes as bytes (`heap=1048576`).
fn parse_size(key: &str, value: &str) -> Result<u64, ParamError> {
    wrt_text::parse_bytes(value).map_err(|e| bad(key, value, e.to_string()))
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
/// [`Params::apply`](crate::Params::apply) parses from `KEY=VALUE`.
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
    /// `gc-young` (buffer): bytes, kept; `None`, spelled `adapting`, for the default trigger,
    /// which adapts to the guest's collections.
    GcYoung(Option<u64>),
    /// `gc-soft-limit` (buffer): bytes.
    GcSoftLimit(u64),
    /// `gc-growth` (buffer).
    GcGrowth(f64),
    /// `guest` (instantiate).
    InstantiateGuest(InstantiateGuest),
    /// `config` (instantiate).
    Config(RunConfig),
    /// `threads` (instantiate): 1 to [`MAX_THREADS`](crate::instantiate::MAX_THREADS).
    Threads(u32),
    /// `bytes` (pipeline: bytes through the pipeline; real: bytes that emit writes), at least 1.
    Bytes(u64),
    /// `files` (real): files in the tree, 1 to [`MAX_FILES`](crate::real::MAX_FILES).
    Files(u32),
    /// `case` (real).
    Case(RealCase),
    /// `clients` (serve): 1 to [`MAX_CLIENTS`](crate::params::MAX_CLIENTS).
    Clients(u32),
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
            Setting::Clients(_) => "clients",
        }
    }

    /// `value` parsed as a value of this setting's parameter (the value this setting holds is
    /// ignored).
    ///
    /// # Errors
    ///
    /// A value that does not parse.
    pub(crate) fn parsed(self, value: &str) -> Result<Setting, ParamError> {
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
            Setting::GcYoung(_) if value == ADAPTING => Setting::GcYoung(None),
            Setting::GcYoung(_) => Setting::GcYoung(Some(parse_size(key, value)?)),
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
            Setting::Clients(_) => Setting::Clients(parse_n(key, value)?),
        })
    }

    /// The error of this setting's value being out of its parameter's range, saying why.
    pub fn out_of_range(&self, reason: &str) -> ParamError {
        bad(self.key(), &self.value(), reason)
    }

    /// The value as [`Params::apply`](crate::Params::apply) would take it back.
    pub(crate) fn value(&self) -> String {
        let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
        match *self {
            Setting::N(n) | Setting::Threads(n) | Setting::Files(n) | Setting::Clients(n) => n.to_string(),
            Setting::Heap(b) | Setting::External(b) | Setting::BodySize(b) => size(b),
            Setting::GcYoung(Some(b)) | Setting::GcSoftLimit(b) => size(b),
            Setting::GcYoung(None) => ADAPTING.to_owned(),
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

/// How `gc-young` spells the default young trigger, which adapts to the guest's collections.
pub(crate) const ADAPTING: &str = "adapting";

/// A `gc-young` value: `adapting` (the default trigger, which adapts to the guest's collections),
/// or a size ([`wrt_text::parse_size`]) that is kept.
///
/// # Errors
///
/// Neither.
pub fn parse_young_trigger(value: &str) -> Result<Option<u64>, String> {
    if value == ADAPTING { Ok(None) } else { wrt_text::parse_size(value).map(Some).map_err(|e| e.to_string()) }
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

//! The parameters of each workload, settable by name (`--compare 'KEY=VALUE'`).

use std::fmt;

use serde::Serialize;

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

/// How host programs are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// `posix_spawn` (`CLONE_VM | CLONE_VFORK`).
    PosixSpawn,
    /// `fork` + `exec`.
    ForkExec,
}

/// What the guest does for each spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// `spawn` then `wait`.
    Spawn,
    /// The one-shot `run`, capturing output.
    Run,
    /// `spawn` of `/bin/sh -c 'exec /bin/true'` (two execs).
    Shell,
}

/// Which guest runs the buffer workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferGuest {
    /// Rust with the SDK's `Buffer` (released on drop).
    Rust,
    /// AssemblyScript, whose collector releases buffers from finalisers.
    Assemblyscript,
    /// WAT holding buffers as `externref` (wasmtime's collector frees them).
    Externref,
}

/// Parameters of `wrt bench spawn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpawnParams {
    /// Spawns per run.
    pub n: u32,
    /// Touched guest linear memory, bytes.
    pub heap: u64,
    /// Live host buffers, bytes.
    pub external: u64,
    /// How programs start.
    pub strategy: Strategy,
    /// Whether guest memory is `MADV_DONTFORK`.
    pub dontfork: bool,
    /// What each spawn does.
    pub method: Method,
}

/// Parameters of `wrt bench buffer` (the readable-push-buffer-burst workload).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferParams {
    /// Iterations per run.
    pub n: u32,
    /// Size of the large chunk, bytes.
    pub body_size: u32,
    /// Which guest.
    pub guest: BufferGuest,
    /// Whether the accountant asks for collections.
    pub gc: bool,
    /// Young trigger Y, bytes.
    pub gc_young: u64,
    /// Soft limit floor S, bytes.
    pub gc_soft_limit: u64,
    /// Growth factor f.
    pub gc_growth: f64,
}

/// Parameters of `wrt bench startup`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartupParams {
    /// `wrt run` processes per run.
    pub n: u32,
}

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
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ParamError {
    ParamError::BadValue { key: key.to_owned(), value: value.to_owned(), reason: reason.into() }
}

fn parse_n(key: &str, value: &str) -> Result<u32, ParamError> {
    match value.parse::<u32>() {
        Ok(0) => Err(bad(key, value, "must be at least 1")),
        Ok(n) => Ok(n),
        Err(e) => Err(bad(key, value, e.to_string())),
    }
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

impl Params {
    /// The workload's name, as in `wrt bench <name>`.
    pub fn workload(&self) -> &'static str {
        match self {
            Params::Spawn(_) => "spawn",
            Params::Buffer(_) => "buffer",
            Params::Startup(_) => "startup",
        }
    }

    /// The keys [`Params::set`] knows for this workload.
    pub fn keys(&self) -> &'static [&'static str] {
        match self {
            Params::Spawn(_) => &["n", "heap", "external", "strategy", "dontfork", "method"],
            Params::Buffer(_) => &["n", "body-size", "guest", "gc", "gc-young", "gc-soft-limit", "gc-growth"],
            Params::Startup(_) => &["n"],
        }
    }

    /// Sets the parameter `key` (as the flag is spelled, without `--`) to `value`.
    ///
    /// # Errors
    ///
    /// An unknown key, or a value that does not parse.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        // `-n`'s long name in `wrt bench <workload> --help`.
        let key = match (&*self, key) {
            (Params::Spawn(_), "spawns") | (Params::Buffer(_), "iterations") | (Params::Startup(_), "processes") => "n",
            _ => key,
        };
        let unknown = |p: &Params| ParamError::UnknownKey {
            workload: p.workload(),
            key: key.to_owned(),
            known: p.keys().join(", "),
        };
        match self {
            Params::Spawn(p) => match key {
                "n" => p.n = parse_n(key, value)?,
                "heap" => p.heap = parse_size(key, value)?,
                "external" => p.external = parse_size(key, value)?,
                "strategy" => {
                    p.strategy = match value {
                        "posix-spawn" => Strategy::PosixSpawn,
                        "fork-exec" => Strategy::ForkExec,
                        _ => return Err(bad(key, value, "expected `posix-spawn` or `fork-exec`")),
                    }
                }
                "dontfork" => p.dontfork = parse_on_off(key, value)?,
                "method" => {
                    p.method = match value {
                        "spawn" => Method::Spawn,
                        "run" => Method::Run,
                        "shell" => Method::Shell,
                        _ => return Err(bad(key, value, "expected `spawn`, `run` or `shell`")),
                    }
                }
                _ => return Err(unknown(self)),
            },
            Params::Buffer(p) => match key {
                "n" => p.n = parse_n(key, value)?,
                "body-size" => {
                    let size = parse_size(key, value)?;
                    p.body_size = u32::try_from(size)
                        .ok()
                        .filter(|s| (1..=64 << 20).contains(s))
                        .ok_or_else(|| bad(key, value, "must be between 1 byte and 64 MiB"))?;
                }
                "guest" => {
                    p.guest = match value {
                        "rust" => BufferGuest::Rust,
                        "assemblyscript" => BufferGuest::Assemblyscript,
                        "externref" => BufferGuest::Externref,
                        _ => return Err(bad(key, value, "expected `rust`, `assemblyscript` or `externref`")),
                    }
                }
                "gc" => p.gc = parse_on_off(key, value)?,
                "gc-young" => p.gc_young = parse_size(key, value)?,
                "gc-soft-limit" => p.gc_soft_limit = parse_size(key, value)?,
                "gc-growth" => p.gc_growth = value.parse().map_err(|_| bad(key, value, "not a number"))?,
                _ => return Err(unknown(self)),
            },
            Params::Startup(p) => match key {
                "n" => p.n = parse_n(key, value)?,
                _ => return Err(unknown(self)),
            },
        }
        Ok(())
    }

    /// Applies `KEY=VALUE`.
    ///
    /// # Errors
    ///
    /// As [`Params::set`], or no `=`.
    pub fn apply(&mut self, key_value: &str) -> Result<(), ParamError> {
        let (key, value) = key_value.split_once('=').ok_or_else(|| ParamError::NotKeyValue(key_value.to_owned()))?;
        self.set(key.trim_start_matches("--"), value)
    }

    /// The value of `key` as [`Params::set`] would take it back.
    pub fn get(&self, key: &str) -> Option<String> {
        let on_off = |b: bool| if b { "on" } else { "off" }.to_owned();
        Some(match (self, key) {
            (_, "n") => match self {
                Params::Spawn(p) => p.n.to_string(),
                Params::Buffer(p) => p.n.to_string(),
                Params::Startup(p) => p.n.to_string(),
            },
            (Params::Spawn(p), "heap") => size(p.heap),
            (Params::Spawn(p), "external") => size(p.external),
            (Params::Spawn(p), "strategy") => name(&p.strategy),
            (Params::Spawn(p), "dontfork") => on_off(p.dontfork),
            (Params::Spawn(p), "method") => name(&p.method),
            (Params::Buffer(p), "body-size") => size(u64::from(p.body_size)),
            (Params::Buffer(p), "guest") => name(&p.guest),
            (Params::Buffer(p), "gc") => on_off(p.gc),
            (Params::Buffer(p), "gc-young") => size(p.gc_young),
            (Params::Buffer(p), "gc-soft-limit") => size(p.gc_soft_limit),
            (Params::Buffer(p), "gc-growth") => p.gc_growth.to_string(),
            _ => return None,
        })
    }
}

/// The kebab-case name of a unit enum value.
fn name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
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
            method: Method::Spawn,
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
        assert_eq!(p.to_string(), "n=5 heap=600MiB external=1GiB strategy=fork-exec dontfork=off method=shell");
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
    fn sizes_print_in_their_unit() {
        assert_eq!(size(0), "0");
        assert_eq!(size(600 << 20), "600MiB");
        assert_eq!(size(2 << 30), "2GiB");
        assert_eq!(size(1000), "1000");
    }
}

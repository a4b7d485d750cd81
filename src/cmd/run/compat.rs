//! wasmtime's `-W` (wasm), `-S` (WASI), `-C` (codegen) and `-O` (optimize) options, as
//! `wasmtime run` users type them: the common ones map to wrt's settings, the proposals wrt
//! always has on are accepted, and the others are refused with a hint naming wrt's flag.

use std::time::Duration;

/// The settings `-W` and `-S` options asked for.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct WasmtimeOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) fuel: Option<u64>,
    pub(crate) max_memory: Option<u64>,
    pub(crate) unknown_imports_trap: bool,
    pub(crate) inherit_env: bool,
    /// `-C cache=n`: run without the compile cache.
    pub(crate) no_cache: bool,
    /// `-S http`: link `wasi:http` into components.
    pub(crate) http: bool,
    /// `-S inherit-network`: the guest's sockets may use every address (`--allow-net any`).
    pub(crate) inherit_network: bool,
}

/// The WebAssembly proposals every wrt guest has (wasmtime's defaults, which wrt keeps):
/// `-W NAME` or `-W NAME=y` is accepted and changes nothing; `-W NAME=n` is refused.
pub(crate) const ALWAYS_ON: &[&str] = &[
    "exceptions",
    "tail-call",
    "simd",
    "relaxed-simd",
    "multi-memory",
    "bulk-memory",
    "reference-types",
    "multi-value",
    "extended-const",
    "component-model-async",
];

impl WasmtimeOptions {
    /// Reads `-W KEY[=VALUE][,..]`, `-S KEY[=VALUE][,..]`, `-C KEY[=VALUE][,..]` and `-O ..`
    /// options.
    pub(crate) fn parse(
        wasm: &[String],
        wasi: &[String],
        codegen: &[String],
        optimize: &[String],
    ) -> anyhow::Result<Self> {
        let mut options = Self::default();
        for (key, value) in split(wasm) {
            let bad = |e: &dyn std::fmt::Display| anyhow::anyhow!("`-W {key}`: {e}");
            match key {
                "timeout" => {
                    options.timeout = Some(wrt_text::parse_duration(required("W", key, value)?).map_err(|e| bad(&e))?);
                }
                "fuel" => {
                    let value = required("W", key, value)?;
                    options.fuel = Some(value.parse().map_err(|_| bad(&format!("`{value}` is not a number")))?);
                }
                "max-memory-size" => {
                    options.max_memory = Some(wrt_text::parse_bytes(required("W", key, value)?).map_err(|e| bad(&e))?);
                }
                "unknown-imports-trap" => options.unknown_imports_trap = boolean("W", key, value)?,
                key if ALWAYS_ON.contains(&key) => {
                    if !boolean("W", key, value)? {
                        anyhow::bail!("`-W {key}=n`: wrt cannot turn off {key}, which every guest has");
                    }
                }
                _ => anyhow::bail!("`-W {key}` is not a wrt option{}", hint_w(key)),
            }
        }
        for (key, value) in split(wasi) {
            match key {
                "inherit-env" => options.inherit_env = boolean("S", key, value)?,
                // wrt always exits with the guest's own code.
                "cli-exit-with-code" => {
                    boolean("S", key, value)?;
                }
                "http" => options.http = boolean("S", key, value)?,
                "inherit-network" => options.inherit_network = boolean("S", key, value)?,
                // `wrt serve` links all of WASI into a service, as `wasmtime serve -S cli` does.
                "cli" => {
                    boolean("S", key, value)?;
                }
                // WASI 0.3 is always linked: a component that exports its `run` is run by it.
                "p3" => {
                    if !boolean("S", key, value)? {
                        anyhow::bail!(
                            "`-S p3=n`: wrt cannot turn off WASI 0.3; a component that exports WASI 0.3's \
                             `run` is run by it"
                        );
                    }
                }
                _ => anyhow::bail!("`-S {key}` is not a wrt option{}", hint_s(key)),
            }
        }
        for (key, value) in split(codegen) {
            match key {
                "cache" => options.no_cache = !boolean("C", key, value)?,
                _ => anyhow::bail!(
                    "`-C {key}` is not a wrt option; wrt compiles with Cranelift at its own settings, and takes \
                     `-C cache=n` (or `--no-cache`)"
                ),
            }
        }
        if let Some((key, _)) = split(optimize).next() {
            anyhow::bail!(
                "`-O {key}` is not a wrt option; wrt compiles with Cranelift at its own settings (optimized for speed)"
            );
        }
        Ok(options)
    }
}

/// `KEY[=VALUE]` pairs of comma-separated options.
fn split(options: &[String]) -> impl Iterator<Item = (&str, Option<&str>)> {
    options.iter().flat_map(|o| o.split(',')).filter(|o| !o.is_empty()).map(|o| match o.split_once('=') {
        Some((key, value)) => (key, Some(value)),
        None => (o, None),
    })
}

fn required<'a>(flag: &str, key: &str, value: Option<&'a str>) -> anyhow::Result<&'a str> {
    value.ok_or_else(|| anyhow::anyhow!("`-{flag} {key}` needs a value: `-{flag} {key}=VALUE`"))
}

/// `KEY` alone, `KEY=y` and the like: on; `KEY=n`: off.
fn boolean(flag: &str, key: &str, value: Option<&str>) -> anyhow::Result<bool> {
    match value {
        None | Some("y" | "yes" | "true") => Ok(true),
        Some("n" | "no" | "false") => Ok(false),
        Some(other) => anyhow::bail!("`-{flag} {key}={other}`: expected `y` or `n`"),
    }
}

/// wrt's equivalent of a wasmtime `-W` option, or the ones wrt takes.
fn hint_w(key: &str) -> String {
    match key {
        "max-memory" | "memory-reservation" | "max-memories" => "; wrt limits memory with `--max-memory SIZE`".into(),
        "epoch-interruption" | "timeout-ms" => "; wrt stops a guest after `--timeout DURATION`".into(),
        "consume-fuel" => "; wrt counts fuel with `--fuel N`".into(),
        _ => "; wrt takes `-W timeout=DURATION`, `-W fuel=N`, `-W max-memory-size=BYTES` and \
              `-W unknown-imports-trap` (see `wrt run --help`)"
            .into(),
    }
}

/// wrt's equivalent of a wasmtime `-S` option, or the ones wrt takes.
fn hint_s(key: &str) -> String {
    match key {
        "tcp" | "udp" | "network" => {
            "; wrt grants sockets addresses with `--allow-net RULE` (`-S inherit-network` is `--allow-net any`)".into()
        }
        "allow-ip-name-lookup" => "; wrt resolves no names for guests: `--allow-net` takes addresses".into(),
        "preview2" | "common" => {
            "; wrt gives WASI 0.2 and 0.3 command components the CLI, filesystem, clocks and random \
             interfaces without a flag"
                .into()
        }
        "nn" | "threads" | "config" | "keyvalue" => format!("; wrt does not provide wasi-{key}"),
        "env" => "; set a variable with `--env NAME=VALUE`".into(),
        _ => "; wrt takes `-S inherit-env`, `-S inherit-network`, `-S cli-exit-with-code`, `-S p3`, `-S http` and `-S cli`; \
              preopens are `--dir` and `--ro-dir`, variables `--env`"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(w: &[&str], s: &[&str]) -> anyhow::Result<WasmtimeOptions> {
        parse_all(w, s, &[], &[])
    }

    fn parse_all(w: &[&str], s: &[&str], c: &[&str], o: &[&str]) -> anyhow::Result<WasmtimeOptions> {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        WasmtimeOptions::parse(&own(w), &own(s), &own(c), &own(o))
    }

    #[test]
    fn codegen_and_optimize_options() {
        assert!(parse_all(&[], &[], &["cache=n"], &[]).unwrap().no_cache);
        assert!(!parse_all(&[], &[], &["cache=y"], &[]).unwrap().no_cache);
        let err = parse_all(&[], &[], &["opt-level=2"], &[]).unwrap_err().to_string();
        assert!(err.contains("`-C opt-level` is not a wrt option") && err.contains("`-C cache=n`"), "{err}");
        let err = parse_all(&[], &[], &[], &["opt-level=2"]).unwrap_err().to_string();
        assert!(err.starts_with("`-O opt-level` is not a wrt option; wrt compiles with Cranelift"), "{err}");
    }

    /// Every proposal `-W` accepts as always on is on: a module using it compiles.
    #[test]
    fn proposals_always_on_are_on() {
        assert!(parse(&["exceptions=y", "tail-call", "simd=yes"], &[]).is_ok());
        let err = parse(&["exceptions=n"], &[]).unwrap_err().to_string();
        assert_eq!(err, "`-W exceptions=n`: wrt cannot turn off exceptions, which every guest has");
        let uses = |name: &str| match name {
            "exceptions" => "(module (tag $t) (func (block $b (try_table (catch $t $b) (throw $t)))))",
            "tail-call" => "(module (func $f (return_call $f)))",
            "simd" => "(module (func (result v128) (v128.const i32x4 1 2 3 4)))",
            "relaxed-simd" => {
                "(module (func (param v128 v128) (result v128) (i8x16.relaxed_swizzle (local.get 0) (local.get 1))))"
            }
            "multi-memory" => "(module (memory 1) (memory 1))",
            "bulk-memory" => "(module (memory 1) (func (memory.fill (i32.const 0) (i32.const 0) (i32.const 0))))",
            "reference-types" => "(module (table 1 externref) (func (result externref) (ref.null extern)))",
            "multi-value" => "(module (func (result i32 i32) (i32.const 1) (i32.const 2)))",
            "extended-const" => "(module (global i32 (i32.add (i32.const 1) (i32.const 2))))",
            // A command whose `run` is an async function (WASI 0.3's).
            "component-model-async" => {
                r#"(component
                  (core module $m
                    (func (export "run") (result i32) unreachable)
                    (func (export "cb") (param i32 i32 i32) (result i32) unreachable))
                  (core instance $i (instantiate $m))
                  (func $run async (result (result)) (canon lift (core func $i "run") async (callback (core func $i "cb"))))
                  (instance $run (export "run" (func $run)))
                  (export "wasi:cli/run@0.3.0" (instance $run)))"#
            }
            other => panic!("no module for {other}"),
        };
        let runtime = wrt_runtime::Runtime::builder().build().unwrap();
        for name in ALWAYS_ON {
            let loaded = runtime.load_bytes(name, uses(name).as_bytes());
            assert!(loaded.is_ok(), "{name}: {:?}", loaded.err());
        }
    }

    #[test]
    fn common_options_map_to_settings() {
        let o = parse(&["timeout=2s,fuel=1000", "max-memory-size=65536", "unknown-imports-trap"], &["inherit-env=y"])
            .unwrap();
        assert_eq!(
            o,
            WasmtimeOptions {
                timeout: Some(Duration::from_secs(2)),
                fuel: Some(1000),
                max_memory: Some(65536),
                unknown_imports_trap: true,
                inherit_env: true,
                no_cache: false,
                http: false,
                inherit_network: false,
            }
        );
        assert!(parse(&[], &["inherit-network"]).unwrap().inherit_network);
        assert!(!parse(&[], &["inherit-network=n"]).unwrap().inherit_network);
        assert_eq!(parse(&[], &["cli-exit-with-code"]).unwrap(), WasmtimeOptions::default());
        assert!(!parse(&["unknown-imports-trap=n"], &[]).unwrap().unknown_imports_trap);
    }

    #[test]
    fn other_options_name_wrts_flag() {
        for (w, s, expected) in [
            (&["max-wasm-stack=1"][..], &[][..], "`-W max-wasm-stack` is not a wrt option; wrt takes `-W timeout="),
            (&["timeout"], &[], "`-W timeout` needs a value: `-W timeout=VALUE`"),
            (&["fuel=lots"], &[], "`-W fuel`: `lots` is not a number"),
            (&["timeout=soon"], &[], "`soon`"),
            (&[], &["tcp=y"], "`-S tcp` is not a wrt option; wrt grants sockets addresses with `--allow-net RULE`"),
            (&[], &["allow-ip-name-lookup"], "wrt resolves no names for guests"),
            (&[], &["inherit-env=maybe"], "`-S inherit-env=maybe`: expected `y` or `n`"),
        ] {
            let err = parse(w, s).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }
}

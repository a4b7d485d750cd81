//! The Node.js peers (`--peers`): the same workloads run by `node` in the same run, from the
//! scripts in `bench-engine/peers/` (built into the binary), when `node` is on PATH.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::BenchError;
use crate::params::Params;

const SPAWN_HEAP: &str = include_str!("../peers/spawn_heap.js");
const READABLE_BURST: &str = include_str!("../peers/readable_burst.js");

const MIB: u64 = 1 << 20;

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

/// Runs `script` with `node` and `env`, returning its last stdout line parsed as JSON and its
/// stdout.
fn node(script: &str, args: &[&str], env: &[(&str, String)]) -> Result<(serde_json::Value, String), BenchError> {
    let dir = tempfile::tempdir().map_err(|e| BenchError::Peer(format!("cannot create a temporary directory: {e}")))?;
    let path = dir.path().join("peer.js");
    std::fs::write(&path, script).map_err(|source| BenchError::Write { path: path.clone(), source })?;
    let mut command = Command::new("node");
    command.args(args).arg(&path).stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().map_err(|e| BenchError::Peer(format!("cannot run node: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(BenchError::Peer(format!(
            "node ended with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let line = stdout.lines().rev().find(|l| l.starts_with('{')).unwrap_or_default();
    let json = serde_json::from_str(line).map_err(|e| BenchError::Peer(format!("unexpected output `{line}`: {e}")))?;
    Ok((json, stdout))
}

fn number(json: &serde_json::Value, key: &str) -> Result<f64, BenchError> {
    json.get(key).and_then(serde_json::Value::as_f64).ok_or_else(|| BenchError::Peer(format!("no `{key}` in {json}")))
}

/// Runs the Node peer of `params`, or `None` when `node` is not on PATH.
///
/// # Errors
///
/// When `node` is there but the script fails.
pub fn run(params: &Params) -> Result<Option<PeerResult>, BenchError> {
    let Some(version) = node_version() else {
        return Ok(None);
    };
    let name = format!("node {version}");
    let result = match params {
        Params::Spawn(p) => {
            // Node holds the same amount as a touched WebAssembly.Memory, and the buffers as
            // Buffers (which, malloc'd, are not DONTFORK).
            let (heap_mb, kind) = if p.external > 0 { (p.external / MIB, "buffer") } else { (p.heap / MIB, "wasm") };
            let env = [("N", p.n.to_string()), ("HEAP_MB", heap_mb.to_string()), ("KIND", kind.to_owned())];
            let (json, _) = node(SPAWN_HEAP, &[], &env)?;
            let ms = number(&json, "ms_per_spawn")?;
            PeerResult { name, rate: 1e3 / ms, extra: BTreeMap::from([("us_per_spawn".to_owned(), ms * 1e3)]) }
        }
        Params::Buffer(p) => {
            let env = [("N", p.n.to_string()), ("BODY", p.body_size.to_string())];
            let (json, stdout) = node(READABLE_BURST, &["--trace-gc"], &env)?;
            let count = |what: &str| stdout.lines().filter(|l| l.contains(what)).count() as f64;
            let extra = BTreeMap::from([
                ("young_collections".to_owned(), count("Scavenge")),
                ("full_collections".to_owned(), count("Mark-Compact")),
                ("rss".to_owned(), number(&json, "rss")?),
            ]);
            PeerResult { name, rate: number(&json, "ops_per_s")?, extra }
        }
        Params::Startup(p) => {
            let start = Instant::now();
            for _ in 0..p.n {
                let status = Command::new("node")
                    .args(["-e", "console.log('hello')"])
                    .stdout(Stdio::null())
                    .status()
                    .map_err(|e| BenchError::Peer(format!("cannot run node: {e}")))?;
                if !status.success() {
                    return Err(BenchError::Peer(format!("node ended with {status}")));
                }
            }
            let elapsed = start.elapsed();
            PeerResult { name, rate: f64::from(p.n) / elapsed.as_secs_f64(), extra: BTreeMap::new() }
        }
    };
    Ok(Some(result))
}

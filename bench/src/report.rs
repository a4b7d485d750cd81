//! Reports: readable tables for a terminal and JSON for machines.

use std::fmt::Write as _;

use serde::Serialize;

pub use crate::workload::columns::{
    Column, FLOOR_US_PER_SPAWN, Goal, MS_PER_RUN, Measure, US_PER_SPAWN, WASMTIME_MS, figure, ratio,
};

use crate::figures::Centre;
use crate::params::Params;
use crate::result::ConfigResult;
use crate::runner::CompareResult;
use crate::sample::Sample;
use crate::stats::LEVELS;
pub(crate) use crate::text_layout::{layout, rate, wrap};
use crate::workload::{self, Workload};

/// The unit of a workload's rate.
pub fn unit(params: &Params) -> &'static str {
    params.workload().unit()
}

/// The legend under a table of `params`'s workload: what each figure is and what each ratio
/// divides.
pub fn legend(params: &Params) -> String {
    let what = match params.workload().centre() {
        Centre::Mean => "the mean over the runs",
        Centre::Median => "the median over the runs (of an even number, the geometric mean of the middle two)",
    };
    let mut ratios = vec![format!("of floor = {} ÷ floor", unit(params))];
    for column in params.workload().columns() {
        if let Column::Ratio { title, of_name, to_name, .. } = column {
            ratios.push(format!("{title} = {of_name} ÷ {to_name}"));
        }
    }
    let mut out = format!("Each figure is {what}; each ratio divides two figures: {}.", ratios.join(", "));
    if let Some(more) = params.workload().legend() {
        out.push(' ');
        out.push_str(more);
    }
    out
}

/// One row a configuration (and one for its peer): the rate ± its standard deviation over the
/// runs, the floor's rate, the share of the floor reached, and the workload's figures; under
/// the table, the [`legend`] saying what the figures and ratios are.
pub fn results_table(results: &[ConfigResult<Params>]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    if let Some(table) = first.params.workload().table(&views(results)) {
        return table;
    }
    let columns = first.params.workload().columns();
    let mut header = vec![
        "configuration".to_owned(),
        unit(&first.params).to_owned(),
        "± sd".to_owned(),
        "runs".to_owned(),
        "floor".to_owned(),
        "of floor".to_owned(),
    ];
    header.extend(columns.iter().map(|c| c.title().to_owned()));
    let all: Vec<Params> = results.iter().map(|r| r.params.clone()).collect();
    let mut rows = vec![header];
    for r in results {
        let mut row = vec![
            short_label(&r.params, &all),
            rate(r.rate_figure()),
            rate(r.rate.sd),
            r.rate.n.to_string(),
            rate(r.floor_rate_figure()),
            format!("{:.2}×", r.of_floor),
        ];
        row.extend(columns.iter().map(|c| c.cell(c.value(r))));
        rows.push(row);
        if let Some(peer) = &r.peer {
            let mut row = vec![
                format!("  peer: {}", peer.name),
                rate(peer.rate),
                String::new(),
                "1".into(),
                String::new(),
                format!("{:.2}× of wrt", peer.rate / r.rate_figure()),
            ];
            row.extend(columns.iter().map(|c| c.cell(c.peer_value(peer))));
            rows.push(row);
        }
    }
    let mut legend = legend(&first.params);
    if results.iter().any(|r| r.peer.is_some()) {
        legend.push_str(" A peer runs once: `of wrt` = its rate ÷ wrt's.");
    }
    format!("{}\n{}\n{}{}{}", common_line(&all), layout(&rows), wrap(&legend), notes(results), goals(results))
}

/// For the workloads with goals ([`Workload::goals`](crate::Workload::goals)): each goal, the
/// ratio of the table's column it is read from, and whether it is met (or why it was not
/// measured).
fn goals(results: &[ConfigResult<Params>]) -> String {
    let mut out = String::new();
    for r in results {
        let label = short_label(&r.params, &results.iter().map(|r| r.params.clone()).collect::<Vec<_>>());
        let workload = r.params.workload();
        for Goal { column: title, name, at_most: goal, unmeasured } in workload.goals() {
            let column = workload.columns().iter().find(|c| c.title() == *title);
            let _ = match column.and_then(|c| c.value(r)) {
                Some(ratio) => writeln!(
                    out,
                    "{label}: goal {name} ≤ {goal:.2}×: {ratio:.2}× ({title}, {}s of {} runs): {}",
                    r.centre.name(),
                    r.samples.len(),
                    if ratio <= *goal { "met" } else { "not met" }
                ),
                None => writeln!(out, "{label}: goal {name} ≤ {goal:.2}×: not measured: {unmeasured}"),
            };
        }
    }
    if out.is_empty() { out } else { format!("\n{out}") }
}

/// The workload's notes on `results` ([`Workload::notes`](crate::Workload::notes)), after a
/// blank line.
fn notes(results: &[ConfigResult<Params>]) -> String {
    let out = results[0].params.workload().notes(&views(results));
    if out.is_empty() { out } else { format!("\n{out}") }
}

/// `wrt bench <workload>: ` and the parameters all of `all` share.
pub(crate) fn common_line(all: &[Params]) -> String {
    workload::common_line(&all.iter().map(Params::workload).collect::<Vec<_>>())
}

/// The results as their workload reads them ([`Workload::notes`], [`Workload::table`]).
fn views(results: &[ConfigResult<Params>]) -> Vec<ConfigResult<&dyn Workload>> {
    results.iter().map(|r| r.with_params(r.params.workload())).collect()
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
        results: &'a [ConfigResult<Params>],
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
    workload::short_label(params.workload(), &all.iter().map(Params::workload).collect::<Vec<_>>())
}

/// One section of a suite's JSON (the criterion `buffer` bench writes `target/buffer-bench.json`
/// from these): `params`, with `runners` added: for each runner that ran, its label (without
/// backquotes), the median of its rounds ([`Sample::median`]) and every round.
pub fn suite_section(mut params: serde_json::Value, runners: &[(&str, &[Sample])]) -> serde_json::Value {
    let runners: Vec<serde_json::Value> = runners
        .iter()
        .filter(|(_, rounds)| !rounds.is_empty())
        .map(|(label, rounds)| {
            serde_json::json!({
                "runner": label.replace('`', ""),
                "median": sample_json(&Sample::median(rounds)),
                "rounds": rounds.iter().map(sample_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    params["runners"] = runners.into();
    params
}

/// A sample as JSON: `ops_per_s` (its rate), then its own figures; a whole number is written
/// as an integer, any other rounded to a tenth.
fn sample_json(sample: &Sample) -> serde_json::Value {
    let figure = |value: f64| {
        if value.fract() == 0.0 && value.abs() < 2f64.powi(53) {
            serde_json::Value::from(value as i64)
        } else {
            serde_json::Value::from((value * 10.0).round() / 10.0)
        }
    };
    let mut json = serde_json::Map::new();
    json.insert("ops_per_s".into(), figure(sample.rate.round()));
    for (key, value) in &sample.extra {
        json.insert(key.clone(), figure(*value));
    }
    json.into()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::params::{Method, SpawnParams, Strategy};
    use crate::sample::Sample;
    use crate::stats::{Comparison, Summary};

    fn result(heap: u64, rates: &[f64]) -> ConfigResult<Params> {
        let params = Params::Spawn(SpawnParams {
            n: 10,
            heap,
            external: 0,
            strategy: Strategy::PosixSpawn,
            dontfork: true,
            sandbox: false,
            method: Method::Spawn,
            view: true,
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
            centre: params.workload().centre(),
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

    /// A comparison of single runs (`--runs 1 --compare`) prints no `NaN`: it says why the
    /// difference is not tested and how to test it.
    #[test]
    fn a_comparison_of_single_runs_says_why_it_is_untested() {
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

    /// The cells of `table`'s row that starts with `label`, by the header's column titles
    /// (cells are at least two spaces apart; titles and labels have single spaces).
    fn row(table: &str, label: &str) -> BTreeMap<String, String> {
        let split = |line: &str| -> Vec<String> {
            line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned).collect()
        };
        let header = table.lines().find(|l| l.starts_with("configuration")).expect("a header");
        let line = table.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no `{label}`: {table}"));
        split(header).into_iter().zip(split(line)).collect()
    }

    fn number(cell: &str) -> f64 {
        cell.trim_end_matches('×').parse().unwrap_or_else(|e| panic!("`{cell}`: {e}"))
    }

    fn sample(rate: f64, floor_rate: f64, extra: &[(&str, f64)]) -> Sample {
        Sample { rate, floor_rate, extra: extra.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect() }
    }

    /// `of floor` is the printed rate over the printed floor, never the mean of each run's ratio
    /// (which one run with a slow floor pulls up).
    #[test]
    fn of_floor_is_the_printed_rate_over_the_printed_floor() {
        let runs = [(1000.0, 600.0), (1050.0, 1200.0), (1035.0, 1150.0)];
        let samples = runs.iter().map(|&(r, f)| sample(r, f, &[("us_per_spawn", 1e6 / r)])).collect();
        let result = ConfigResult::new(result(256 << 20, &[1.0]).params, samples, None);
        let table = results_table(&[result]);
        let cells = row(&table, "spawn");
        let (rate, floor, of_floor) = (number(&cells["spawns/s"]), number(&cells["floor"]), number(&cells["of floor"]));
        assert!((of_floor - rate / floor).abs() < 0.006, "{of_floor} beside {rate} / {floor}: {table}");
        assert!(
            table.contains("Each figure is the mean over the runs") && table.contains("of floor = spawns/s ÷ floor")
        );
    }

    /// `of floor` printed 2.10× beside `time/floor` 0.67×: a mean of rate ratios beside a
    /// median of time ratios. Both are now ratios of the medians, inverses of each other, with
    /// an odd or an even number of runs.
    #[test]
    fn of_floor_and_time_over_floor_are_inverses() {
        use crate::params::{InstantiateGuest, InstantiateParams, RunConfig};
        let params = Params::Instantiate(InstantiateParams {
            n: 10,
            guest: InstantiateGuest::Hello,
            config: RunConfig::Policy,
            threads: 1,
        });
        let runs = [(9.0, 8.0), (8.5, 30.0), (10.0, 8.2), (9.5, 8.4), (12.0, 7.9)];
        for count in [5, 4] {
            let samples = runs[..count]
                .iter()
                .map(|&(us, floor)| {
                    let extra = [("us_per_run", us), ("floor_us_per_run", floor), ("time_of_floor", us / floor)];
                    sample(1e6 / us, 1e6 / floor, &extra)
                })
                .collect();
            let table = results_table(&[ConfigResult::new(params.clone(), samples, None)]);
            let cells = row(&table, "instantiate");
            let of_floor = number(&cells["of floor"]);
            let time = number(&cells["time/floor"]);
            assert!((of_floor * time - 1.0).abs() < 0.01, "{of_floor} and {time}: {table}");
            let (us, floor) = (number(&cells["µs/run"]), number(&cells["floor µs"]));
            assert!((time - us / floor).abs() < 0.006, "{time} beside {us} / {floor}: {table}");
            let (rate, floor_rate) = (number(&cells["runs/s"]), number(&cells["floor"]));
            assert!((of_floor - rate / floor_rate).abs() < 0.006, "{of_floor} beside {rate} / {floor_rate}: {table}");
            assert!(table.contains("time/floor = µs/run ÷ floor µs"), "{table}");
        }
    }

    /// A goal line gives the ratio of the column it is read from.
    #[test]
    fn goals_read_the_table_s_ratio() {
        let runs = [(800.0, 600.0, 560.0), (1200.0, 1250.0, 980.0), (820.0, 700.0, 600.0)];
        let samples = runs
            .iter()
            .map(|&(us, core, floor)| {
                let extra = [
                    ("us_per_spawn", us),
                    ("core_us_per_spawn", core),
                    ("floor_us_per_spawn", floor),
                    ("time_of_core", us / core),
                    ("time_of_floor", us / floor),
                ];
                sample(1e6 / us, 1e6 / floor, &extra)
            })
            .collect();
        let params = Params::ComponentSpawn(crate::params::ComponentSpawnParams { n: 10 });
        let table = results_table(&[ConfigResult::new(params, samples, None)]);
        let cells = row(&table, "component-spawn");
        for (column, goal) in [("time/core", "goal component/core"), ("time/floor", "goal component/floor")] {
            let line = table.lines().find(|l| l.contains(goal)).unwrap_or_else(|| panic!("{goal}: {table}"));
            assert!(line.contains(&format!(": {} ({column}, medians of 3 runs): ", cells[column])), "{line}: {table}");
        }
    }

    /// A goal whose ratio has no value says why in its own terms: only a goal read against
    /// `wasmtime run` blames a missing wasmtime.
    #[test]
    fn an_unmeasured_goal_says_why_in_its_own_terms() {
        // Runs of one spawn and of the floor that took no time: neither ratio has a value.
        let samples = (0..3)
            .map(|_| {
                let extra = [("us_per_spawn", 800.0), ("core_us_per_spawn", 0.0), ("floor_us_per_spawn", 0.0)];
                sample(1e6 / 800.0, 0.0, &extra)
            })
            .collect();
        let params = Params::ComponentSpawn(crate::params::ComponentSpawnParams { n: 10 });
        let table = results_table(&[ConfigResult::new(params, samples, None)]);
        for goal in ["goal component/core", "goal component/floor"] {
            let line = table.lines().find(|l| l.contains(goal)).unwrap_or_else(|| panic!("{goal}: {table}"));
            assert!(line.ends_with(&format!("not measured: {}", workload::columns::NO_TIME)), "{line}");
            assert!(!line.contains("wasmtime"), "{line}");
        }
    }

    #[test]
    fn legends_break_between_clauses() {
        let text = "Each figure is the median over the runs (of an even number of runs, the geometric mean of the \
                    middle two); each ratio divides two figures: of floor = runs/s ÷ floor, time/wasmtime = ms/run ÷ \
                    wasmtime ms.";
        let wrapped = wrap(text);
        assert!(wrapped.lines().all(|l| l.chars().count() <= 100), "{wrapped}");
        assert!(wrapped.lines().any(|l| l == "time/wasmtime = ms/run ÷ wasmtime ms."), "{wrapped}");
        assert_eq!(wrapped.replace('\n', " ").trim_end(), text);
    }

    #[test]
    fn short_labels_name_what_varies() {
        let all = [result(0, &[1.0]).params, result(600 << 20, &[1.0]).params];
        assert_eq!(short_label(&all[1], &all), "heap=600MiB");
        assert_eq!(short_label(&all[0], &all[..1]), "spawn");
    }
}

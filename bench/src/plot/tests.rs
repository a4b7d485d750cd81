use std::collections::BTreeMap;

use super::*;
use crate::params::{BufferGuest, BufferParams, Method, SpawnParams, Strategy};
use crate::sample::Sample;
use crate::stats::Summary;

/// A result of `rates` (one per run) against a floor of 2000/s, with collections.
fn result(params: Params, rates: &[f64], collections: (f64, f64)) -> ConfigResult<Params> {
    let samples: Vec<Sample> = rates
        .iter()
        .map(|&rate| Sample {
            rate,
            floor_rate: 2000.0,
            extra: BTreeMap::from([("us_per_spawn".to_owned(), 1e6 / rate), ("floor_us_per_spawn".to_owned(), 500.0)]),
        })
        .collect();
    ConfigResult {
        rate: Summary::of(rates),
        floor_rate: Summary::of(&[2000.0]),
        of_floor: rates.iter().sum::<f64>() / rates.len() as f64 / 2000.0,
        extra: BTreeMap::from([
            ("young_collections".into(), collections.0),
            ("full_collections".into(), collections.1),
        ]),
        centre: params.workload().centre(),
        samples,
        params,
        peer: None,
    }
}

fn spawn(heap: u64, strategy: Strategy) -> Params {
    Params::Spawn(SpawnParams {
        n: 1,
        heap,
        external: 0,
        strategy,
        dontfork: true,
        method: Method::Spawn,
        sandbox: false,
        view: true,
    })
}

fn buffer(guest: BufferGuest) -> Params {
    Params::Buffer(BufferParams {
        n: 1,
        body_size: 1,
        guest,
        gc: true,
        gc_young: Some(1),
        gc_soft_limit: 1,
        gc_growth: 2.0,
    })
}

fn spawn_results() -> Vec<ConfigResult<Params>> {
    [(0, Strategy::PosixSpawn, 1400.0), (600 << 20, Strategy::PosixSpawn, 1390.0)]
        .into_iter()
        .chain([(0, Strategy::ForkExec, 1000.0), (600 << 20, Strategy::ForkExec, 90.0)])
        .map(|(heap, strategy, rate)| result(spawn(heap, strategy), &[rate, rate * 1.05], (0.0, 0.0)))
        .collect()
}

#[test]
fn plots_are_png_and_svg_files() {
    let dir = tempfile::tempdir().unwrap();
    let buffers = vec![
        result(buffer(BufferGuest::Rust), &[90000.0], (0.0, 0.0)),
        result(buffer(BufferGuest::Externref), &[60000.0], (80.0, 2.0)),
    ];
    for (name, results) in [("spawn", spawn_results()), ("buffer", buffers)] {
        let png = dir.path().join(format!("{name}.png"));
        draw(&results, &png).unwrap();
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"), "not a PNG");
        let svg = dir.path().join(format!("{name}.svg"));
        draw(&results, &svg).unwrap();
        let svg = std::fs::read_to_string(&svg).unwrap();
        assert!(svg.starts_with("<svg") && !svg.contains("<text") && svg.contains("<path d=\"M"), "{svg}");
    }
    assert!(draw(&[], &dir.path().join("empty.png")).is_err());
}

/// `--plot` to an unsupported extension, or into a directory that does not exist, fails
/// before the run.
#[test]
fn plot_formats_by_extension() {
    assert_eq!(Format::of(Path::new("a.png")).unwrap(), Format::Png);
    assert_eq!(Format::of(Path::new("dir/a.SVG")).unwrap(), Format::Svg);
    for bad in ["a.txt", "a", "a.png.gz", ".png"] {
        let err = Format::of(Path::new(bad)).unwrap_err().to_string();
        assert!(err.contains(&format!("`{bad}`")) && err.contains("`.png` or `.svg`"), "{err}");
    }
    assert!(check_path(Path::new("plot.svg")).is_ok());
    let err = check_path(Path::new("/nonexistent/plot.png")).unwrap_err().to_string();
    assert_eq!(err, "cannot plot into `/nonexistent`: not a directory");
}

/// Tick labels are short (`250k`, not `250000.0`), and the spawn plot labels ticks between
/// 500 and 1000 µs.
#[test]
fn tick_labels_are_short_and_where_the_lines_are() {
    let labels: Vec<String> = [0.0, 250.0, 50_000.0, 250_000.0, 1_500_000.0, 12.5].map(ticks::si).to_vec();
    assert_eq!(labels, ["0", "250", "50k", "250k", "1.5M", "12.5"]);
    assert_eq!([600.0, 1000.0, 1500.0, 50_000.0].map(ticks::micros), ["600 µs", "1 ms", "1.5 ms", "50 ms"]);
    assert_eq!([0.0, 600.0, 2048.0].map(ticks::mib), ["0", "600 MiB", "2 GiB"]);
    assert_eq!(ticks::mean_sd(125_688.0, 531.0), "125.7k ± 0.5k");
    assert_eq!(ticks::mean_sd(205.0, 9.3), "205 ± 9");
    // The spawn plot of docs/benchmarks.md: 450 µs to 75 ms over about 500 pixels.
    let ticks = ticks::log_ticks(450.0, 75_000.0, 500.0, 22.0);
    assert!(ticks.iter().filter(|t| (500.0..1000.0).contains(*t)).count() >= 2, "{ticks:?}");
    assert!(ticks.contains(&1000.0) && ticks.contains(&10_000.0), "{ticks:?}");
    for pair in ticks.windows(2) {
        assert!((pair[1] / pair[0]).log10() * 500.0 / (75_000f64 / 450.0).log10() >= 22.0, "{ticks:?}");
    }
}

/// The spawn plot has error bars, and each setting's floor is a line of its own: the floor
/// measured in that setting's runs, never one line averaged over every setting's floors.
#[test]
fn spawn_lines_carry_sd_and_each_setting_s_own_floor() {
    let mut results = spawn_results();
    // fork-exec's runs measured a slower floor than posix_spawn's.
    for r in &mut results[2..] {
        for s in &mut r.samples {
            s.extra.insert("floor_us_per_spawn".into(), 700.0);
        }
    }
    let series = lines::series_for_test(&results);
    let labels: Vec<&str> = series.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "strategy=posix-spawn",
            "strategy=fork-exec",
            "floor: posix_spawn + waitpid (strategy=posix-spawn)",
            "floor: posix_spawn + waitpid (strategy=fork-exec)"
        ]
    );
    let fork = &series[1].1;
    assert_eq!(fork.len(), 2);
    assert!(fork.iter().all(|&(_, _, sd)| sd > 0.0), "{fork:?}");
    assert!(series[2].1.iter().all(|&(_, y, _)| y == 500.0), "{series:?}");
    assert!(series[3].1.iter().all(|&(_, y, _)| y == 700.0), "{series:?}");
    // One setting: one floor, named as such.
    let one: Vec<ConfigResult<Params>> = results.into_iter().take(2).collect();
    let labels: Vec<String> = lines::series_for_test(&one).into_iter().map(|(label, _)| label).collect();
    assert_eq!(labels, ["wrt guest: spawn + wait", "floor: posix_spawn + waitpid"]);
}

/// An error bar longer than the axis stops at its edge and says so with a mark, so that it
/// does not read as a short bar.
#[test]
fn error_bars_cut_by_the_axis_are_marked() {
    let inside = whisker::Whisker::new(100.0, 10.0, 50.0, 200.0);
    assert_eq!((inside.low, inside.high, inside.low_cut, inside.high_cut), (90.0, 110.0, false, false));
    let below = whisker::Whisker::new(100.0, 80.0, 50.0, 200.0);
    assert_eq!((below.low, below.low_cut, below.high_cut), (50.0, true, false));
    let both = whisker::Whisker::new(100.0, 150.0, 0.0, 200.0);
    assert_eq!((both.low, both.high, both.low_cut, both.high_cut), (0.0, 200.0, true, true));
    // A cut end is an arrowhead (three points), an end inside the axis a cap (two).
    assert_eq!(whisker::end_points((0, 0), false, 1, false).len(), 2);
    assert_eq!(whisker::end_points((0, 0), true, 1, false), [(-5, -7), (0, 0), (5, -7)]);
    assert_eq!(whisker::end_points((0, 0), true, -1, true), [(7, -5), (0, 0), (7, 5)]);
}

/// One run: its rate, its floor's rate and its figures.
type Run<'a> = (f64, f64, &'a [(&'a str, f64)]);

/// A result of one run per entry of `runs`.
fn measured(params: Params, runs: &[Run<'_>]) -> ConfigResult<Params> {
    let samples = runs
        .iter()
        .map(|(rate, floor_rate, extra)| Sample {
            rate: *rate,
            floor_rate: *floor_rate,
            extra: extra.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        })
        .collect();
    ConfigResult::new(params, samples, None)
}

fn labels(results: &[ConfigResult<Params>]) -> Vec<String> {
    bars::rows_for_test(results).into_iter().map(|(label, _, _)| label).collect()
}

/// component-startup compares wrt run with wasmtime run: the plot drew only wrt's bar and
/// the floor's.
#[test]
fn component_startup_plot_draws_wasmtime() {
    let params = Params::ComponentStartup(crate::params::ComponentStartupParams { n: 3 });
    let first: &[(&str, f64)] = &[("ms_per_run", 8.0), ("wasmtime_ms_per_run", 10.0)];
    let second: &[(&str, f64)] = &[("ms_per_run", 7.0), ("wasmtime_ms_per_run", 10.0)];
    let results = [measured(params, &[(125.0, 1000.0, first), (1e3 / 7.0, 1000.0, second)])];
    let rows = bars::rows_for_test(&results);
    assert_eq!(labels(&results), ["wrt run", "wasmtime run"]);
    assert!((rows[1].1 - 100.0).abs() < 1e-9, "{rows:?}");
    assert!(rows[0].2.contains("time/wasmtime 0.75×"), "{rows:?}");
    assert!(bars::legend_for_test(&results).iter().any(|l| l == "wasmtime run"));
    // Without wasmtime, no wasmtime bar.
    let alone = [measured(
        Params::ComponentStartup(crate::params::ComponentStartupParams { n: 3 }),
        &[(125.0, 1000.0, &[("ms_per_run", 8.0)])],
    )];
    assert_eq!(labels(&alone), ["wrt run"]);
    assert!(!bars::legend_for_test(&alone).iter().any(|l| l.contains("wasmtime")));
}

/// real compares wrt run with wasmtime run for each case, over the native program: one wrt bar
/// and one wasmtime bar a case, named by the case.
#[test]
fn real_plot_draws_wasmtime_for_each_case() {
    use crate::params::{RealCase, RealParams};
    let real = |case| Params::Real(RealParams { n: 3, files: 20, bytes: 1 << 20, case });
    let extra: &[(&str, f64)] = &[("ms_per_run", 20.0), ("wasmtime_ms_per_run", 25.0), ("native_ms_per_run", 5.0)];
    let results = [
        measured(real(RealCase::TreeSearchCore), &[(50.0, 200.0, extra)]),
        measured(real(RealCase::EmitCore), &[(50.0, 200.0, extra)]),
    ];
    assert_eq!(
        labels(&results),
        [
            "case=tree-search-core",
            "case=tree-search-core: wasmtime run",
            "case=emit-core",
            "case=emit-core: wasmtime run"
        ]
    );
    let rows = bars::rows_for_test(&results);
    assert!((rows[1].1 - 40.0).abs() < 1e-9, "{rows:?}");
    assert!(rows[0].2.contains("0.25× of native") && rows[0].2.contains("time/wasmtime 0.80×"), "{rows:?}");
    let legend = bars::legend_for_test(&results);
    assert!(legend.iter().any(|l| l == "wasmtime run") && legend.iter().any(|l| l.starts_with("native: ")));
    assert!(compared::title(&results[0].params).ends_with("against the native program"));
    let dir = tempfile::tempdir().unwrap();
    draw(&results, &dir.path().join("real.svg")).unwrap();
}

/// component-spawn compares the component with the core module and the floor: the plot draws
/// a core-module bar.
#[test]
fn component_spawn_plot_draws_the_core_module() {
    let extra: &[(&str, f64)] = &[("us_per_spawn", 800.0), ("core_us_per_spawn", 640.0), ("floor_us_per_spawn", 500.0)];
    let results =
        [measured(Params::ComponentSpawn(crate::params::ComponentSpawnParams { n: 10 }), &[(1250.0, 2000.0, extra)])];
    let rows = bars::rows_for_test(&results);
    assert_eq!(labels(&results), ["component (wrt:process)", "core module (wrt_v1)"]);
    assert!((rows[1].1 - 1e6 / 640.0).abs() < 1e-9, "{rows:?}");
    assert!(rows[0].2.contains("time/core 1.25×") && rows[1].2.contains("0.78× of floor"), "{rows:?}");
}

/// spawn-overhead measures host-spawn alone (and a confined guest) beside the guest: the plot
/// drew the guest alone.
#[test]
fn spawn_overhead_plot_draws_host_spawn_alone() {
    let extra: &[(&str, f64)] = &[
        ("cpu_us_per_spawn", 600.0),
        ("host_cpu_us_per_spawn", 580.0),
        ("confined_cpu_us_per_spawn", 660.0),
        ("floor_cpu_us_per_spawn", 570.0),
    ];
    let results = [measured(
        Params::SpawnOverhead(crate::params::SpawnOverheadParams { n: 10 }),
        &[(1e6 / 600.0, 1e6 / 570.0, extra)],
    )];
    let rows = bars::rows_for_test(&results);
    let host = rows.iter().find(|(label, _, _)| label == "host-spawn alone").expect("a host-spawn bar");
    assert!((host.1 - 1e6 / 580.0).abs() < 1e-9, "{rows:?}");
    assert!(host.2.contains("0.98× of floor"), "{rows:?}");
    assert_eq!(rows.len(), 3, "{rows:?}");
}

fn instantiate(guest: crate::params::InstantiateGuest) -> Params {
    Params::Instantiate(crate::params::InstantiateParams {
        n: 10,
        guest,
        config: crate::params::RunConfig::Defaults,
        threads: 1,
    })
}

/// Bars far apart in rate (the instantiate workload's guests differ 30-fold: on a linear axis
/// the slowest are slivers) get a logarithmic axis; bars close together keep a linear one
/// from 0.
#[test]
fn instantiate_rows_far_apart_get_a_log_axis() {
    use crate::params::InstantiateGuest;
    let run = |rate: f64, floor: f64| (rate, floor, &[][..]);
    let results = [
        measured(instantiate(InstantiateGuest::Trivial), &[run(600_000.0, 900_000.0)]),
        measured(instantiate(InstantiateGuest::Hello), &[run(20_000.0, 22_000.0)]),
    ];
    let rows: Vec<(f64, f64, Option<f64>)> =
        bars::rows_for_test(&results).into_iter().map(|(_, rate, _)| (rate, 0.0, None)).collect();
    let axis = bars::Axis::of(&rows, 600.0, 150.0);
    assert!(axis.log && axis.lo > 0.0 && axis.lo <= 20_000.0 / 1.3 && axis.hi > 600_000.0, "{axis:?}");
    let close = bars::Axis::of(&[(20_000.0, 1000.0, Some(22_000.0)), (15_000.0, 0.0, None)], 600.0, 150.0);
    assert!(!close.log && close.lo == 0.0 && close.hi > 23_000.0, "{close:?}");
    // Bars far below a floor that every row shares stay on a linear axis: the light bar shows
    // the share of the floor.
    let under_floor = bars::Axis::of(&[(123.0, 8.0, Some(870.0)), (80.0, 0.5, Some(870.0))], 600.0, 150.0);
    assert!(!under_floor.log, "{under_floor:?}");
    let dir = tempfile::tempdir().unwrap();
    draw(&results, &dir.path().join("instantiate.png")).unwrap();
}

/// The pipeline's baseline is the native pipeline, not a floor: the title said "against the
/// floor" and the legend "baseline"; and with every parameter varying, the line under the
/// title said nothing but "· mean ± sd".
#[test]
fn pipeline_plot_names_its_baseline_one_way_and_has_a_subtitle() {
    let pipeline = |bytes: u64| Params::Pipeline(crate::params::PipelineParams { bytes });
    let run = (150.0, 175.0, &[("stream_bytes", 11.0)][..]);
    let results = [measured(pipeline(8 << 20), &[run]), measured(pipeline(16 << 20), &[run])];
    let params = &results[0].params;
    assert!(compared::title(params).ends_with("against the native pipeline"), "{}", compared::title(params));
    let legend = bars::legend_for_test(&results);
    assert!(legend.iter().any(|l| l.starts_with("native: ")), "{legend:?}");
    assert!(bars::rows_for_test(&results).iter().all(|(_, _, note)| note.ends_with("× of native")));
    let subtitle = subtitle(&results);
    assert!(subtitle.starts_with("head -c BYTES"), "{subtitle}");
}

/// The buffer plot's rate is in ops/s, and an op is one burst of the workload: its axis says so.
#[test]
fn buffer_plot_says_what_an_op_is() {
    let axis = compared::axis(&buffer(BufferGuest::Rust));
    assert!(axis.starts_with("ops/s") && axis.contains("1 op = one burst"), "{axis}");
}

#[test]
fn linear_ticks_are_round_and_spaced() {
    assert_eq!(ticks::linear_ticks(1000.0, 500.0, 80.0), [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
    assert_eq!(ticks::linear_ticks(31.0, 600.0, 80.0), [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
    assert_eq!([17_000.0, 923.0, 1.0, 0.3].map(ticks::round_down), [10_000.0, 500.0, 1.0, 0.2]);
}

/// Every workload's plot draws, with several configurations, to both formats.
#[test]
fn every_workload_plots() {
    use crate::params::{InstantiateGuest, StartupParams};
    let dir = tempfile::tempdir().unwrap();
    let figures: &[(&str, f64)] = &[
        ("us_per_spawn", 800.0),
        ("core_us_per_spawn", 640.0),
        ("floor_us_per_spawn", 500.0),
        ("ms_per_run", 8.0),
        ("wasmtime_ms_per_run", 10.0),
        ("cpu_us_per_spawn", 600.0),
        ("host_cpu_us_per_spawn", 580.0),
        ("confined_cpu_us_per_spawn", 660.0),
        ("floor_cpu_us_per_spawn", 570.0),
        ("stream_bytes", 11.0),
        ("young_collections", 3.0),
        ("full_collections", 0.0),
    ];
    let runs = [(1000.0, 1500.0, figures), (900.0, 1400.0, figures)];
    let workloads = [
        vec![instantiate(InstantiateGuest::Trivial), instantiate(InstantiateGuest::Hello)],
        vec![Params::Pipeline(crate::params::PipelineParams { bytes: 1 << 20 })],
        vec![Params::ComponentSpawn(crate::params::ComponentSpawnParams { n: 10 })],
        vec![
            Params::ComponentStartup(crate::params::ComponentStartupParams { n: 3 }),
            Params::ComponentStartup(crate::params::ComponentStartupParams { n: 5 }),
        ],
        vec![Params::SpawnOverhead(crate::params::SpawnOverheadParams { n: 10 })],
        vec![Params::Real(crate::params::RealParams {
            n: 3,
            files: 20,
            bytes: 1 << 20,
            case: crate::params::RealCase::HexdumpComponent,
        })],
        vec![Params::Startup(StartupParams { n: 3 })],
        vec![buffer(BufferGuest::Rust), buffer(BufferGuest::Externref)],
        vec![spawn(0, Strategy::PosixSpawn)],
    ];
    for (i, params) in workloads.into_iter().enumerate() {
        let results: Vec<ConfigResult<Params>> = params.into_iter().map(|p| measured(p, &runs)).collect();
        for ext in ["png", "svg"] {
            let path = dir.path().join(format!("{i}.{ext}"));
            draw(&results, &path).unwrap_or_else(|e| panic!("{}: {e}", results[0].params.name()));
        }
    }
}

/// The colours of the pixels of `results` drawn as a bitmap, with the image's size.
fn pixels(results: &[ConfigResult<Params>]) -> (Vec<RGBColor>, (u32, u32)) {
    register_font().unwrap();
    let size = (WIDTH, bars::height(results).unwrap());
    let mut buffer = vec![0u8; (size.0 * size.1 * 3) as usize];
    {
        let root = text::GlyphText::pixels(BitMapBackend::with_buffer(&mut buffer, size)).into_drawing_area();
        render(&root, &kind(results), results).unwrap();
        root.present().unwrap();
    }
    (buffer.chunks(3).map(|p| RGBColor(p[0], p[1], p[2])).collect(), size)
}

/// In the buffer plot, a single configuration's bar fills most of the plot's width over its
/// floor, and the bars never take the blue and red of young and full collections.
#[test]
fn buffer_bars_fill_the_plot_over_their_floor_in_their_own_colours() {
    let one = vec![result(buffer(BufferGuest::Rust), &[1500.0, 1600.0], (0.0, 0.0))];
    let (image, (w, h)) = pixels(&one);
    let columns = |color: RGBColor| {
        let xs: Vec<u32> = (0..w * h).filter(|&i| image[i as usize] == color).map(|i| i % w).collect();
        (xs.iter().min().copied(), xs.iter().max().copied())
    };
    let (Some(left), Some(right)) = columns(WRT) else { panic!("no bar") };
    // 1550/s of a 2000/s floor: the bar takes most of the plot's width, under the floor's.
    assert!(right - left > w / 3, "the bar spans {left}..{right} of {w} pixels");
    let (Some(_), Some(floor_right)) = columns(FLOOR_FILL) else { panic!("no floor") };
    assert!(floor_right > right, "the floor ends at {floor_right}, the bar at {right}");
    assert!(!image.contains(&YOUNG) && !image.contains(&FULL), "blue or red with no collections");
    // Several configurations: still no young or full colour above the collections panel.
    let several: Vec<ConfigResult<Params>> = [BufferGuest::Rust, BufferGuest::Assemblyscript, BufferGuest::Externref]
        .into_iter()
        .map(|g| result(buffer(g), &[1500.0], (300.0, 1.0)))
        .collect();
    let (image, (w, h)) = pixels(&several);
    let first_young = image.iter().position(|&c| c == YOUNG || c == FULL).expect("collections drawn");
    let first_bar = image.iter().position(|&c| c == WRT).expect("bars drawn");
    assert!(first_bar < first_young, "young/full colours above the rate bars");
    assert!(image[first_young..].iter().all(|&c| c != WRT), "rate colour in the collections panel");
    assert!(h > bars::height(&one).unwrap() && w == WIDTH);
}

/// An empty collections panel is a line saying there were none.
#[test]
fn no_collections_is_said_not_drawn() {
    let none = vec![result(buffer(BufferGuest::Rust), &[1500.0], (0.0, 0.0))];
    let some = vec![result(buffer(BufferGuest::Rust), &[1500.0], (3.0, 0.0))];
    let startup = vec![result(Params::Startup(crate::params::StartupParams { n: 1 }), &[200.0], (0.0, 0.0))];
    assert!(bars::height(&none).unwrap() < bars::height(&some).unwrap());
    assert!(bars::height(&startup).unwrap() <= bars::height(&none).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.svg");
    draw(&none, &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(!svg.contains(&format!("fill=\"#{:02X}{:02X}{:02X}\"", YOUNG.0, YOUNG.1, YOUNG.2)), "{svg}");
}

#[test]
fn svg_text_becomes_outlines() {
    let svg = r##"<svg><rect x="1"/><text x="5" y="6" fill="#282828" opacity="1">wrt-outline:M1 2L3 4</text><text fill="#000000">plain</text></svg>"##;
    assert_eq!(
        text::outline(svg),
        r##"<svg><rect x="1"/><path d="M1 2L3 4" fill="#282828" opacity="1"/><text fill="#000000">plain</text></svg>"##
    );
}

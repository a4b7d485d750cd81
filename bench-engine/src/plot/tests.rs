use std::collections::BTreeMap;

use super::*;
use crate::params::{BufferGuest, BufferParams, Method, SpawnParams, Strategy};
use crate::runner::Sample;
use crate::stats::Summary;

/// A result of `rates` (one per run) against a floor of 2000/s, with collections.
fn result(params: Params, rates: &[f64], collections: (f64, f64)) -> ConfigResult {
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
    })
}

fn buffer(guest: BufferGuest) -> Params {
    Params::Buffer(BufferParams { n: 1, body_size: 1, guest, gc: true, gc_young: 1, gc_soft_limit: 1, gc_growth: 2.0 })
}

fn spawn_results() -> Vec<ConfigResult> {
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

/// Issue 16: `--plot` to an unsupported extension failed only after the run.
#[test]
fn issue_16_plot_formats_by_extension() {
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

/// Issue 16: tick labels read `250000.0`, and the spawn plot labelled no tick between 500 and
/// 1000 µs.
#[test]
fn issue_16_tick_labels_are_short_and_where_the_lines_are() {
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

/// Issue 16: the spawn plot had no error bars; the floor is a series of its own.
#[test]
fn issue_16_spawn_lines_carry_sd_and_the_floor() {
    let series = lines::series_for_test(&spawn_results());
    let labels: Vec<&str> = series.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels, ["strategy=posix-spawn", "strategy=fork-exec", "floor: posix_spawn + waitpid"]);
    let fork = &series[1].1;
    assert_eq!(fork.len(), 2);
    assert!(fork.iter().all(|&(_, _, sd)| sd > 0.0), "{fork:?}");
    assert!(series[2].1.iter().all(|&(_, y, _)| y == 500.0), "{series:?}");
}

/// The colours of the pixels of `results` drawn as a bitmap, with the image's size.
fn pixels(results: &[ConfigResult]) -> (Vec<RGBColor>, (u32, u32)) {
    register_font().unwrap();
    let size = (WIDTH, bars::height(results));
    let mut buffer = vec![0u8; (size.0 * size.1 * 3) as usize];
    {
        let root = text::GlyphText::pixels(BitMapBackend::with_buffer(&mut buffer, size)).into_drawing_area();
        render(&root, &kind(results), results).unwrap();
        root.present().unwrap();
    }
    (buffer.chunks(3).map(|p| RGBColor(p[0], p[1], p[2])).collect(), size)
}

/// Issue 16: in the buffer plot, a single configuration left half the plot empty, the floor
/// was not drawn, and the bars reused the blue and red of young and full collections.
#[test]
fn issue_16_buffer_bars_fill_the_plot_over_their_floor_in_their_own_colours() {
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
    let several: Vec<ConfigResult> = [BufferGuest::Rust, BufferGuest::Assemblyscript, BufferGuest::Externref]
        .into_iter()
        .map(|g| result(buffer(g), &[1500.0], (300.0, 1.0)))
        .collect();
    let (image, (w, h)) = pixels(&several);
    let first_young = image.iter().position(|&c| c == YOUNG || c == FULL).expect("collections drawn");
    let first_bar = image.iter().position(|&c| c == WRT).expect("bars drawn");
    assert!(first_bar < first_young, "young/full colours above the rate bars");
    assert!(image[first_young..].iter().all(|&c| c != WRT), "rate colour in the collections panel");
    assert!(h > bars::height(&one) && w == WIDTH);
}

/// Issue 16: an empty collections panel looked broken; it is a line saying there were none.
#[test]
fn issue_16_no_collections_is_said_not_drawn() {
    let none = vec![result(buffer(BufferGuest::Rust), &[1500.0], (0.0, 0.0))];
    let some = vec![result(buffer(BufferGuest::Rust), &[1500.0], (3.0, 0.0))];
    let startup = vec![result(Params::Startup(crate::params::StartupParams { n: 1 }), &[200.0], (0.0, 0.0))];
    assert!(bars::height(&none) < bars::height(&some));
    assert!(bars::height(&startup) <= bars::height(&none));
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

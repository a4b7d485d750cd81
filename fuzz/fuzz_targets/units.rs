//! The size and duration grammar of wrt's flags and policy files (`512MiB`, `1.5GiB`, `250ms`):
//! any text parses to a value or to an error that quotes it as one printable line, never a
//! panic; whole numbers with each unit parse to exactly the number times the unit (or "too
//! large" past 64 bits); durations in milliseconds come back to within a microsecond.

#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use wrt_text::{parse_bytes, parse_duration, parse_size};

const UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("K", 1 << 10),
    ("MiB", 1 << 20),
    ("M", 1 << 20),
    ("GiB", 1 << 30),
    ("G", 1 << 30),
    ("TiB", 1 << 40),
    ("T", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    text: &'a str,
    number: u64,
    unit: u8,
    millis: u64,
}

/// An error message: one printable line.
fn check_message(err: &impl std::fmt::Display) {
    let message = err.to_string();
    assert!(!message.chars().any(char::is_control), "{message:?}");
}

fuzz_target!(|input: Input<'_>| {
    for result in [parse_size(input.text), parse_bytes(input.text)] {
        if let Err(err) = result {
            check_message(&err);
        }
    }
    match parse_duration(input.text) {
        Ok(d) => assert!(d.as_secs_f64().is_finite()),
        Err(err) => check_message(&err),
    }

    let n = input.number;
    assert_eq!(parse_size(&format!("{n}B")).ok(), Some(n));
    assert_eq!(parse_bytes(&n.to_string()).ok(), Some(n));
    let (unit, scale) = UNITS[usize::from(input.unit) % UNITS.len()];
    let text = format!("{n}{unit}");
    match (parse_size(&text), n.checked_mul(scale)) {
        (Ok(got), Some(want)) => assert_eq!(got, want, "{text}"),
        (Err(err), None) => assert!(err.to_string().contains("too large"), "{text}: {err}"),
        (got, want) => panic!("{text}: parsed {got:?}, expected {want:?}"),
    }

    let ms = input.millis % 1_000_000_000_000;
    let got = parse_duration(&format!("{ms}ms")).unwrap_or_else(|err| panic!("{ms}ms: {err}"));
    let want = Duration::from_millis(ms);
    assert!(got.abs_diff(want) <= Duration::from_micros(1), "{ms}ms: {got:?}");
});

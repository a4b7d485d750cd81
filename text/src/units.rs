//! Human-readable sizes (`512MiB`) and durations (`2s`): the one grammar of wrt's flags and of
//! spawn policy files (whose strings are read with [`parse_bytes`] and [`parse_duration`]).

use std::time::Duration;

/// A size or duration that could not be parsed. The message quotes the text escaped and
/// capped ([`Shown`](crate::Shown)): it may come from a command line or a policy file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{}`: {reason}", crate::Shown::new(.value))]
pub struct UnitError {
    what: &'static str,
    value: String,
    reason: &'static str,
}

impl UnitError {
    fn new(what: &'static str, value: &str, reason: &'static str) -> Self {
        Self { what, value: value.to_owned(), reason }
    }
}

/// Splits `1.5GiB` into (`1.5`, `GiB`).
fn split_number(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (&s[..end], s[end..].trim_start())
}

/// Parses a byte size: a whole or decimal number with a unit. `K`, `KiB`, `M`, `MiB`, `G`,
/// `GiB`, `T`, `TiB` are powers of 1024; `KB`, `MB`, `GB`, `TB` are powers of 1000; `B` means
/// bytes. A number without a unit is refused (is `512` bytes or MiB?), except `0`.
///
/// # Examples
///
/// ```
/// assert_eq!(wrt_text::parse_size("512MiB").unwrap(), 512 << 20);
/// assert_eq!(wrt_text::parse_size("2G").unwrap(), 2 << 30);
/// assert_eq!(wrt_text::parse_size("1KB").unwrap(), 1000);
/// assert_eq!(wrt_text::parse_size("4096B").unwrap(), 4096);
/// assert!(wrt_text::parse_size("512").is_err());
/// ```
///
/// # Errors
///
/// Empty input, a missing or unknown unit, or a value that does not fit in 64 bits.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let (number, unit) = split_number(s.trim());
    if unit.is_empty() && !number.is_empty() && number.chars().any(|c| c != '0' && c != '.') {
        return Err(UnitError::new("size", s, "a size needs a unit, such as `512MiB` (`B` for bytes)"));
    }
    parse_bytes(s)
}

/// Parses a byte count as wasmtime's options take it: a number of bytes, or a size with a unit
/// as [`parse_size`] reads it.
///
/// # Examples
///
/// ```
/// assert_eq!(wrt_text::parse_bytes("65536").unwrap(), 65536);
/// assert_eq!(wrt_text::parse_bytes("1MiB").unwrap(), 1 << 20);
/// ```
///
/// # Errors
///
/// As [`parse_size`], except that a missing unit means bytes.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    const WHAT: &str = "size";
    let (number, unit) = split_number(s.trim());
    if number.is_empty() {
        return Err(UnitError::new(WHAT, s, "expected a number such as `512MiB`"));
    }
    let scale: u64 = match unit {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "m" | "MiB" => 1 << 20,
        "G" | "g" | "GiB" => 1 << 30,
        "T" | "t" | "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return Err(UnitError::new(WHAT, s, "unknown unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)")),
    };
    let too_big = || UnitError::new(WHAT, s, "too large");
    match number.split_once('.') {
        None => {
            let whole: u64 = number.parse().map_err(|_| too_big())?;
            whole.checked_mul(scale).ok_or_else(too_big)
        }
        Some((whole, frac)) => {
            let value: f64 = format!("{}.{frac}", if whole.is_empty() { "0" } else { whole })
                .parse()
                .map_err(|_| UnitError::new(WHAT, s, "malformed number"))?;
            let bytes = value * scale as f64;
            if !bytes.is_finite() || bytes >= u64::MAX as f64 {
                return Err(too_big());
            }
            Ok(bytes.round() as u64)
        }
    }
}

/// Parses a duration: a number with a unit `ns`, `us`, `ms`, `s`, `m` or `h`; a bare number
/// means seconds.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// assert_eq!(wrt_text::parse_duration("2s").unwrap(), Duration::from_secs(2));
/// assert_eq!(wrt_text::parse_duration("150ms").unwrap(), Duration::from_millis(150));
/// assert_eq!(wrt_text::parse_duration("1.5").unwrap(), Duration::from_millis(1500));
/// ```
///
/// # Errors
///
/// Empty input, an unknown unit, or a value too large to represent.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    const WHAT: &str = "duration";
    let (number, unit) = split_number(s.trim());
    let value: f64 =
        number.parse().map_err(|_| UnitError::new(WHAT, s, "expected a number with a unit such as `2s` or `500ms`"))?;
    let seconds = match unit {
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(UnitError::new(WHAT, s, "unknown unit (use ns, us, ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| UnitError::new(WHAT, s, "out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096B").unwrap(), 4096);
        assert_eq!(parse_size("0").unwrap(), 0);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size("3MB").unwrap(), 3_000_000);
        assert_eq!(parse_size(" 7 M ").unwrap(), 7 << 20);
    }

    #[test]
    fn bad_sizes_name_the_value() {
        for bad in ["", "MiB", "12XB", "-1", "99999999999999999999", "16777216TiB", "512"] {
            let err = parse_size(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
        }
    }

    #[test]
    fn a_bad_value_is_quoted_escaped() {
        let err = parse_size("1\u{1b}[2J\nGiB").unwrap_err().to_string();
        assert_eq!(err, r"invalid size `1\u{1b}[2J\nGiB`: unknown unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
        let err = parse_duration("\0s").unwrap_err().to_string();
        assert!(err.starts_with(r"invalid duration `\0s`"), "{err}");
    }

    #[test]
    fn a_size_without_unit_asks_for_one() {
        let err = parse_size("512").unwrap_err().to_string();
        assert_eq!(err, "invalid size `512`: a size needs a unit, such as `512MiB` (`B` for bytes)");
        assert!(parse_size("1.5").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("3m").unwrap(), Duration::from_secs(180));
        assert_eq!(parse_duration("10us").unwrap(), Duration::from_micros(10));
    }

    #[test]
    fn bad_durations() {
        for bad in ["", "s", "2 weeks", "-1s", "1e400s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}

//! [`Shown`]: how a guest-controlled string appears in a message or an audit record: escaped
//! and capped, so that a hostile name can neither forge lines or terminal escapes nor fill a
//! disk; [`json_escaped`]: a line of JSON with nothing a terminal acts on.

use std::ffi::OsStr;
use std::fmt::{self, Write as _};
use std::os::unix::ffi::OsStrExt;

/// The most bytes of a guest-controlled string that a message or an audit record shows.
pub const SHOWN_BYTES: usize = 256;

/// A guest-controlled string as wrt prints or logs it: escaped like
/// [`char::escape_debug`] and capped at [`SHOWN_BYTES`] bytes of the original.
///
/// - Control characters (newline, tab, NUL, ESC, DEL and the rest), bidirectional
///   overrides and isolates (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), and
///   other characters that are not printable are written as `\n`, `\t`, `\0` or `\u{…}`.
/// - A backslash is written as `\\`, so the escaped form can be read back unambiguously.
///   Quotes are written as they are.
/// - Bytes that are not UTF-8 are written as `\xNN`.
/// - Past [`SHOWN_BYTES`] bytes of the original (cut at a character boundary) the rest is
///   replaced by `…` and the original's full length: `…(1048576 bytes)`.
///
/// The result is one line of printable text at most about 10 × [`SHOWN_BYTES`] bytes long,
/// whatever the input.
///
/// # Examples
///
/// ```
/// use wrt_text::Shown;
///
/// assert_eq!(Shown::new("a\nb\u{1b}[2J").to_string(), r"a\nb\u{1b}[2J");
/// assert_eq!(Shown::new(&"x".repeat(300)).to_string(), format!("{}…(300 bytes)", "x".repeat(256)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a>(pub &'a OsStr);

impl<'a> Shown<'a> {
    /// Shows `s`.
    pub fn new(s: &'a (impl AsRef<OsStr> + ?Sized)) -> Self {
        Self(s.as_ref())
    }
}

/// Where to cut `bytes` so that at most `cap` bytes remain and no UTF-8 sequence is split.
fn cut(bytes: &[u8], cap: usize) -> usize {
    if bytes.len() <= cap {
        return bytes.len();
    }
    let mut at = cap;
    // Back up over continuation bytes (at most 3) to the start of the character.
    while at > cap.saturating_sub(3) && at > 0 && bytes[at] & 0xc0 == 0x80 {
        at -= 1;
    }
    if bytes[at] & 0xc0 == 0x80 { cap } else { at }
}

/// Bidirectional formatting characters: they reorder how the rest of a line is displayed.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A line of JSON with every character that a terminal or an editor acts on written as a JSON
/// escape (`\u007f`): serde_json escapes C0 controls itself but leaves DEL, the C1 controls
/// (U+0080–U+009F, which some terminals read as escape sequences), the line and paragraph
/// separators and the bidirectional controls raw. Outside its strings a JSON text is printable
/// ASCII, so every such character is inside a string, where its escape means the same.
///
/// # Examples
///
/// ```
/// let record = "{\"program\":\"x\u{7f}\u{202e}\"}".to_owned();
/// assert_eq!(wrt_text::json_escaped(record), r#"{"program":"x\u007f\u202e"}"#);
/// ```
pub fn json_escaped(json: String) -> String {
    let acted_on = |c: char| c.is_control() || is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}');
    // Most records hold none: they are returned as they are, uncopied.
    if !json.chars().any(acted_on) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if acted_on(c) {
            // Each of these is in the Basic Multilingual Plane: one `\uXXXX`.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '"' | '\'' => f.write_char(c),
        c if is_bidi_control(c) => write!(f, "\\u{{{:x}}}", u32::from(c)),
        c => write!(f, "{}", c.escape_debug()),
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0.as_bytes();
        let end = cut(bytes, SHOWN_BYTES);
        for chunk in bytes[..end].utf8_chunks() {
            for c in chunk.valid().chars() {
                write_char(f, c)?;
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        if end < bytes.len() {
            write!(f, "…({} bytes)", bytes.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(bytes: &[u8]) -> String {
        Shown(OsStr::from_bytes(bytes)).to_string()
    }

    #[test]
    fn control_characters_and_escapes_are_escaped() {
        assert_eq!(show(b"a\0b\nc\r\td"), r"a\0b\nc\r\td");
        assert_eq!(show(b"\x1b[31mred\x1b[0m"), r"\u{1b}[31mred\u{1b}[0m");
        assert_eq!(show(b"del\x7f"), r"del\u{7f}");
        assert_eq!(show(b"back\\slash 'q' \"q\""), r#"back\\slash 'q' "q""#);
        assert_eq!(show("h\u{e9}llo w\u{f6}rld \u{1f600}".as_bytes()), "h\u{e9}llo w\u{f6}rld \u{1f600}");
    }

    #[test]
    fn json_keeps_no_character_a_terminal_acts_on() {
        let raw = "{\"a\":\"x\u{7f}\u{85}\u{9b}31m\u{2028}\u{2029}\u{202e}\u{e9}\u{1F600}\"}";
        let escaped = json_escaped(raw.to_owned());
        assert_eq!(escaped, "{\"a\":\"x\\u007f\\u0085\\u009b31m\\u2028\\u2029\\u202e\u{e9}\u{1F600}\"}");
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        let original: serde_json::Value = serde_json::from_str(raw).unwrap();
        assert_eq!(back, original, "the escapes mean the same string");
    }

    #[test]
    fn json_with_nothing_to_escape_is_returned_uncopied() {
        for plain in ["{\"a\":\"plain ascii\"}", "{\"a\":\"caf\u{e9} \u{1F600}\"}"] {
            let json = plain.to_owned();
            let at = json.as_ptr();
            let escaped = json_escaped(json);
            assert_eq!(escaped, plain);
            assert_eq!(escaped.as_ptr(), at, "the same buffer, not a copy");
        }
    }

    #[test]
    fn bidi_overrides_are_escaped() {
        assert_eq!(show("a\u{202e}b\u{2066}c\u{200f}".as_bytes()), r"a\u{202e}b\u{2066}c\u{200f}");
    }

    #[test]
    fn invalid_utf8_is_hex() {
        assert_eq!(show(b"a\xffb\xc3"), r"a\xffb\xc3");
    }

    #[test]
    fn long_strings_are_capped_with_their_length() {
        let long = vec![b'x'; 1 << 20];
        let out = show(&long);
        assert_eq!(out, format!("{}…(1048576 bytes)", "x".repeat(SHOWN_BYTES)));
        // Exactly at the cap: nothing is cut.
        assert_eq!(show(&long[..SHOWN_BYTES]), "x".repeat(SHOWN_BYTES));
    }

    #[test]
    fn cap_never_splits_a_character() {
        // 255 ASCII bytes then a 4-byte character straddling the cap.
        let mut s = "y".repeat(SHOWN_BYTES - 1);
        s.push('\u{1f600}');
        assert_eq!(show(s.as_bytes()), format!("{}…(259 bytes)", "y".repeat(SHOWN_BYTES - 1)));
        // All invalid bytes: cut exactly at the cap.
        let junk = vec![0x80u8; 300];
        assert_eq!(show(&junk), format!("{}…(300 bytes)", r"\x80".repeat(SHOWN_BYTES)));
    }

    #[test]
    fn output_is_one_bounded_line() {
        let all: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let out = show(&all);
        assert!(!out.contains(['\n', '\r', '\u{1b}', '\0']), "{out:?}");
        assert!(out.len() <= 10 * SHOWN_BYTES + 32, "{}", out.len());
    }
}

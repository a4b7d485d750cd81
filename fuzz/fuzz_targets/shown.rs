//! `Shown`, how a guest-controlled string appears in messages and audit records: for any bytes,
//! the result is one line of printable text (no control character, no line or paragraph
//! separator, no bidirectional control), at most about 10 × `SHOWN_BYTES` bytes long; an input of
//! at most `SHOWN_BYTES` bytes is read back exactly from it, and a longer one gives back a prefix
//! of at most `SHOWN_BYTES` bytes cut at a character boundary, then `…(N bytes)` with its length.

#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use wrt_text::{SHOWN_BYTES, Shown};

/// Reads `Shown`'s escapes back into bytes; `None` for an escape `Shown` never writes.
fn unescape(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            continue;
        }
        match chars.next()? {
            '\\' => out.push(b'\\'),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            '0' => out.push(0),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).ok()?);
            }
            'u' => {
                if chars.next()? != '{' {
                    return None;
                }
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let c = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            _ => return None,
        }
    }
    Some(out)
}

fn forbidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fuzz_target!(|bytes: &[u8]| {
    let shown = Shown::new(OsStr::from_bytes(bytes)).to_string();
    assert!(shown.len() <= 10 * SHOWN_BYTES + 32, "{} bytes shown", shown.len());
    if let Some(c) = shown.chars().find(|&c| forbidden(c)) {
        panic!("{c:?} left unescaped in {shown:?}");
    }
    if bytes.len() <= SHOWN_BYTES {
        assert_eq!(unescape(&shown).as_deref(), Some(bytes), "{shown:?}");
    } else {
        let suffix = format!("…({} bytes)", bytes.len());
        let head = shown.strip_suffix(&suffix).unwrap_or_else(|| panic!("{shown:?} lacks {suffix:?}"));
        let prefix = unescape(head).unwrap_or_else(|| panic!("{head:?} does not read back"));
        assert!(prefix.len() <= SHOWN_BYTES && prefix.len() + 3 >= SHOWN_BYTES, "{} bytes kept", prefix.len());
        assert!(bytes.starts_with(&prefix), "{shown:?}");
    }
});

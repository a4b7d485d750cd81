//! How text that a module controls appears in wrt's messages: the import, export and function
//! names of a module, and wasmtime's messages about it (which quote such names verbatim).
//!
//! A hostile module chooses these strings before any of its code runs: with control
//! characters in them they could move the cursor, recolour the terminal or print lines that
//! read like wrt's own (`wrt: …`). Every line is escaped and capped by
//! [`Shown`](wrt_text::Shown), only the first line starts at the left margin, and there
//! are at most [`MAX_LINES`] lines.

use std::fmt::Write as _;

use wrt_text::Shown;

/// The most lines a message from wasmtime (or a backtrace) shows; the rest are counted.
pub(crate) const MAX_LINES: usize = 64;

/// `text` ready to print: each line escaped and capped, every line but the first indented
/// (with two spaces, unless it already starts with a space), at most [`MAX_LINES`] lines and
/// then `… (N more lines)`.
pub(crate) fn shown_text(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    for (index, line) in lines.by_ref().take(MAX_LINES).enumerate() {
        if index > 0 {
            out.push('\n');
            if !line.starts_with(' ') {
                out.push_str("  ");
            }
        }
        let _ = write!(out, "{}", Shown::new(line));
    }
    let rest = lines.count();
    if rest > 0 {
        let _ = write!(out, "\n  … ({rest} more lines)");
    }
    out
}

/// `text` as one line: each of its lines escaped and capped, joined by a visible `\n`, at most
/// [`MAX_LINES`] of them. For wasmtime's messages about a module, which are one line unless a
/// name the module chose breaks them.
pub(crate) fn shown_line(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.split('\n');
    for (index, line) in lines.by_ref().take(MAX_LINES).enumerate() {
        if index > 0 {
            out.push_str("\\n");
        }
        let _ = write!(out, "{}", Shown::new(line));
    }
    let rest = lines.count();
    if rest > 0 {
        let _ = write!(out, "…({rest} more lines)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_broken_by_a_name_stays_one_line() {
        let shown = shown_line("duplicate export name `a\nwrt: forged\u{7}` already defined");
        assert_eq!(shown, r"duplicate export name `a\nwrt: forged\u{7}` already defined");
        assert_eq!(shown_line(&"\n".repeat(1000)).lines().count(), 1);
    }

    #[test]
    fn control_characters_are_escaped_and_no_later_line_starts_at_the_margin() {
        let shown = shown_text("unknown import `a\u{1b}[2J`\nwrt: guest `x` exited with 0\n    --> x.wat:1:2");
        assert_eq!(shown, "unknown import `a\\u{1b}[2J`\n  wrt: guest `x` exited with 0\n    --> x.wat:1:2");
        assert!(shown.chars().all(|c| c == '\n' || !c.is_control()));
    }

    #[test]
    fn lines_and_line_lengths_are_capped() {
        let long = "x".repeat(100_000);
        let shown = shown_text(&long);
        assert!(shown.len() < 400, "{}", shown.len());
        assert!(shown.ends_with("…(100000 bytes)"), "{shown}");
        let many = "line\n".repeat(1000);
        let shown = shown_text(&many);
        assert_eq!(shown.lines().count(), MAX_LINES + 1);
        assert!(shown.ends_with(&format!("… ({} more lines)", 1000 - MAX_LINES)), "{shown}");
    }
}

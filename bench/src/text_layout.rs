//! Text laid out for a terminal: rows as aligned columns, prose wrapped at 100 characters, and
//! rates with three significant figures or more. The common table and the tables a workload
//! draws itself share them.

/// A rate with three significant figures or more.
pub(crate) fn rate(value: f64) -> String {
    if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.1}") }
}

/// `text` broken into lines of at most 100 characters: between its clauses (after `,`, `;`
/// or `.`), or between words in a clause too long for a line.
pub(crate) fn wrap(text: &str) -> String {
    const WIDTH: usize = 100;
    let mut units: Vec<String> = Vec::new();
    let mut clause: Vec<&str> = Vec::new();
    let words: Vec<&str> = text.split(' ').collect();
    for (i, word) in words.iter().enumerate() {
        clause.push(word);
        if word.ends_with([',', ';', '.']) || i + 1 == words.len() {
            let whole = clause.join(" ");
            if whole.chars().count() <= WIDTH {
                units.push(whole);
            } else {
                units.extend(clause.iter().map(|w| (*w).to_owned()));
            }
            clause.clear();
        }
    }
    let mut out = String::new();
    let mut line = String::new();
    for unit in units {
        if !line.is_empty() && line.chars().count() + 1 + unit.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&unit);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Lays out rows as columns, the first left-aligned and the others right-aligned.
pub(crate) fn layout(rows: &[Vec<String>]) -> String {
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

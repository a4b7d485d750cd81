//! Every unknown key of a policy file, with its line and what was probably meant: serde stops
//! at the first one, and says nothing of where the key belongs.
//!
//! The known keys are the fields of the file's own `Deserialize` types, read from what their
//! derived `deserialize` passes to `deserialize_struct`, so this list cannot drift from them.
//! An unknown key that another table knows is said to belong there (`allow_ld_env` written
//! under `[env]`); any other gets the nearest key of its own table, if one is close enough
//! (`timout`: did you mean `timeout`?).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Visitor};
use toml::de::{DeTable, DeValue};

use super::{AllowEntry, EnvSection, PolicyFile, RlimitsEntry, SandboxSection, line_of};
use crate::error::UnknownKey;

/// The unknown keys of `text`, in file order; empty if there are none or `text` is not TOML
/// (the parser's own error says why).
pub(super) fn keys(text: &str) -> Vec<UnknownKey> {
    let Ok(root) = DeTable::parse(text) else { return Vec::new() };
    let mut found = Vec::new();
    walk(text, root.get_ref(), "", Table::Top, &mut found);
    found.sort_by_key(|key| key.line);
    found
}

/// The tables of a policy file, each with the keys it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Top,
    Rule,
    Env,
    Rlimits,
    Sandbox,
}

impl Table {
    const ALL: [Table; 5] = [Table::Top, Table::Rule, Table::Env, Table::Rlimits, Table::Sandbox];

    fn known(self) -> &'static [&'static str] {
        match self {
            Table::Top => fields_of::<PolicyFile>(),
            Table::Rule => fields_of::<AllowEntry>(),
            Table::Env => fields_of::<EnvSection>(),
            Table::Rlimits => fields_of::<RlimitsEntry>(),
            Table::Sandbox => fields_of::<SandboxSection>(),
        }
    }

    /// Where a key of this table is written, as the end of "belongs …".
    fn place(self) -> &'static str {
        match self {
            Table::Top => "at the top level",
            Table::Rule => "in an `[[allow]]` rule",
            Table::Env => "in `[env]`",
            Table::Rlimits => "in `rlimits`",
            Table::Sandbox => "in `[sandbox]`",
        }
    }
}

fn walk(text: &str, table: &DeTable<'_>, prefix: &str, kind: Table, found: &mut Vec<UnknownKey>) {
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        let path = format!("{prefix}{name}");
        if !kind.known().contains(&name) {
            found.push(UnknownKey { key: path, line: line_of(text, key.span().start), hint: hint(name, kind) });
            continue;
        }
        let nested = match name {
            "allow" if kind == Table::Top => {
                if let DeValue::Array(rules) = value.get_ref() {
                    for (i, rule) in rules.iter().enumerate() {
                        if let DeValue::Table(rule) = rule.get_ref() {
                            let rule_prefix = format!("allow[{}].", i + 1);
                            walk(text, rule, &rule_prefix, Table::Rule, found);
                        }
                    }
                }
                continue;
            }
            "env" if kind == Table::Top => Table::Env,
            "rlimits" => Table::Rlimits,
            "sandbox" if kind == Table::Top => Table::Sandbox,
            _ => continue,
        };
        if let DeValue::Table(inner) = value.get_ref() {
            walk(text, inner, &format!("{path}."), nested, found);
        }
    }
}

/// What an unknown key `name` of table `kind` probably meant: the tables that know it, or
/// else the nearest key `kind` knows, if one is close enough.
fn hint(name: &str, kind: Table) -> Option<String> {
    let homes: Vec<&str> =
        Table::ALL.into_iter().filter(|table| table.known().contains(&name)).map(Table::place).collect();
    if !homes.is_empty() {
        return Some(format!("`{name}` belongs {}, not {}", homes.join(" or "), kind.place()));
    }
    nearest(name, kind.known()).map(|known| format!("did you mean `{known}`?"))
}

/// The key of `known` nearest to `name`, if at most a third of `name`'s characters (at least
/// one) must change to reach it; the first such key on a tie.
fn nearest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let most = (name.chars().count() / 3).max(1);
    known
        .iter()
        .map(|&key| (distance(name, key), key))
        .filter(|&(d, _)| d <= most)
        .min_by_key(|&(d, _)| d)
        .map(|(_, key)| key)
}

/// The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of
/// two neighbouring characters, each counting 1 (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two rows back (for swaps), the previous row, the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1).min(current[j - 1] + 1).min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = current[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The field names a derived `Deserialize` of a struct expects.
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that only records the field list of the struct asked for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field names recorded")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self
    }
}

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_come_from_the_types() {
        assert!(fields_of::<PolicyFile>().contains(&"max_children"));
        assert!(fields_of::<AllowEntry>().contains(&"program"));
        assert!(fields_of::<EnvSection>().contains(&"passthrough"));
        assert!(fields_of::<RlimitsEntry>().contains(&"cpu_seconds"));
    }

    #[test]
    fn every_unknown_key_with_its_line() {
        let text =
            "timout = 5\n[[allow]]\nprogram = \"x\"\nflags = []\nrlimits = { cpu = 1 }\n[env]\npasthrough = []\n";
        let found: Vec<(String, usize)> = keys(text).into_iter().map(|key| (key.key, key.line)).collect();
        assert_eq!(
            found,
            [
                ("timout".to_owned(), 1),
                ("allow[1].flags".to_owned(), 4),
                ("allow[1].rlimits.cpu".to_owned(), 5),
                ("env.pasthrough".to_owned(), 7),
            ]
        );
        assert!(keys("max_children = 2\n").is_empty());
        assert!(keys("not toml [").is_empty());
    }

    #[test]
    fn a_key_another_table_knows_is_said_to_belong_there() {
        assert_eq!(
            hint("allow_ld_env", Table::Env).unwrap(),
            "`allow_ld_env` belongs at the top level, not in `[env]`"
        );
        assert_eq!(
            hint("timeout", Table::Sandbox).unwrap(),
            "`timeout` belongs at the top level or in an `[[allow]]` rule, not in `[sandbox]`"
        );
        assert_eq!(
            hint("cpu_seconds", Table::Top).unwrap(),
            "`cpu_seconds` belongs in `rlimits`, not at the top level"
        );
    }

    #[test]
    fn a_misspelt_key_gets_the_nearest_known_key_of_its_table() {
        assert_eq!(hint("timout", Table::Top).unwrap(), "did you mean `timeout`?");
        assert_eq!(hint("timeuot", Table::Rule).unwrap(), "did you mean `timeout`?");
        assert_eq!(hint("progam", Table::Rule).unwrap(), "did you mean `program`?");
        assert_eq!(hint("Deny", Table::Top).unwrap(), "did you mean `deny`?");
        // Nothing within a third of the name's length.
        assert_eq!(hint("flags", Table::Rule), None);
        assert_eq!(hint("cpu", Table::Rlimits), None);
    }

    #[test]
    fn edit_distances() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("timout", "timeout"), 1);
        assert_eq!(distance("timeuot", "timeout"), 1, "a swap of neighbours is one edit");
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("flags", "args"), 3);
        assert_eq!(distance("délai", "delai"), 1, "characters, not bytes");
    }
}

//! Every unknown key of a policy file, with its line: serde stops at the first one.
//!
//! The known keys are the fields of the file's own `Deserialize` types, read from what their
//! derived `deserialize` passes to `deserialize_struct`, so this list cannot drift from them.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Visitor};
use toml::de::{DeTable, DeValue};

use super::{AllowEntry, EnvSection, PolicyFile, RlimitsEntry, SandboxSection, line_of};

/// The unknown keys of `text`, as `(dotted path, line)`, in file order; empty if there are
/// none or `text` is not TOML (the parser's own error says why).
pub(super) fn keys(text: &str) -> Vec<(String, usize)> {
    let Ok(root) = DeTable::parse(text) else { return Vec::new() };
    let mut found = Vec::new();
    walk(text, root.get_ref(), "", fields_of::<PolicyFile>(), &mut found);
    found.sort_by_key(|&(_, line)| line);
    found
}

fn walk(text: &str, table: &DeTable<'_>, prefix: &str, known: &[&str], found: &mut Vec<(String, usize)>) {
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        let path = format!("{prefix}{name}");
        if !known.contains(&name) {
            found.push((path, line_of(text, key.span().start)));
            continue;
        }
        let nested = match name {
            "allow" if prefix.is_empty() => {
                if let DeValue::Array(rules) = value.get_ref() {
                    for (i, rule) in rules.iter().enumerate() {
                        if let DeValue::Table(rule) = rule.get_ref() {
                            let rule_prefix = format!("allow[{}].", i + 1);
                            walk(text, rule, &rule_prefix, fields_of::<AllowEntry>(), found);
                        }
                    }
                }
                continue;
            }
            "env" if prefix.is_empty() => fields_of::<EnvSection>(),
            "rlimits" => fields_of::<RlimitsEntry>(),
            "sandbox" if prefix.is_empty() => fields_of::<SandboxSection>(),
            _ => continue,
        };
        if let DeValue::Table(inner) = value.get_ref() {
            walk(text, inner, &format!("{path}."), nested, found);
        }
    }
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
        assert_eq!(
            keys(text),
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
}

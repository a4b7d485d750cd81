//! Argument patterns: which argument lists an allow rule accepts.
//!
//! A rule's `args` is a list of alternatives; each alternative is a list of element patterns,
//! matched one-to-one against the arguments after the program name. In an element:
//! `*` matches any run of characters (also empty), `?` exactly one character (any character:
//! newlines and shell metacharacters too), `[...]` one character of a class (`[0-9a-f]`,
//! `[!@-]` for any character but `@` and `-`; `]` first in the class is literal, `-` first or
//! last is literal), `\` makes the next character literal, and everything else matches itself.
//! An element that is exactly `**` and comes last matches any number (also zero) of further
//! arguments. Arguments that are not valid UTF-8 only match `*` and `**`.

use std::ffi::OsString;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    AnyOne,
    AnyRun,
    Class(Class),
}

/// A bracket expression: one character in (or, negated, not in) a set of ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Class {
    negated: bool,
    ranges: Vec<(char, char)>,
}

impl Class {
    /// Parses the class after its `[`, consuming the closing `]`.
    fn parse(text: &str, chars: &mut std::str::Chars<'_>) -> Result<Self, String> {
        let unclosed = || format!("`{text}` has a `[` without its `]`");
        let mut rest = chars.clone();
        let negated = matches!(rest.next(), Some('!' | '^'));
        if negated {
            chars.next();
        }
        // Each member with whether it was escaped: an escaped `-` is the character, never a range.
        let mut members: Vec<(char, bool)> = Vec::new();
        let mut first = true;
        loop {
            let c = chars.next().ok_or_else(unclosed)?;
            let member = match c {
                ']' if !first => break,
                '\\' => (chars.next().ok_or_else(unclosed)?, true),
                c => (c, false),
            };
            first = false;
            members.push(member);
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < members.len() {
            if i + 2 < members.len() && members[i + 1] == ('-', false) {
                let (lo, hi) = (members[i].0, members[i + 2].0);
                if lo > hi {
                    return Err(format!("`{text}` has the empty range `{lo}-{hi}`"));
                }
                ranges.push((lo, hi));
                i += 3;
            } else {
                ranges.push((members[i].0, members[i].0));
                i += 1;
            }
        }
        Ok(Self { negated, ranges })
    }

    fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)) != self.negated
    }
}

/// One element pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Glob(Vec<Token>);

impl Glob {
    fn parse(text: &str) -> Result<Self, String> {
        let mut tokens = Vec::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '*' => Token::AnyRun,
                '?' => Token::AnyOne,
                '[' => Token::Class(Class::parse(text, &mut chars)?),
                '\\' => match chars.next() {
                    Some(escaped) => Token::Char(escaped),
                    None => return Err(format!("`{text}` ends with a lone `\\`")),
                },
                c => Token::Char(c),
            });
        }
        Ok(Self(tokens))
    }

    /// The text this element matches, if it matches exactly one.
    fn literal(&self) -> Option<String> {
        self.0.iter().map(|t| if let Token::Char(c) = t { Some(*c) } else { None }).collect()
    }

    /// Whether an argument this element accepts, and the rule does not spell out, may start
    /// with one of `starts`: the element is not a fixed text, and its first character may be
    /// one of them (a wildcard, a class holding one, or the character itself, escaped or not:
    /// `--o*` admits `--output=FILE`).
    fn admits_unwritten(&self, starts: &[char]) -> bool {
        if self.literal().is_some() {
            return false;
        }
        match self.0.first() {
            None => false,
            Some(Token::Char(c)) => starts.contains(c),
            Some(Token::AnyRun | Token::AnyOne) => true,
            Some(Token::Class(class)) => starts.iter().any(|&c| class.contains(c)),
        }
    }

    /// Whether this element has an open wildcard: `*`, `?` or a negated class.
    fn is_open(&self) -> bool {
        self.0.iter().any(|t| match t {
            Token::Char(_) => false,
            Token::AnyOne | Token::AnyRun => true,
            Token::Class(class) => class.negated,
        })
    }

    fn matches(&self, arg: &OsString) -> bool {
        let Some(arg) = arg.to_str() else {
            // Only `*` (and `**`): not the empty element, which matches the empty argument alone.
            return !self.0.is_empty() && self.0.iter().all(|t| *t == Token::AnyRun);
        };
        let text: Vec<char> = arg.chars().collect();
        let tokens = &self.0;
        let (mut t, mut i) = (0, 0);
        // Where the last `*` was and which character it is currently extended to.
        let mut backtrack: Option<(usize, usize)> = None;
        while i < text.len() {
            match tokens.get(t) {
                Some(Token::Char(c)) if *c == text[i] => {
                    t += 1;
                    i += 1;
                }
                Some(Token::AnyOne) => {
                    t += 1;
                    i += 1;
                }
                Some(Token::Class(class)) if class.contains(text[i]) => {
                    t += 1;
                    i += 1;
                }
                Some(Token::AnyRun) => {
                    backtrack = Some((t, i));
                    t += 1;
                }
                _ => match backtrack {
                    Some((star, from)) => {
                        t = star + 1;
                        i = from + 1;
                        backtrack = Some((star, from + 1));
                    }
                    None => return false,
                },
            }
        }
        tokens[t..].iter().all(|tok| *tok == Token::AnyRun)
    }
}

/// One accepted shape of an argument list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgsPattern {
    elements: Vec<Glob>,
    /// Ends with `**`: further arguments are accepted.
    rest: bool,
}

impl ArgsPattern {
    pub(crate) fn parse(elements: &[String]) -> Result<Self, String> {
        let mut globs = Vec::with_capacity(elements.len());
        let mut rest = false;
        for (i, element) in elements.iter().enumerate() {
            if element == "**" {
                if i + 1 != elements.len() {
                    return Err("`**` may only be the last element".to_owned());
                }
                rest = true;
            } else {
                globs.push(Glob::parse(element)?);
            }
        }
        Ok(Self { elements: globs, rest })
    }

    /// Whether some argument this pattern accepts may start with one of `starts` (an option
    /// or `@file` the rule's author did not write), or any further arguments (`**`).
    pub(crate) fn admits_leading(&self, starts: &[char]) -> bool {
        self.rest || self.elements.iter().any(|glob| glob.admits_unwritten(starts))
    }

    /// Which of `candidates` (options as an argument spells them) some element that is not a
    /// fixed text accepts; all of them after `**`.
    pub(crate) fn admitted<'a>(&self, candidates: &[&'a str]) -> Vec<&'a str> {
        candidates
            .iter()
            .copied()
            .filter(|candidate| {
                self.rest
                    || self
                        .elements
                        .iter()
                        .any(|glob| glob.literal().is_none() && glob.matches(&OsString::from(candidate)))
            })
            .collect()
    }

    /// Whether any element has an open wildcard: `*`, `?`, a negated class, or `**`. (A
    /// class that lists its characters, such as `[0-9]`, is the rule's own choice.)
    pub(crate) fn has_open_wildcard(&self) -> bool {
        self.rest || self.elements.iter().any(Glob::is_open)
    }

    /// Each element's fixed text, or `None` where it is a pattern; and whether `**` follows.
    pub(crate) fn literals(&self) -> (Vec<Option<String>>, bool) {
        (self.elements.iter().map(Glob::literal).collect(), self.rest)
    }

    pub(crate) fn matches(&self, args: &[OsString]) -> bool {
        let count_ok = if self.rest { args.len() >= self.elements.len() } else { args.len() == self.elements.len() };
        count_ok && self.elements.iter().zip(args).all(|(glob, arg)| glob.matches(arg))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    use super::*;

    fn pattern(parts: &[&str]) -> ArgsPattern {
        ArgsPattern::parse(&parts.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    fn args(parts: &[&str]) -> Vec<OsString> {
        parts.iter().map(OsString::from).collect()
    }

    #[test]
    fn literals_match_exactly() {
        let p = pattern(&["status", "--short"]);
        assert!(p.matches(&args(&["status", "--short"])));
        assert!(!p.matches(&args(&["status"])));
        assert!(!p.matches(&args(&["status", "--short", "x"])));
        assert!(!p.matches(&args(&["status", "--shorter"])));
    }

    #[test]
    fn star_and_question_mark() {
        let p = pattern(&["--format=*", "v?.*"]);
        assert!(p.matches(&args(&["--format=", "v1."])));
        assert!(p.matches(&args(&["--format=json", "v2.10"])));
        assert!(!p.matches(&args(&["--format", "v2.10"])));
        assert!(!p.matches(&args(&["--format=x", "v10.1"])));
        let p = pattern(&["*a*b*"]);
        assert!(p.matches(&args(&["xxaxxbxx"])));
        assert!(p.matches(&args(&["ab"])));
        assert!(!p.matches(&args(&["ba"])));
    }

    #[test]
    fn double_star_accepts_the_rest() {
        let p = pattern(&["log", "**"]);
        assert!(p.matches(&args(&["log"])));
        assert!(p.matches(&args(&["log", "-n", "3"])));
        assert!(!p.matches(&args(&["push"])));
        assert!(ArgsPattern::parse(&["**".to_owned(), "x".to_owned()]).is_err());
    }

    #[test]
    fn escapes_make_wildcards_literal() {
        let p = pattern(&["\\*"]);
        assert!(p.matches(&args(&["*"])));
        assert!(!p.matches(&args(&["x"])));
        assert!(ArgsPattern::parse(&["a\\".to_owned()]).is_err());
    }

    #[test]
    fn non_utf8_only_matches_wildcards() {
        let bad = OsString::from_vec(vec![0xff, b'a']);
        assert!(pattern(&["*"]).matches(std::slice::from_ref(&bad)));
        assert!(pattern(&["**"]).matches(std::slice::from_ref(&bad)));
        assert!(!pattern(&["?a"]).matches(std::slice::from_ref(&bad)));
        // The empty element matches the empty argument alone (found by fuzzing: it matched
        // every argument that is not UTF-8).
        assert!(!pattern(&[""]).matches(std::slice::from_ref(&bad)));
        assert!(pattern(&[""]).matches(&args(&[""])));
        assert!(!pattern(&["*", ""]).matches(&[bad.clone(), bad]));
    }

    /// `\-` in a class is the character `-`, never a range (found by fuzzing: `[a\-z]` meant
    /// `a` to `z`, and `[_\-a-z]*` admitted a backtick).
    #[test]
    fn an_escaped_dash_in_a_class_is_a_member_not_a_range() {
        let p = pattern(&["[a\\-z]"]);
        for member in ["a", "-", "z"] {
            assert!(p.matches(&args(&[member])), "{member}");
        }
        assert!(!p.matches(&args(&["m"])));
        let ident = pattern(&["[_\\-a-z]*"]);
        for ok in ["bar", "foo-bar", "-n", "_x"] {
            assert!(ident.matches(&args(&[ok])), "{ok}");
        }
        assert!(!ident.matches(&args(&["`id`"])));
        assert!(ArgsPattern::parse(&["[x\\-a]".to_owned()]).is_ok());
    }

    /// Bracket classes match one character of a set, a range or a negated set, take `]` and `-`
    /// as members, and are an error when malformed.
    #[test]
    fn character_classes_match_sets_ranges_and_negations() {
        // The doc's date pattern, which with `?` accepted `$(id-;;-|x`.
        let date = pattern(&["[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"]);
        assert!(date.matches(&args(&["2026-11-30"])));
        assert!(!date.matches(&args(&["$(id-;;-|x"])));
        assert!(!date.matches(&args(&["2026-11-3"])));
        // A compiler input that is no option and no `@file`.
        let input = pattern(&["[!@-]*.c"]);
        assert!(input.matches(&args(&["ok.c"])));
        assert!(!input.matches(&args(&["@evil.c"])));
        assert!(!input.matches(&args(&["-wrapper.c"])));
        let p = pattern(&["[]a-]", "[a\\]]", "[^x]"]);
        assert!(p.matches(&args(&["]", "]", "y"])));
        assert!(p.matches(&args(&["-", "a", "z"])));
        assert!(!p.matches(&args(&["b", "a", "z"])));
        assert!(!p.matches(&args(&["a", "a", "x"])));
        for bad in ["[abc", "[", "[!", "[z-a]", "[a\\"] {
            assert!(ArgsPattern::parse(&[bad.to_owned()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn question_mark_is_one_character_not_one_byte() {
        assert!(pattern(&["?"]).matches(&args(&["é"])));
    }
}

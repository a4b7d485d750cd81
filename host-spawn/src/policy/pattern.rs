//! Argument patterns: which argument lists an allow rule accepts.
//!
//! A rule's `args` is a list of alternatives; each alternative is a list of element patterns,
//! matched one-to-one against the arguments after the program name. In an element:
//! `*` matches any run of characters (also empty), `?` exactly one character, `\` makes the
//! next character literal, and everything else matches itself. An element that is exactly
//! `**` and comes last matches any number (also zero) of further arguments. Arguments that
//! are not valid UTF-8 only match `*` and `**`.

use std::ffi::OsString;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    AnyOne,
    AnyRun,
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
                '\\' => match chars.next() {
                    Some(escaped) => Token::Char(escaped),
                    None => return Err(format!("`{text}` ends with a lone `\\`")),
                },
                c => Token::Char(c),
            });
        }
        Ok(Self(tokens))
    }

    fn matches(&self, arg: &OsString) -> bool {
        let Some(arg) = arg.to_str() else {
            return self.0.iter().all(|&t| t == Token::AnyRun);
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
        tokens[t..].iter().all(|&tok| tok == Token::AnyRun)
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
        assert!(!pattern(&["?a"]).matches(&[bad]));
    }

    #[test]
    fn question_mark_is_one_character_not_one_byte() {
        assert!(pattern(&["?"]).matches(&args(&["é"])));
    }
}

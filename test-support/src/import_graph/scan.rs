//! The one reader of a source file: its tokens (comments, strings and character literals are
//! none of them, so a path in a comment or a brace in a string does not count), and from them
//! what the file declares and names: its `mod name;` lines and every module path it uses.

/// One token of Rust source, as far as module paths need: a word (identifier, keyword or
/// number), `::`, a string literal's contents, or any other character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    PathSep,
    Str(String),
    Punct(char),
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of `text`, comments and lifetimes left out.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = at(i) {
        let next = at(i + 1);
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if at(i) == Some('/') && at(i + 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if at(i) == Some('*') && at(i + 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            let (text, end) = quoted(&chars, i + 1);
            out.push(Token::Str(text));
            i = end;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}') or a lifetime ('a, 'static).
            if next == Some('\\') {
                i += 2;
                while at(i).is_some_and(|c| c != '\'') {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == Some('\'') {
                i += 3;
            } else {
                i += 1;
                while at(i).is_some_and(is_ident) {
                    i += 1;
                }
            }
        } else if is_ident(c) {
            let start = i;
            while at(i).is_some_and(is_ident) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // String prefixes: b"…", c"…", r"…", r#"…"#, br"…", cr#"…"#; and raw identifiers.
            let raw = matches!(word.as_str(), "r" | "br" | "cr");
            if matches!(word.as_str(), "b" | "c") && at(i) == Some('"') {
                let (text, end) = quoted(&chars, i + 1);
                out.push(Token::Str(text));
                i = end;
            } else if word == "b" && at(i) == Some('\'') {
                // A byte literal: b'x', b'\n'.
                i += 1;
                if at(i) == Some('\\') {
                    i += 1;
                }
                i += 1;
                while at(i).is_some_and(|c| c != '\'') {
                    i += 1;
                }
                i += 1;
            } else if raw && (at(i) == Some('"') || at(i) == Some('#')) {
                let mut j = i;
                let mut hashes = 0;
                while at(j) == Some('#') {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != Some('"') {
                    // `r#type`: a raw identifier.
                    let start = j;
                    while at(j).is_some_and(is_ident) {
                        j += 1;
                    }
                    out.push(Token::Word(chars[start..j].iter().collect()));
                    i = j;
                    continue;
                }
                let start = j + 1;
                j = start;
                while j < chars.len() && !(chars[j] == '"' && (0..hashes).all(|h| at(j + 1 + h) == Some('#'))) {
                    j += 1;
                }
                out.push(Token::Str(chars[start..j.min(chars.len())].iter().collect()));
                i = j + 1 + hashes;
            } else {
                out.push(Token::Word(word));
            }
        } else if c == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// The contents of the string literal whose text starts at `start`, and where it ends.
fn quoted(chars: &[char], start: usize) -> (String, usize) {
    let mut text = String::new();
    let mut i = start;
    while let Some(&c) = chars.get(i) {
        if c == '"' {
            return (text, i + 1);
        }
        if c == '\\' {
            text.extend(chars.get(i..i + 2).unwrap_or_default());
            i += 2;
        } else {
            text.push(c);
            i += 1;
        }
    }
    (text, i)
}

/// A `mod name;` line: a module whose text is in a file of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModLine {
    /// The module's name.
    pub(crate) name: String,
    /// The inline modules (`mod outer { … }`) the line sits in, outermost first.
    pub(crate) inside: Vec<String>,
    /// Its `#[path = "…"]` attribute, if any.
    pub(crate) path: Option<String>,
}

/// Where a path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// At the crate root: `crate::…`, `$crate::…`, or `super::…` and `self::…` resolved
    /// against where they stand.
    Root,
    /// At the module the `use` stands in (`use child::Item;`), which may as well be another
    /// crate's name (`use std::fmt;`): only the module tree can tell.
    Here,
}

/// A module path the file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathUse {
    /// Where its segments start.
    pub(crate) start: Start,
    /// Its segments; the last may be an item rather than a module.
    pub(crate) segments: Vec<String>,
    /// The module it stands in, from the crate root (the file's module and the inline modules
    /// around it).
    pub(crate) scope: Vec<String>,
    /// For a path of a `use` item, the name it brings into `scope` (its last segment, or what
    /// follows `as`); `None` for a glob or a path outside `use`.
    pub(crate) binds: Option<String>,
}

/// What a file declares and names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Its `mod name;` lines.
    pub(crate) mods: Vec<ModLine>,
    /// Every path it names that starts at the crate root (`crate::`, `super::`, `self::`), and
    /// every path of its `use` items.
    pub(crate) paths: Vec<PathUse>,
}

/// Reads `text`, the file of the module at `module` (`["abi", "host"]` for `abi/host.rs`, `[]`
/// for the crate root).
pub(crate) fn scan(text: &str, module: &[String]) -> Scan {
    Scanner { tokens: tokens(text), module, inline: Vec::new(), out: Scan::default() }.run()
}

struct Scanner<'a> {
    tokens: Vec<Token>,
    module: &'a [String],
    /// The inline modules open at this point: each name and the brace depth it closes at.
    inline: Vec<(String, usize)>,
    out: Scan,
}

impl Scanner<'_> {
    fn word(&self, i: usize) -> Option<&str> {
        match self.tokens.get(i) {
            Some(Token::Word(word)) => Some(word),
            _ => None,
        }
    }

    fn is(&self, i: usize, token: &Token) -> bool {
        self.tokens.get(i) == Some(token)
    }

    /// The module that code at this point stands in.
    fn scope(&self) -> Vec<String> {
        self.module.iter().cloned().chain(self.inline.iter().map(|(name, _)| name.clone())).collect()
    }

    fn run(mut self) -> Scan {
        let mut depth = 0usize;
        let mut path_attribute: Option<String> = None;
        let mut i = 0;
        while i < self.tokens.len() {
            match &self.tokens[i] {
                Token::Punct('{') => {
                    depth += 1;
                    path_attribute = None;
                    i += 1;
                }
                Token::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if self.inline.last().is_some_and(|(_, closes)| *closes == depth) {
                        self.inline.pop();
                    }
                    path_attribute = None;
                    i += 1;
                }
                Token::Punct(';') => {
                    path_attribute = None;
                    i += 1;
                }
                Token::Punct('#') => {
                    // An attribute: `#[path = "…"]` is kept for the `mod` line that follows.
                    let open = if self.is(i + 1, &Token::Punct('!')) { i + 2 } else { i + 1 };
                    if !self.is(open, &Token::Punct('[')) {
                        i += 1;
                        continue;
                    }
                    let close = self.matching(open);
                    if let (Some("path"), Some(Token::Punct('=')), Some(Token::Str(path)), true) =
                        (self.word(open + 1), self.tokens.get(open + 2), self.tokens.get(open + 3), close == open + 4)
                    {
                        path_attribute = Some(path.clone());
                    }
                    i = close + 1;
                }
                Token::Word(word) => {
                    let after_sep = i > 0 && self.is(i - 1, &Token::PathSep);
                    match word.as_str() {
                        "mod" => {
                            if let Some(name) = self.word(i + 1).map(str::to_owned) {
                                if self.is(i + 2, &Token::Punct(';')) {
                                    let inside = self.inline.iter().map(|(name, _)| name.clone()).collect();
                                    self.out.mods.push(ModLine { name, inside, path: path_attribute.take() });
                                } else if self.is(i + 2, &Token::Punct('{')) {
                                    self.inline.push((name, depth));
                                }
                            }
                            i += 2;
                        }
                        "use" => i = self.use_item(i + 1),
                        "crate" | "super" | "self" if !after_sep && self.is(i + 1, &Token::PathSep) => {
                            // `pub(in crate::a)` is a visibility, not a use.
                            let visibility =
                                i >= 2 && self.word(i - 1) == Some("in") && self.is(i - 2, &Token::Punct('('));
                            let mut paths = Vec::new();
                            let end = match self.base(i) {
                                Some((base, at)) => self.tree(at, base, false, &mut paths),
                                None => i + 1,
                            };
                            if !visibility {
                                self.push(Start::Root, paths);
                            }
                            i = end.max(i + 1);
                        }
                        _ => i += 1,
                    }
                }
                _ => i += 1,
            }
        }
        self.out
    }

    /// The index of the bracket that closes the one at `open`.
    fn matching(&self, open: usize) -> usize {
        let mut depth = 0;
        for (i, token) in self.tokens.iter().enumerate().skip(open) {
            match token {
                Token::Punct('[' | '(' | '{') => depth += 1,
                Token::Punct(']' | ')' | '}') => {
                    depth -= 1;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            }
        }
        self.tokens.len()
    }

    /// The module that `crate::`, `self::` or a run of `super::` at `i` names, from the crate
    /// root, and the index of the segment after it; `None` when the `super`s climb past the
    /// crate root.
    fn base(&self, mut i: usize) -> Option<(Vec<String>, usize)> {
        let mut scope = self.scope();
        match self.word(i) {
            Some("crate") => return Some((Vec::new(), i + 2)),
            Some("self") => return Some((scope, i + 2)),
            _ => {}
        }
        while self.word(i) == Some("super") && self.is(i + 1, &Token::PathSep) {
            scope.pop()?;
            i += 2;
        }
        Some((scope, i))
    }

    /// A `use` item starting at `i`; the index after it.
    fn use_item(&mut self, i: usize) -> usize {
        let mut paths = Vec::new();
        let (start, end) = match self.word(i) {
            Some("crate" | "super" | "self") if self.is(i + 1, &Token::PathSep) => match self.base(i) {
                Some((base, at)) => (Start::Root, self.tree(at, base, true, &mut paths)),
                None => return i + 1,
            },
            // `use ::std::…` names another crate.
            _ if self.is(i, &Token::PathSep) => return i + 1,
            _ => (Start::Here, self.tree(i, Vec::new(), true, &mut paths)),
        };
        self.push(start, paths);
        end
    }

    fn push(&mut self, start: Start, paths: Vec<(Vec<String>, Option<String>)>) {
        let scope = self.scope();
        for (segments, binds) in paths {
            self.out.paths.push(PathUse { start: start.clone(), segments, scope: scope.clone(), binds });
        }
    }

    /// Every path of the tree at `i` (`a::b`, `a::{b, c::d as e, self, *}`), each appended to
    /// `prefix`, with the name it binds where `binding` (a `use` tree); the index after it.
    fn tree(
        &self,
        mut i: usize,
        prefix: Vec<String>,
        binding: bool,
        out: &mut Vec<(Vec<String>, Option<String>)>,
    ) -> usize {
        let mut segments = prefix;
        loop {
            if self.is(i, &Token::Punct('{')) {
                i += 1;
                loop {
                    match self.tokens.get(i) {
                        None => return i,
                        Some(Token::Punct('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        Some(Token::Word(word)) if word == "self" => {
                            let bound = segments.last().cloned();
                            i = self.alias(i + 1, bound, binding, segments.clone(), out);
                        }
                        Some(Token::Word(_) | Token::Punct('{')) => i = self.tree(i, segments.clone(), binding, out),
                        Some(_) => i += 1,
                    }
                }
            }
            if self.is(i, &Token::Punct('*')) {
                out.push((segments, None));
                return i + 1;
            }
            let Some(word) = self.word(i) else {
                out.push((segments, None));
                return i;
            };
            segments.push(word.to_owned());
            i += 1;
            if !self.is(i, &Token::PathSep) {
                let bound = segments.last().cloned();
                return self.alias(i, bound, binding, segments, out);
            }
            i += 1;
        }
    }

    /// Records `segments` as one path of a tree, bound to `bound` or to what an `as` at `i`
    /// renames it to; the index after it.
    fn alias(
        &self,
        mut i: usize,
        mut bound: Option<String>,
        binding: bool,
        segments: Vec<String>,
        out: &mut Vec<(Vec<String>, Option<String>)>,
    ) -> usize {
        if self.word(i) == Some("as") {
            bound = self.word(i + 1).filter(|name| *name != "_").map(str::to_owned);
            i += 2;
        }
        out.push((segments, bound.filter(|_| binding)));
        i
    }
}

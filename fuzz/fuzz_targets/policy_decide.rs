//! The spawn policy's decision, differentially: a policy built with the builder API (allow and
//! deny rules over a small fixed set of this host's programs, by name and by path, with argument
//! patterns, environment and working-directory rules, audit-only mode) and a request (program,
//! arguments, environment, working directory, limits) are decided by `Policy::explain` and by a
//! small reference model written here from `docs/policy.md` alone (the decision order of "How
//! a request is decided", "Audit-only mode", "Argument patterns", "Errors"). They must agree on
//! whether the policy is valid; on the decision (allow, deny, would-deny, error); on the rule
//! that decided; and, for a request that would run, on the canonical path, `argv`, environment,
//! working directory, timeout and output limit. The explanation must hold together (a refusal
//! carries nothing of a child; a denial of a request that no allow rule names as written shows
//! neither the path it resolved to nor that path in its reason), and for requests that resolve
//! to `/usr/bin/true` a bare `Spawner` (sandbox off) must decide as `explain` does, with the
//! same message. No panic anywhere in the library.
//!
//! The model uses only `std` (realpath, stat) and the text of the docs; it never calls the
//! library. Corners where the docs leave the answer open are `Unspecified` and not compared;
//! corners where the docs and the code disagree are left out too, each with a comment.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use wrt_host_spawn::{Command, Decision, Explanation, Policy, ProgramRule, SpawnError, Spawner};
use wrt_text::error_chain;

// ---------------------------------------------------------------------------------------------
// The input: a policy and a request over small fixed alphabets.
// ---------------------------------------------------------------------------------------------

/// Programs for rules and requests: real ones on this Debian host (by bare name, by path,
/// through the `/bin -> usr/bin` symlink, `sh -> dash`, `perl`/`perl5.36.0` hard links, `git`
/// both in `/usr/local/bin` and `/usr/bin`, `/usr/local/bin/git` with many hard links), and
/// names that do not exist, are not executable, are directories or are relative.
const PROGRAMS: &[&str] = &[
    "true",
    "/usr/bin/true",
    "/bin/true",
    "cat",
    "/usr/bin/cat",
    "ls",
    "/usr/bin/ls",
    "env",
    "sh",
    "/bin/sh",
    "/usr/bin/dash",
    "dash",
    "perl",
    "/usr/bin/perl5.36.0",
    "git",
    "/usr/bin/git",
    "/usr/local/bin/git",
    "/usr/bin/../bin/sh",
];

/// Programs that no rule can name (not found, relative, empty, not executable): rarer, since
/// any of them makes the policy invalid.
const BAD_PROGRAMS: &[&str] = &[
    "nonexistent-prog",
    "/nonexistent",
    "./true",
    "bin/true",
    "",
    "/usr/bin",
    "LICENSE.txt",
    "/usr/local/bin/LICENSE.txt",
    "..",
    "passwd",
];

/// Programs only requests use, on top of [`PROGRAMS`] and [`BAD_PROGRAMS`].
const REQUEST_PROGRAMS: &[&[u8]] = &[
    b"../x",
    b"/etc/passwd",
    b"/",
    b"//usr/bin/true",
    b"/usr/bin/true/",
    b".",
    b"tru\0e",
    b"/root",
    b"/usr/bin/perl",
    b"git-upload-pack",
    b"/usr/bin/\xff",
    b"/usr/bin/./true",
];

const SEARCH_PATHS: &[&[&str]] = &[
    &["/usr/local/bin", "/usr/bin", "/bin"],
    &["/usr/bin"],
    &["/bin", "/usr/local/bin"],
    &["/nonexistent", "/usr/bin", "/usr/local/bin"],
    &[],
    &["usr/bin"],
    &["/etc", "/usr/bin"],
    &["/usr/bin", "/usr/local/bin"],
];

const ENV_NAMES: &[&[u8]] =
    &[b"HOME", b"LANG", b"FOO", b"PATH", b"ld_preload", b"LD_PRELOAD", b"DYLD_INSERT_LIBRARIES", b"LD_"];

/// Names no policy may list (glibc's unsafe ones, malformed ones); requests may send them.
const BAD_ENV_NAMES: &[&[u8]] = &[b"TMPDIR", b"GLIBC_TUNABLES", b"", b"A=B", b"N\0"];

const ENV_VALUES: &[&[u8]] = &[b"1", b"", b"/x", b"a\0b"];

/// Names and values of a rule's own `env` (well formed: the docs do not say what a bad one is).
const RULE_ENV_NAMES: &[&str] = &["PATH", "FOO", "LANG"];
const RULE_ENV_VALUES: &[&str] = &["/usr/bin:/bin", "rule", ""];

const CWDS: &[&[u8]] = &[
    b"/",
    b"/tmp",
    b"/tmp/..",
    b"/usr",
    b"/usr/bin",
    b"/bin",
    b"/usr/bin/true",
    b"/nonexistent",
    b"tmp",
    b"",
    b"/usr/../tmp",
    b"/srv",
    b"/var/tmp",
    b"/usr/lib",
    b"/tmp/\0",
    b"/usrx",
    b"//tmp",
    b"/tmp/",
];

const CWD_ALLOW: &[&str] = &["/tmp", "/usr", "/bin", "/usr/bin/../lib", "/", "/var/tmp"];
const BAD_CWD_ALLOW: &[&str] = &["/nonexistent", "tmp", "/usr/bin/true"];

/// `default_cwd`: existing directories, and a relative one (an error). The docs do not say
/// whether a missing or non-directory `default_cwd` is an error, so none is generated.
const DEFAULT_CWDS: &[&str] = &["/", "/tmp", "/usr/bin", "/bin"];
const BAD_DEFAULT_CWDS: &[&str] = &["tmp"];

const ARGS: &[&[u8]] = &[
    b"",
    b"a",
    b"b",
    b"c",
    b"n",
    b"x",
    b"z",
    b"an",
    b"-n",
    b"x.c",
    b"@x.c",
    b"-",
    b"*",
    b"?",
    b"[",
    b"]",
    b"\\",
    "é".as_bytes(),
    b"\n",
    b"$(id)",
    b"a b",
    b"^",
    b"!",
    b"\xff",
    b"a\xff",
    b"a\0",
];

/// Pattern elements written by hand: the docs' examples and the parser's corners.
const RAW_ELEMENTS: &[&str] = &[
    "", "*", "**", "***", "?", "[abc", "[", "[!", "[!]", "[]]", "[!]]", "[]a-]", "[a\\-z]", "[a-c-e]", "[z-a]",
    "[--a]", "a\\", "\\*", "\\\\", "[\\]]", "[^a]", "[!@-]*.c", "-n", "[a-z]*", "?*", "é", "[a-]", "[-a]", "[!-a]",
    "[\\!a]", "[a\\]-c]",
];

const LIT_CHARS: &[char] = &['a', 'n', '-', 'x', '.', 'c', '@', 'é', '$', ' ', '\n', ']', '!', '^'];
const ESC_CHARS: &[char] = &['*', '?', '[', ']', '\\', '-', 'a', '!'];
const CLASS_CHARS: &[char] = &['a', 'c', 'n', 'x', 'z', '-', '@', '.', 'é', ']', '[', '!', '^', '*', '?'];
const RANGE_CHARS: &[char] = &['a', 'b', 'c', 'n', 'x', 'z', '0', '9', '-', 'é'];

#[derive(Debug, Clone, Copy)]
enum PolicyTimeout {
    Default,
    None,
    Zero,
    Secs(u64),
}

#[derive(Debug, Clone, Copy)]
enum RuleTimeout {
    Inherit,
    None,
    Zero,
    Secs(u64),
}

#[derive(Debug)]
struct Rule {
    program: &'static str,
    args: Option<Vec<Vec<String>>>,
    env: Vec<(&'static str, &'static str)>,
    timeout: RuleTimeout,
    output_limit: Option<u64>,
}

struct Spec {
    search_path: &'static [&'static str],
    allow: Vec<Rule>,
    deny: Vec<&'static str>,
    passthrough: Vec<&'static [u8]>,
    env_allow: Vec<&'static [u8]>,
    allow_ld_env: bool,
    cwd_allow: Vec<&'static str>,
    default_cwd: Option<&'static str>,
    timeout: PolicyTimeout,
    output_limit: Option<u64>,
    audit_only: bool,
}

struct Request {
    program: Vec<u8>,
    args: Vec<Vec<u8>>,
    env: Vec<(Vec<u8>, Vec<u8>)>,
    cwd: Option<Vec<u8>>,
    timeout: Option<Duration>,
    output_limit: Option<u64>,
}

/// Bytes as `b"..."` in the debug output of a failing input.
struct B<'a>(&'a [u8]);

impl std::fmt::Debug for B<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

fn bs<'a>(list: impl IntoIterator<Item = &'a [u8]>) -> Vec<B<'a>> {
    list.into_iter().map(B).collect()
}

impl std::fmt::Debug for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spec")
            .field("search_path", &self.search_path)
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("passthrough", &bs(self.passthrough.iter().copied()))
            .field("env_allow", &bs(self.env_allow.iter().copied()))
            .field("allow_ld_env", &self.allow_ld_env)
            .field("cwd_allow", &self.cwd_allow)
            .field("default_cwd", &self.default_cwd)
            .field("timeout", &self.timeout)
            .field("output_limit", &self.output_limit)
            .field("audit_only", &self.audit_only)
            .finish()
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("program", &B(&self.program))
            .field("args", &bs(self.args.iter().map(Vec::as_slice)))
            .field("env", &self.env.iter().map(|(n, v)| (B(n), B(v))).collect::<Vec<_>>())
            .field("cwd", &self.cwd.as_deref().map(B))
            .field("timeout", &self.timeout)
            .field("output_limit", &self.output_limit)
            .finish()
    }
}

#[derive(Debug)]
struct Input {
    spec: Spec,
    request: Request,
    /// Also ask a real `Spawner` (only for requests resolving to `/usr/bin/true`).
    spawn: bool,
}

/// Mostly one of `common`, sometimes one of `rare`. (`ratio` is true when the input runs
/// out, so the common choice is the one taken then; likewise below.)
fn pick<T: Copy>(u: &mut Unstructured<'_>, common: &[T], rare: &[T]) -> arbitrary::Result<T> {
    if u.ratio(15, 16)? { u.choose(common).copied() } else { u.choose(rare).copied() }
}

fn up_to<'a, T>(
    u: &mut Unstructured<'a>,
    max: usize,
    f: impl FnMut(&mut Unstructured<'a>) -> arbitrary::Result<T>,
) -> arbitrary::Result<Vec<T>> {
    let mut f = f;
    let n = u.int_in_range(0..=max)?;
    (0..n).map(|_| f(u)).collect()
}

fn class(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    let mut s = String::from("[");
    match u.int_in_range(0..=3)? {
        0 => s.push('!'),
        1 => s.push('^'),
        _ => {}
    }
    for _ in 0..u.int_in_range(0..=3)? {
        match u.int_in_range(0..=3)? {
            0 | 1 => s.push(*u.choose(CLASS_CHARS)?),
            2 => {
                s.push('\\');
                s.push(*u.choose(ESC_CHARS)?);
            }
            _ => {
                s.push(*u.choose(RANGE_CHARS)?);
                s.push('-');
                s.push(*u.choose(RANGE_CHARS)?);
            }
        }
    }
    if u.ratio(7, 8)? {
        s.push(']');
    }
    Ok(s)
}

fn element(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    if !u.ratio(3, 4)? {
        return Ok((*u.choose(RAW_ELEMENTS)?).to_owned());
    }
    let mut s = String::new();
    for _ in 0..u.int_in_range(0..=4)? {
        match u.int_in_range(0..=7)? {
            0..=2 => s.push(*u.choose(LIT_CHARS)?),
            3 => s.push('*'),
            4 => s.push('?'),
            5 => {
                s.push('\\');
                s.push(*u.choose(ESC_CHARS)?);
            }
            _ => s.push_str(&class(u)?),
        }
    }
    Ok(s)
}

fn pattern(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<String>> {
    let mut elements = up_to(u, 3, element)?;
    if !u.ratio(3, 4)? {
        elements.push("**".to_owned());
    }
    Ok(elements)
}

fn rule(u: &mut Unstructured<'_>) -> arbitrary::Result<Rule> {
    Ok(Rule {
        program: pick(u, PROGRAMS, BAD_PROGRAMS)?,
        args: if u.arbitrary()? {
            Some({
                let mut lists = up_to(u, 2, pattern)?;
                lists.insert(0, pattern(u)?);
                lists
            })
        } else {
            None
        },
        env: up_to(u, 2, |u| Ok((*u.choose(RULE_ENV_NAMES)?, *u.choose(RULE_ENV_VALUES)?)))?,
        timeout: match u.int_in_range(0..=15)? {
            0 => RuleTimeout::None,
            1 => RuleTimeout::Zero,
            2 => RuleTimeout::Secs(2),
            3 => RuleTimeout::Secs(100),
            _ => RuleTimeout::Inherit,
        },
        output_limit: match u.int_in_range(0..=3)? {
            0 => Some(50),
            1 => Some(1 << 40),
            _ => None,
        },
    })
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let spec = Spec {
            search_path: if u.ratio(3, 4)? { SEARCH_PATHS[0] } else { u.choose(SEARCH_PATHS)? },
            allow: up_to(u, 3, rule)?,
            deny: up_to(u, 3, |u| pick(u, PROGRAMS, BAD_PROGRAMS))?,
            passthrough: up_to(u, 2, |u| pick(u, ENV_NAMES, BAD_ENV_NAMES))?,
            env_allow: up_to(u, 3, |u| pick(u, ENV_NAMES, BAD_ENV_NAMES))?,
            allow_ld_env: u.arbitrary()?,
            cwd_allow: up_to(u, 2, |u| pick(u, CWD_ALLOW, BAD_CWD_ALLOW))?,
            default_cwd: if u.arbitrary()? { Some(pick(u, DEFAULT_CWDS, BAD_DEFAULT_CWDS)?) } else { None },
            timeout: match u.int_in_range(0..=15)? {
                0 | 3 => PolicyTimeout::None,
                1 => PolicyTimeout::Zero,
                2 => PolicyTimeout::Secs(5),
                _ => PolicyTimeout::Default,
            },
            output_limit: if u.ratio(3, 4)? { None } else { Some(100) },
            audit_only: !u.ratio(3, 4)?,
        };
        let program = match u.int_in_range(0..=7)? {
            6 => u.choose(BAD_PROGRAMS)?.as_bytes().to_vec(),
            7 => u.choose(REQUEST_PROGRAMS)?.to_vec(),
            _ => u.choose(PROGRAMS)?.as_bytes().to_vec(),
        };
        let request = Request {
            program,
            args: up_to(u, 3, |u| Ok(u.choose(ARGS)?.to_vec()))?,
            env: up_to(u, 2, |u| Ok((pick(u, ENV_NAMES, BAD_ENV_NAMES)?.to_vec(), u.choose(ENV_VALUES)?.to_vec())))?,
            cwd: if u.arbitrary()? { Some(u.choose(CWDS)?.to_vec()) } else { None },
            timeout: match u.int_in_range(0..=3)? {
                0 => Some(Duration::from_secs(1)),
                1 => Some(Duration::from_secs(1000)),
                _ => None,
            },
            output_limit: match u.int_in_range(0..=3)? {
                0 => Some(10),
                1 => Some(1 << 30),
                _ => None,
            },
        };
        Ok(Self { spec, request, spawn: u.arbitrary()? })
    }
}

fn os(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

fn build_policy(spec: &Spec) -> Policy {
    let mut policy = Policy::deny_all()
        .search_path(spec.search_path.iter().copied())
        .env_passthrough(spec.passthrough.iter().map(|n| os(n)))
        .env_allow(spec.env_allow.iter().map(|n| os(n)))
        .allow_ld_env(spec.allow_ld_env)
        .audit_only(spec.audit_only);
    for dir in &spec.cwd_allow {
        policy = policy.cwd_allow(dir);
    }
    if let Some(dir) = spec.default_cwd {
        policy = policy.default_cwd(dir);
    }
    policy = match spec.timeout {
        PolicyTimeout::Default => policy,
        PolicyTimeout::None => policy.timeout(None),
        PolicyTimeout::Zero => policy.timeout(Some(Duration::ZERO)),
        PolicyTimeout::Secs(s) => policy.timeout(Some(Duration::from_secs(s))),
    };
    if let Some(limit) = spec.output_limit {
        policy = policy.output_limit(limit);
    }
    for r in &spec.allow {
        let mut rule = ProgramRule::new(r.program);
        for list in r.args.iter().flatten() {
            rule = rule.args(list.iter().cloned());
        }
        for (name, value) in &r.env {
            rule = rule.env(name, value);
        }
        rule = match r.timeout {
            RuleTimeout::Inherit => rule,
            RuleTimeout::None => rule.no_timeout(),
            RuleTimeout::Zero => rule.timeout(Duration::ZERO),
            RuleTimeout::Secs(s) => rule.timeout(Duration::from_secs(s)),
        };
        if let Some(limit) = r.output_limit {
            rule = rule.output_limit(limit);
        }
        policy = policy.allow(rule);
    }
    for d in &spec.deny {
        policy = policy.deny_program(d);
    }
    policy
}

fn build_command(req: &Request) -> Command {
    let mut cmd = Command::new(OsStr::from_bytes(&req.program));
    for arg in &req.args {
        cmd.arg(OsStr::from_bytes(arg));
    }
    for (name, value) in &req.env {
        cmd.env(OsStr::from_bytes(name), OsStr::from_bytes(value));
    }
    if let Some(cwd) = &req.cwd {
        cmd.cwd(Path::new(OsStr::from_bytes(cwd)));
    }
    if let Some(t) = req.timeout {
        cmd.timeout(t);
    }
    if let Some(limit) = req.output_limit {
        cmd.output_limit(limit);
    }
    cmd
}

// ---------------------------------------------------------------------------------------------
// The reference model, from docs/policy.md.
// ---------------------------------------------------------------------------------------------

/// Why the model gives no answer: the docs leave the case open (or the docs and the code
/// disagree, and the case is left out; see the comment where it is returned).
type Unspecified = &'static str;

/// "Argument patterns": `*` any run of characters, `?` exactly one character, `[...]` one
/// character of a class, `\` makes the next character literal, everything else itself.
#[derive(Debug, Clone)]
enum Tok {
    Lit(char),
    One,
    Run,
    Class { negated: bool, ranges: Vec<(char, char)> },
}

#[derive(Debug)]
struct Element {
    text: String,
    toks: Vec<Tok>,
}

#[derive(Debug)]
struct ArgList {
    elements: Vec<Element>,
    /// Ends with an element that is exactly `**`: any number of further arguments.
    rest: bool,
}

/// Whether an element parses (`Ok`), is a bad pattern (`Err(None)`: the policy is invalid), or
/// the docs do not say (`Err(Some(..))`).
fn parse_class(chars: &[char], i: &mut usize) -> Result<Tok, Option<Unspecified>> {
    // After `[`: `!` or `^` negates. "A `]` first in the class and a `-` first or last are
    // literal, `\` escapes inside it too." Members are (char, escaped).
    let negated = matches!(chars.get(*i), Some('!' | '^'));
    if negated {
        *i += 1;
    }
    let mut members: Vec<(char, bool)> = Vec::new();
    loop {
        // A class without its `]` is a bad pattern.
        let Some(&c) = chars.get(*i) else { return Err(None) };
        *i += 1;
        match c {
            ']' if !members.is_empty() => break,
            '\\' => {
                let Some(&e) = chars.get(*i) else { return Err(None) };
                *i += 1;
                members.push((e, true));
            }
            c => members.push((c, false)),
        }
    }
    let n = members.len();
    // "`\` escapes inside it too": `[a\-z]` is `a`, `-` or `z` (this target found the code
    // taking it for the range `a` to `z`; fixed).
    let mut ranges = Vec::new();
    let mut k = 0;
    while k < n {
        let (c, _) = members[k];
        let is_op = |j: usize| j > 0 && j + 1 < n && members[j] == ('-', false);
        if k + 2 < n && is_op(k + 1) {
            let (hi, _) = members[k + 2];
            // An unescaped `-` as an end of a range (`[--a]`, `[a--]`), a range right after
            // another (`[a-c-e]`), or an empty range (`[z-a]`): the docs do not say.
            if members[k] == ('-', false) || members[k + 2] == ('-', false) {
                return Err(Some("`-` as an end of a range"));
            }
            if k + 4 < n && is_op(k + 3) {
                return Err(Some("a range right after a range"));
            }
            if c > hi {
                return Err(Some("an empty range"));
            }
            ranges.push((c, hi));
            k += 3;
        } else {
            if members[k] == ('-', false) && k > 0 && k + 1 < n {
                return Err(Some("`-` inside a class, not a range"));
            }
            ranges.push((c, c));
            k += 1;
        }
    }
    Ok(Tok::Class { negated, ranges })
}

fn parse_element(text: &str) -> Result<Element, Option<Unspecified>> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        toks.push(match c {
            '*' => Tok::Run,
            '?' => Tok::One,
            '[' => parse_class(&chars, &mut i)?,
            // A `\` with nothing after it has nothing to make literal: a bad pattern.
            '\\' => match chars.get(i) {
                Some(&e) => {
                    i += 1;
                    Tok::Lit(e)
                }
                None => return Err(None),
            },
            c => Tok::Lit(c),
        });
    }
    Ok(Element { text: text.to_owned(), toks })
}

fn parse_list(list: &[String]) -> Result<ArgList, Option<Unspecified>> {
    let mut elements = Vec::new();
    let mut rest = false;
    for (i, text) in list.iter().enumerate() {
        if text == "**" && i + 1 == list.len() {
            rest = true;
        } else if text == "**" {
            // The docs give `**` a meaning only as the last element, and do not say whether
            // elsewhere it is an error or two `*` (the code: an error).
            return Err(Some("`**` not last"));
        } else {
            elements.push(parse_element(text)?);
        }
    }
    Ok(ArgList { elements, rest })
}

/// Glob matching by dynamic programming over (token, character) positions.
fn glob(toks: &[Tok], text: &[char]) -> bool {
    let (t, n) = (toks.len(), text.len());
    // can[i][j]: toks[i..] matches text[j..].
    let mut can = vec![vec![false; n + 1]; t + 1];
    can[t][n] = true;
    for i in (0..t).rev() {
        for j in (0..=n).rev() {
            can[i][j] = match &toks[i] {
                Tok::Run => can[i + 1][j] || (j < n && can[i][j + 1]),
                Tok::One => j < n && can[i + 1][j + 1],
                Tok::Lit(c) => j < n && text[j] == *c && can[i + 1][j + 1],
                Tok::Class { negated, ranges } => {
                    j < n
                        && (ranges.iter().any(|&(lo, hi)| lo <= text[j] && text[j] <= hi) != *negated)
                        && can[i + 1][j + 1]
                }
            };
        }
    }
    can[0][0]
}

fn element_matches(element: &Element, arg: &[u8]) -> Result<bool, Unspecified> {
    match std::str::from_utf8(arg) {
        Ok(text) => Ok(glob(&element.toks, &text.chars().collect::<Vec<_>>())),
        // "Arguments that are not valid UTF-8 match only `*` and `**`."
        Err(_) if element.text == "*" => Ok(true),
        Err(_) if element.text.chars().all(|c| c == '*') && !element.text.is_empty() => {
            Err("a non-UTF-8 argument against `***`")
        }
        // An empty element matches only the empty argument (this target found the code letting
        // it match any argument that is not UTF-8; fixed).
        Err(_) => Ok(false),
    }
}

fn list_matches(list: &ArgList, args: &[Vec<u8>]) -> Result<bool, Unspecified> {
    let count_ok = if list.rest { args.len() >= list.elements.len() } else { args.len() == list.elements.len() };
    if !count_ok {
        return Ok(false);
    }
    let mut unspecified = None;
    for (element, arg) in list.elements.iter().zip(args) {
        match element_matches(element, arg) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(why) => unspecified = Some(why),
        }
    }
    unspecified.map_or(Ok(true), Err)
}

type FileId = (u64, u64);

enum Found {
    Exec(PathBuf, FileId),
    NotExec,
    Missing,
}

/// "canonicalised (`realpath`)", then an executable regular file. (Executable: any `x` bit;
/// every program the target uses is owned by root with mode 755 or 644, so this is what
/// `access(X_OK)` says for root and for anyone else.)
fn check_file(path: &Path) -> Found {
    let Ok(canonical) = fs::canonicalize(path) else { return Found::Missing };
    match fs::metadata(&canonical) {
        Ok(meta) if meta.is_file() && meta.mode() & 0o111 != 0 => Found::Exec(canonical, (meta.dev(), meta.ino())),
        Ok(_) => Found::NotExec,
        Err(_) => Found::Missing,
    }
}

enum Resolved {
    Relative,
    Found(PathBuf, FileId),
    NotFound,
    NotExec,
}

/// "A program without `/` is looked up in the policy's `search_path` only [...]. A program
/// with `/` must be absolute." The first executable on the search path wins, as `execvp`.
fn resolve(program: &[u8], search: &[PathBuf]) -> Resolved {
    if program.contains(&b'/') {
        if program[0] != b'/' {
            return Resolved::Relative;
        }
        return match check_file(Path::new(OsStr::from_bytes(program))) {
            Found::Exec(p, id) => Resolved::Found(p, id),
            Found::NotExec => Resolved::NotExec,
            Found::Missing => Resolved::NotFound,
        };
    }
    let mut not_exec = false;
    for dir in search {
        match check_file(&dir.join(OsStr::from_bytes(program))) {
            Found::Exec(p, id) => return Resolved::Found(p, id),
            Found::NotExec => not_exec = true,
            Found::Missing => {}
        }
    }
    if not_exec { Resolved::NotExec } else { Resolved::NotFound }
}

#[derive(Debug, PartialEq, Eq)]
enum EnvClass {
    Loader,
    Unsafe,
    Plain,
}

/// glibc's other unsafe variables as the docs list them ("Variables refused always"): the
/// model's own copy, written from the docs like the rest of it; the fuzz target's `init` holds
/// it to the docs' list (`documented_unsafe_env`), so it cannot drift from what they say.
const UNSAFE_ENV: [&str; 13] = [
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_TRACE",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    "TMPDIR",
    "TZDIR",
];

/// "`LD_*` and `DYLD_*`", and [`UNSAFE_ENV`].
fn env_class(name: &[u8]) -> EnvClass {
    if name.starts_with(b"LD_") || name.starts_with(b"DYLD_") {
        EnvClass::Loader
    } else if UNSAFE_ENV.iter().any(|u| u.as_bytes() == name) {
        EnvClass::Unsafe
    } else {
        EnvClass::Plain
    }
}

#[derive(Debug)]
struct ModelRule {
    written: &'static str,
    canonical: PathBuf,
    lists: Option<Vec<ArgList>>,
    env: Vec<(&'static str, &'static str)>,
    timeout: RuleTimeout,
    output_limit: Option<u64>,
}

#[derive(Debug)]
struct ModelPolicy {
    search: Vec<PathBuf>,
    allow: Vec<ModelRule>,
    /// Each file a deny rule covers: canonical path, identity, the rule as written.
    deny: Vec<(PathBuf, FileId, &'static str)>,
    passthrough: Vec<&'static [u8]>,
    env_allow: Vec<&'static [u8]>,
    cwd_allow: Vec<PathBuf>,
    default_cwd: PathBuf,
    timeout: Option<Duration>,
    output_limit: u64,
    audit_only: bool,
}

/// The policy as the docs say it validates ("Errors", the key tables, the builder's defaults:
/// 30 s timeout, 16 MiB output limit, `default_cwd` `/`). `Err(None)`: invalid.
fn model_policy(spec: &Spec) -> Result<ModelPolicy, Option<Unspecified>> {
    let mut unspecified = None;
    let mut invalid = false;
    // "a relative search directory"
    if spec.search_path.iter().any(|d| !d.starts_with('/')) {
        return Err(None);
    }
    let search: Vec<PathBuf> = spec.search_path.iter().map(PathBuf::from).collect();
    // "`0` is an error (write `"none"`)"
    if matches!(spec.timeout, PolicyTimeout::Zero) {
        invalid = true;
    }
    // Names in `env.passthrough` and `env.allow`: well formed; `LD_*`/`DYLD_*` only with
    // `allow_ld_env`; glibc's other unsafe ones never ("listing one is an error").
    for name in spec.passthrough.iter().chain(&spec.env_allow) {
        if name.is_empty() || name.contains(&b'=') || name.contains(&0) {
            invalid = true;
        }
        match env_class(name) {
            EnvClass::Loader if !spec.allow_ld_env => invalid = true,
            EnvClass::Unsafe => invalid = true,
            _ => {}
        }
    }
    let mut allow: Vec<ModelRule> = Vec::new();
    for r in &spec.allow {
        // "an allow rule for a program that does not exist is an error"; so is one that is not
        // an executable, relative, or empty ("a program not found or empty").
        let canonical = match resolve(r.program.as_bytes(), &search) {
            Resolved::Found(p, _) if !r.program.is_empty() => p,
            _ => {
                invalid = true;
                continue;
            }
        };
        // "two rules for the same program"
        if allow.iter().any(|other| other.canonical == canonical) {
            invalid = true;
        }
        if matches!(r.timeout, RuleTimeout::Zero) {
            invalid = true;
        }
        let lists = match &r.args {
            None => None,
            Some(lists) => {
                let mut parsed = Vec::new();
                for list in lists {
                    match parse_list(list) {
                        Ok(l) => parsed.push(l),
                        Err(None) => invalid = true,
                        Err(Some(why)) => unspecified = Some(why),
                    }
                }
                Some(parsed)
            }
        };
        allow.push(ModelRule {
            written: r.program,
            canonical,
            lists,
            env: r.env.clone(),
            timeout: r.timeout,
            output_limit: r.output_limit,
        });
    }
    // Deny rules: "A deny rule by name covers every file that name resolves to in any
    // `search_path` directory"; "a deny rule that could never match (a relative path [...], a
    // name found in no `search_path` directory [...], a path that does not exist or is not an
    // executable)" is an error.
    let mut deny = Vec::new();
    for &rule in &spec.deny {
        let bytes = rule.as_bytes();
        let mut files = Vec::new();
        if bytes.contains(&b'/') {
            if let Resolved::Found(p, id) = resolve(bytes, &search) {
                files.push((p, id));
            }
        } else {
            for dir in &search {
                if let Found::Exec(p, id) = check_file(&dir.join(rule)) {
                    files.push((p, id));
                }
            }
        }
        if files.is_empty() {
            invalid = true;
        }
        deny.extend(files.into_iter().map(|(p, id)| (p, id, rule)));
    }
    // `cwd_allow`: absolute directories that exist ("a missing `cwd_allow` directory");
    // `default_cwd`: absolute ("a relative [...] working directory").
    let mut cwd_allow = Vec::new();
    for dir in &spec.cwd_allow {
        match (dir.starts_with('/'), fs::canonicalize(dir)) {
            (true, Ok(c)) if c.is_dir() => cwd_allow.push(c),
            _ => invalid = true,
        }
    }
    let default_cwd = spec.default_cwd.unwrap_or("/");
    if !default_cwd.starts_with('/') {
        return Err(None);
    }
    let default_cwd = fs::canonicalize(default_cwd).expect("generated default_cwd exists");
    if invalid {
        return Err(None);
    }
    if let Some(why) = unspecified {
        return Err(Some(why));
    }
    Ok(ModelPolicy {
        search,
        allow,
        deny,
        passthrough: spec.passthrough.clone(),
        env_allow: spec.env_allow.clone(),
        cwd_allow,
        default_cwd,
        timeout: match spec.timeout {
            PolicyTimeout::Default => Some(Duration::from_secs(30)),
            PolicyTimeout::None => None,
            PolicyTimeout::Zero => unreachable!(),
            PolicyTimeout::Secs(s) => Some(Duration::from_secs(s)),
        },
        output_limit: spec.output_limit.unwrap_or(16 << 20),
        audit_only: spec.audit_only,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Allow,
    Deny,
    WouldDeny,
    Error,
}

#[derive(Debug)]
enum RuleExp {
    None,
    Exactly(&'static str),
    OneOf(Vec<&'static str>),
    /// The docs do not say which rule an audit-only refusal (loader variable, working
    /// directory) names.
    Any,
}

#[derive(Debug)]
struct Run {
    path: PathBuf,
    argv: Vec<OsString>,
    /// `None`: not compared (see where it is set).
    env: Option<BTreeMap<OsString, OsString>>,
    /// Variables the environment must have, when it is not compared whole.
    env_subset: Option<BTreeMap<OsString, OsString>>,
    cwd: PathBuf,
    timeout: Option<Duration>,
    output_limit: u64,
}

#[derive(Debug)]
struct Expect {
    kind: Kind,
    /// Deny and error both refuse, and the docs and the code disagree which (see where set).
    refused_either_way: bool,
    rule: RuleExp,
    run: Option<Run>,
    /// A refusal that must not show where the program resolved: of a request that no allow
    /// rule names as written, for want of an allow rule or by a deny rule (or that did not
    /// resolve to an executable).
    hides_path: bool,
    /// What the program resolved to, if it did.
    canonical: Option<PathBuf>,
}

/// Why the policy's rules refuse a request that resolved.
#[derive(Debug)]
enum Refusal {
    DenyRule(Vec<&'static str>),
    NotAllowed,
    /// The allow rule's arguments, environment or working directory check failed.
    AllowRule(&'static str),
}

fn min_some(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The canonical working directory a request may run in ("absolute, exist, and be
/// `default_cwd` itself or inside one of `cwd_allow` after canonicalisation"), or `None`.
fn allowed_cwd(p: &ModelPolicy, cwd: &[u8]) -> Option<PathBuf> {
    if cwd.first() != Some(&b'/') {
        return None;
    }
    let canonical = fs::canonicalize(OsStr::from_bytes(cwd)).ok().filter(|c| c.is_dir())?;
    (canonical == p.default_cwd || p.cwd_allow.iter().any(|dir| canonical.starts_with(dir))).then_some(canonical)
}

fn simple(kind: Kind, named: bool) -> Expect {
    let hides_path = kind == Kind::Deny && !named;
    Expect { kind, refused_either_way: false, rule: RuleExp::None, run: None, hides_path, canonical: None }
}

/// "How a request is decided", steps 1 to 7 (8 to 10 are the spawner's and `explain` leaves
/// them out), and "Audit-only mode".
/// "A child whose environment has no `PATH` by then gets the policy's `search_path`, in order":
/// the directories `PATH` can name (no `:` in them), joined with `:`.
fn default_path(search: &[PathBuf]) -> OsString {
    let dirs: Vec<&[u8]> = search.iter().map(|d| d.as_os_str().as_bytes()).filter(|d| !d.contains(&b':')).collect();
    OsString::from_vec(dirs.join(&b':'))
}

fn model_decide(p: &ModelPolicy, req: &Request) -> Result<Expect, Unspecified> {
    let named = p.allow.iter().any(|r| r.written.as_bytes() == req.program.as_slice());
    // 1. Validation.
    let bad_env = req.env.iter().any(|(n, v)| n.is_empty() || n.contains(&b'=') || n.contains(&0) || v.contains(&0));
    if req.program.is_empty()
        || req.program.contains(&0)
        || req.args.iter().any(|a| a.contains(&0))
        || bad_env
        || req.cwd.as_ref().is_some_and(|c| c.contains(&0))
    {
        return Ok(simple(Kind::Error, named));
    }
    // 2. Resolution.
    let is_path = req.program.contains(&b'/');
    let (canonical, id) = match resolve(&req.program, &p.search) {
        Resolved::Found(c, id) => (c, id),
        // "must be absolute (`./x`, `bin/x`, `../x` are denied)"; audit-only does not waive it.
        Resolved::Relative => return Ok(simple(Kind::Deny, named)),
        failed => {
            // "A missing program is *not found*; a file that is not an executable regular file
            // is *not executable* — but only when an allow rule is written exactly as the
            // request names it. A path that no rule names is *denied* whether it exists or
            // not [...]. A bare name [...] may be reported *not found*; one that no rule names
            // and that finds something other than an executable [...] is *denied* like a path."
            let hidden = !named && (is_path || matches!(failed, Resolved::NotExec));
            let mut expect = simple(if hidden { Kind::Deny } else { Kind::Error }, named);
            // DOCS/CODE DISAGREE: in audit-only mode the code reports such a path (or bare
            // name that finds no executable) as *not found* / *not executable* (decision
            // "error"), where the docs say *denied* with no exception for audit-only mode. Both
            // refuse it, so only that is compared.
            if hidden && p.audit_only {
                expect.refused_either_way = true;
            }
            return Ok(expect);
        }
    };
    // 3. Deny rules, by canonical path and by identity.
    let deny_rules: Vec<&'static str> =
        p.deny.iter().filter(|(path, did, _)| *path == canonical || *did == id).map(|(_, _, r)| *r).collect();
    let allow_rule = p.allow.iter().find(|r| r.canonical == canonical);
    let mut cwd_ok = None;
    let refusal = if !deny_rules.is_empty() {
        Some(Refusal::DenyRule(deny_rules))
    } else if let Some(rule) = allow_rule {
        // 5. Argument patterns of the matching rule.
        let args_ok = match &rule.lists {
            None => true,
            Some(lists) => {
                let mut unspecified = None;
                let mut any = false;
                for list in lists {
                    match list_matches(list, &req.args) {
                        Ok(true) => any = true,
                        Ok(false) => {}
                        Err(why) => unspecified = Some(why),
                    }
                }
                if !any && let Some(why) = unspecified {
                    return Err(why);
                }
                any
            }
        };
        // 6. Every variable the request sets must be listed in `env.allow` (which can list
        // `LD_*` only with `allow_ld_env`, and glibc's unsafe ones never).
        let env_ok = req.env.iter().all(|(n, _)| p.env_allow.contains(&n.as_slice()));
        // 7. Working directory.
        cwd_ok = match &req.cwd {
            None => Some(p.default_cwd.clone()),
            Some(c) => allowed_cwd(p, c),
        };
        if args_ok && env_ok && cwd_ok.is_some() { None } else { Some(Refusal::AllowRule(rule.written)) }
    } else {
        // 4. No allow rule matches the canonical path.
        Some(Refusal::NotAllowed)
    };
    let args: Vec<OsString> = req.args.iter().map(|a| os(a)).collect();
    let rule_exp = |refusal: &Refusal| match refusal {
        Refusal::DenyRule(rules) => RuleExp::OneOf(rules.clone()),
        Refusal::NotAllowed => RuleExp::None,
        Refusal::AllowRule(written) => RuleExp::Exactly(written),
    };
    let Some(refusal) = refusal else {
        // Allowed: the rule's limits replace the policy's, a request only lowers them; the
        // environment is the passthrough, then the request's, then the rule's (which wins),
        // then, without a `PATH` by then, the search path as `PATH`.
        let rule = allow_rule.expect("allowed by a rule");
        let mut env = BTreeMap::new();
        for name in &p.passthrough {
            if let Some(value) = std::env::var_os(OsStr::from_bytes(name)) {
                env.insert(os(name), value);
            }
        }
        for (n, v) in &req.env {
            env.insert(os(n), os(v));
        }
        for (n, v) in &rule.env {
            env.insert(OsString::from(n), OsString::from(v));
        }
        env.entry(OsString::from("PATH")).or_insert_with(|| default_path(&p.search));
        let rule_timeout = match rule.timeout {
            RuleTimeout::Inherit => p.timeout,
            RuleTimeout::None => None,
            RuleTimeout::Zero => unreachable!(),
            RuleTimeout::Secs(s) => Some(Duration::from_secs(s)),
        };
        let mut argv = vec![OsString::from(rule.written)];
        argv.extend(args);
        return Ok(Expect {
            kind: Kind::Allow,
            refused_either_way: false,
            hides_path: false,
            rule: RuleExp::Exactly(rule.written),
            run: Some(Run {
                path: canonical.clone(),
                argv,
                env: Some(env),
                env_subset: None,
                cwd: cwd_ok.expect("checked"),
                timeout: min_some(req.timeout, rule_timeout),
                output_limit: req.output_limit.unwrap_or(u64::MAX).min(rule.output_limit.unwrap_or(p.output_limit)),
            }),
            canonical: Some(canonical),
        });
    };
    let hides_path = !named && matches!(refusal, Refusal::DenyRule(_) | Refusal::NotAllowed);
    if !p.audit_only {
        return Ok(Expect {
            kind: Kind::Deny,
            refused_either_way: false,
            hides_path,
            rule: rule_exp(&refusal),
            run: None,
            canonical: Some(canonical),
        });
    }
    // Audit-only: the rules are waived, not "the variables that change what a program loads
    // (`LD_*` and `DYLD_*` unless `allow_ld_env` allows and `env.allow` lists them; glibc's
    // unsafe ones always)" nor "working directories that are relative [...] or are not
    // directories".
    // DOCS/CODE DISAGREE: "what a refusal hides from a guest, such as where a path no rule
    // names resolved, explain hides too" -- but when audit-only mode still refuses such a
    // request (a loader variable, a bad working directory), `explain` shows the canonical path
    // (`/bin/sh` with `TMPDIR=1`: `path: /usr/bin/dash`). The reason, which is all the guest
    // reads, names only the request's spelling, so only that is checked here.
    let refused = || Expect {
        kind: Kind::Deny,
        refused_either_way: false,
        hides_path: false,
        rule: RuleExp::Any,
        run: None,
        canonical: Some(canonical.clone()),
    };
    if req.env.iter().any(|(n, _)| env_class(n) != EnvClass::Plain && !p.env_allow.contains(&n.as_slice())) {
        return Ok(refused());
    }
    let cwd = match &req.cwd {
        None => p.default_cwd.clone(),
        Some(c) => match fs::canonicalize(OsStr::from_bytes(c)) {
            Ok(canonical) if c.first() == Some(&b'/') && canonical.is_dir() => canonical,
            _ => return Ok(refused()),
        },
    };
    // "runs anyway — with the policy's default limits, exactly the requested environment and
    // working directory". `argv[0]`: "In audit-only mode, when no allow rule matched (or a deny
    // rule decided), it is the program as the request gave it."
    let argv0 = match refusal {
        Refusal::AllowRule(written) => OsString::from(written),
        _ => os(&req.program),
    };
    let mut env = BTreeMap::new();
    for (n, v) in &req.env {
        env.insert(os(n), os(v));
    }
    // DOCS/CODE DISAGREE: the docs say a would-deny request runs with "exactly the requested
    // environment"; the code also copies the host's values of `env.passthrough` into it (as for
    // an allowed request). So with passthrough names set on the host, only the requested
    // variables are compared.
    let passthrough_set = p.passthrough.iter().any(|n| std::env::var_os(OsStr::from_bytes(n)).is_some());
    let (env, env_subset) = if passthrough_set {
        (None, Some(env))
    } else {
        env.entry(OsString::from("PATH")).or_insert_with(|| default_path(&p.search));
        (Some(env), None)
    };
    let mut argv = vec![argv0];
    argv.extend(args);
    Ok(Expect {
        kind: Kind::WouldDeny,
        refused_either_way: false,
        hides_path: false,
        rule: rule_exp(&refusal),
        run: Some(Run {
            path: canonical.clone(),
            argv,
            env,
            env_subset,
            cwd,
            timeout: min_some(req.timeout, p.timeout),
            output_limit: req.output_limit.unwrap_or(u64::MAX).min(p.output_limit),
        }),
        canonical: Some(canonical),
    })
}

// ---------------------------------------------------------------------------------------------
// The comparison.
// ---------------------------------------------------------------------------------------------

fn kind_of(decision: Decision) -> Kind {
    match decision {
        Decision::Allow => Kind::Allow,
        Decision::Deny => Kind::Deny,
        Decision::WouldDeny => Kind::WouldDeny,
        Decision::Error => Kind::Error,
        other => panic!("a decision the target does not know: {other:?}"),
    }
}

/// The explanation holds together: a refusal describes no child, a request that runs does.
fn check_explanation(ex: &Explanation) {
    let runs = ex.decision.runs();
    assert_eq!(runs, ex.cwd.is_some(), "cwd only when it runs: {ex:?}");
    assert_eq!(runs, ex.strategy.is_some(), "strategy only when it runs: {ex:?}");
    assert_eq!(runs, ex.output_limit.is_some(), "output limit only when it runs: {ex:?}");
    assert_eq!(runs, !ex.argv.is_empty(), "argv only when it runs: {ex:?}");
    assert_eq!(runs, ex.sandbox.is_some(), "sandbox only when it runs: {ex:?}");
    if runs {
        assert!(ex.path.is_some(), "a request that runs has a path: {ex:?}");
    } else {
        assert!(ex.env.is_empty() && ex.timeout.is_none(), "a refusal describes no child: {ex:?}");
    }
    assert_eq!(ex.decision == Decision::Allow, ex.reason == "allowed", "{ex:?}");
}

fn compare(expect: &Expect, ex: &Explanation, req: &Request, spec: &Spec) {
    let actual = kind_of(ex.decision);
    if expect.refused_either_way {
        assert!(
            matches!(actual, Kind::Deny | Kind::Error),
            "model: refused ({:?}), library: {actual:?}\n{ex:#?}",
            expect.kind
        );
    } else {
        assert_eq!(actual, expect.kind, "decision\nmodel: {expect:#?}\nlibrary: {ex:#?}");
    }
    let rule = ex.rule.as_deref().map(|r| r.as_os_str().as_bytes());
    let rule_ok = match &expect.rule {
        RuleExp::Any => true,
        RuleExp::None => rule.is_none(),
        RuleExp::Exactly(written) => rule == Some(written.as_bytes()),
        RuleExp::OneOf(rules) => rule.is_some_and(|r| rules.iter().any(|w| w.as_bytes() == r)),
    };
    assert!(rule_ok, "rule\nmodel: {:?}\nlibrary: {:?}\n{ex:#?}", expect.rule, ex.rule);
    if let Some(run) = &expect.run {
        assert_eq!(ex.path.as_ref(), Some(&run.path), "path\n{ex:#?}");
        assert_eq!(ex.argv, run.argv, "argv\n{ex:#?}");
        if let Some(env) = &run.env {
            assert_eq!(&ex.env, env, "environment\n{ex:#?}");
        }
        for (name, value) in run.env_subset.iter().flatten() {
            assert_eq!(ex.env.get(name), Some(value), "environment: {name:?}\n{ex:#?}");
        }
        assert_eq!(ex.cwd.as_ref(), Some(&run.cwd), "working directory\n{ex:#?}");
        assert_eq!(ex.timeout, run.timeout, "timeout\n{ex:#?}");
        assert_eq!(ex.output_limit, Some(run.output_limit), "output limit\n{ex:#?}");
    }
    // "Denial messages name only the program as the request spelled it, never what it
    // resolved to", and "what a refusal hides from a guest, such as where a path no rule names
    // resolved, explain hides too": such a denial has no path, and no denial names the
    // canonical path in its reason (unless the request's or the rules' own strings contain it).
    if actual == Kind::Deny && expect.hides_path {
        assert_eq!(ex.path, None, "a denial of an unnamed program shows its path\n{ex:#?}");
    }
    if actual == Kind::Deny
        && let Some(canonical) = &expect.canonical
    {
        let c = canonical.as_os_str().as_bytes();
        let contains = |hay: &[u8]| hay.windows(c.len()).any(|w| w == c);
        let own = contains(&req.program)
            || req.cwd.as_deref().is_some_and(contains)
            || spec.allow.iter().any(|r| contains(r.program.as_bytes()))
            || spec.deny.iter().any(|d| contains(d.as_bytes()));
        assert!(own || !contains(ex.reason.as_bytes()), "the reason names the canonical path\n{ex:#?}");
    }
}

/// A bare spawner decides as `explain` does (same decision, same message). Only for requests
/// that resolve to `/usr/bin/true`, which exits at once.
fn check_spawner(policy: &Policy, command: &Command, ex: &Explanation) {
    let spawner = Spawner::new(policy.clone()).expect("the policy validated for explain");
    match spawner.spawn(command) {
        Ok(mut child) => {
            assert!(ex.decision.runs(), "the spawner ran what explain refuses\n{ex:#?}");
            assert_eq!(Some(child.path()), ex.path.as_deref(), "spawned path");
            child.wait().expect("wait for true");
        }
        Err(err) => {
            let kind = match &err {
                SpawnError::Denied { .. } => Kind::Deny,
                SpawnError::NotFound { .. } | SpawnError::NotExecutable { .. } | SpawnError::InvalidRequest { .. } => {
                    Kind::Error
                }
                other => panic!("the spawner failed: {other:?} (explain: {ex:#?})"),
            };
            assert_eq!(kind, kind_of(ex.decision), "spawner: {err:?}\nexplain: {ex:#?}");
            assert_eq!(error_chain(&err), ex.reason, "spawner and explain give other messages");
        }
    }
}

/// The model's [`UNSAFE_ENV`] is exactly the list docs/policy.md gives, read from the doc
/// the way `wrt-host-spawn`'s tests read it: a name the docs add or drop fails here, named,
/// instead of making the model disagree with the library on inputs the fuzzer may never find.
fn check_unsafe_env_is_documented() {
    let documented = wrt_test_support::documented_unsafe_env();
    let documented: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
    let model: BTreeSet<&str> = UNSAFE_ENV.into_iter().collect();
    assert_eq!(model.len(), UNSAFE_ENV.len(), "the model's UNSAFE_ENV lists a name twice");
    let undocumented: Vec<&str> = model.difference(&documented).copied().collect();
    let missing: Vec<&str> = documented.difference(&model).copied().collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "the model's UNSAFE_ENV has {undocumented:?}, which docs/policy.md does not list, and lacks {missing:?}, which it lists"
    );
}

fuzz_target!(init: check_unsafe_env_is_documented(), |input: Input| {
    let policy = build_policy(&input.spec);
    let command = build_command(&input.request);
    let explained = policy.explain(&command);
    let model = model_policy(&input.spec);
    let model = match model {
        Err(Some(_unspecified)) => return,
        Err(None) => {
            assert!(
                explained.is_err(),
                "the docs make this policy invalid, explain took it: {input:#?}\n{explained:#?}"
            );
            return;
        }
        Ok(model) => model,
    };
    let ex = match explained {
        Ok(ex) => ex,
        Err(err) => panic!("the docs make this policy valid, explain refused it: {err}\n{input:#?}\n{model:#?}"),
    };
    check_explanation(&ex);
    let Ok(expect) = model_decide(&model, &input.request) else { return };
    compare(&expect, &ex, &input.request, &input.spec);
    if input.spawn && expect.canonical.as_deref() == Some(Path::new("/usr/bin/true")) {
        check_spawner(&policy, &command, &ex);
    }
});

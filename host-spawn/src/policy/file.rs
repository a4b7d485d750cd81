//! The TOML policy file format (documented in `docs/policy.md`).

mod unknown;

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use toml::Spanned;

use super::{Policy, ProgramRule};
use crate::error::{PolicyError, PolicyFileError};
use crate::limits::Rlimits;
use crate::pin::Sha256;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    search_path: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    allow: Vec<Spanned<AllowEntry>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    env: EnvSection,
    #[serde(default)]
    allow_ld_env: bool,
    #[serde(default)]
    cwd_allow: Vec<Spanned<String>>,
    default_cwd: Option<Spanned<String>>,
    timeout: Option<Spanned<Timeout>>,
    kill_grace: Option<Seconds>,
    output_limit: Option<Size>,
    rlimits: Option<RlimitsEntry>,
    max_children: Option<Spanned<MaxChildren>>,
    #[serde(default)]
    audit_only: bool,
    #[serde(default)]
    sandbox: SandboxSection,
}

/// The `[sandbox]` table: the child sandbox's switch and extra locations.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxSection {
    enabled: Option<bool>,
    #[serde(default)]
    read: Vec<Spanned<String>>,
    #[serde(default)]
    write: Vec<Spanned<String>>,
    max_processes: Option<Spanned<u64>>,
    view: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowEntry {
    program: Spanned<String>,
    args: Option<Spanned<Vec<Spanned<Vec<String>>>>>,
    #[serde(default)]
    env: BTreeMap<Spanned<String>, String>,
    timeout: Option<Spanned<Timeout>>,
    output_limit: Option<Size>,
    rlimits: Option<RlimitsEntry>,
    sha256: Option<Sha256Hex>,
    #[serde(default)]
    network: bool,
}

/// A rule's `sha256`: 64 hexadecimal digits.
#[derive(Debug)]
struct Sha256Hex(Sha256);

impl<'de> Deserialize<'de> for Sha256Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let hex = String::deserialize(d)?;
        Sha256::from_hex(&hex).map(Sha256Hex).map_err(de::Error::custom)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvSection {
    #[serde(default)]
    passthrough: Vec<Spanned<String>>,
    #[serde(default)]
    allow: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RlimitsEntry {
    cpu_seconds: Option<u64>,
    address_space: Option<Size>,
    open_files: Option<u64>,
    file_size: Option<Size>,
    processes: Option<u64>,
    core_size: Option<Size>,
}

impl From<RlimitsEntry> for Rlimits {
    fn from(entry: RlimitsEntry) -> Self {
        Self {
            cpu_seconds: entry.cpu_seconds,
            address_space: entry.address_space.map(|s| s.0),
            open_files: entry.open_files,
            file_size: entry.file_size.map(|s| s.0),
            processes: entry.processes,
            core_size: entry.core_size.map(|s| s.0),
        }
    }
}

/// A duration: an integer number of seconds, or a string such as `"500ms"`, `"30s"`, `"2m"`,
/// `"1h"` (a decimal point is allowed: `"1.5s"`).
#[derive(Debug, Clone, Copy)]
struct Seconds(Duration);

/// A [`Seconds`] or the string `"none"`.
#[derive(Debug, Clone, Copy)]
struct Timeout(Option<Duration>);

/// A byte count: an integer, or a string such as `"512 KiB"`, `"16MiB"`, `"1 GB"`.
#[derive(Debug, Clone, Copy)]
struct Size(u64);

/// `max_children`: an integer ≥ 1. Anything else, a negative number or `0` as much as a
/// string, fails with the one message that says so (`0` would otherwise pass the parser and be
/// refused by validation, and `-1` fail as "expected usize").
#[derive(Debug, Clone, Copy)]
struct MaxChildren(usize);

impl<'de> Deserialize<'de> for MaxChildren {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Integer(n) if n >= 1 => usize::try_from(n).map(MaxChildren).map_err(de::Error::custom),
            _ => Err(de::Error::custom("`max_children` must be an integer ≥ 1")),
        }
    }
}

/// A duration string of a policy file: the flags' grammar ([`wrt_text::parse_duration`]).
fn parse_duration(text: &str) -> Result<Duration, String> {
    wrt_text::parse_duration(text).map_err(|err| err.to_string())
}

/// A size string of a policy file: the flags' grammar, where a number alone is bytes as an
/// integer is ([`wrt_text::parse_bytes`]).
fn parse_size(text: &str) -> Result<u64, String> {
    wrt_text::parse_bytes(text).map_err(|err| err.to_string())
}

struct SecondsVisitor {
    allow_none: bool,
}

impl Visitor<'_> for SecondsVisitor {
    type Value = Option<Duration>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.allow_none {
            f.write_str("seconds as an integer, a string such as \"30s\", or \"none\"")
        } else {
            f.write_str("seconds as an integer or a string such as \"30s\"")
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(|secs| Some(Duration::from_secs(secs)))
            .map_err(|_| E::custom("a duration cannot be negative"))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Duration::from_secs(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        if self.allow_none && v == "none" {
            return Ok(None);
        }
        parse_duration(v).map(Some).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = d.deserialize_any(SecondsVisitor { allow_none: false })?;
        value.map(Seconds).ok_or_else(|| de::Error::custom("expected a duration"))
    }
}

impl<'de> Deserialize<'de> for Timeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SecondsVisitor { allow_none: true }).map(Timeout)
    }
}

struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = Size;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("bytes as an integer or a string such as \"16 MiB\"")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
        u64::try_from(v).map(Size).map_err(|_| E::custom("a size cannot be negative"))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
        Ok(Size(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
        parse_size(v).map(Size).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

/// Maps a [`PolicyError`] back to the span of the value that caused it.
struct Spans {
    search_path: Vec<(PathBuf, Range<usize>)>,
    /// Per allow rule: the table, its `program`, its `args` (and each pattern), its `timeout`.
    allow: Vec<RuleSpans>,
    deny: Vec<Range<usize>>,
    env: Vec<(String, Range<usize>)>,
    dirs: Vec<(PathBuf, Range<usize>)>,
    sandbox: Vec<(PathBuf, Range<usize>)>,
    max_processes: Option<Range<usize>>,
    timeout: Option<Range<usize>>,
    max_children: Option<Range<usize>>,
}

struct RuleSpans {
    table: Range<usize>,
    program: Range<usize>,
    args: Option<(Range<usize>, Vec<Range<usize>>)>,
    timeout: Option<Range<usize>>,
}

impl Spans {
    fn new(file: &PolicyFile) -> Self {
        Self {
            search_path: file.search_path.iter().flatten().map(|s| (PathBuf::from(s.get_ref()), s.span())).collect(),
            allow: file
                .allow
                .iter()
                .map(|rule| {
                    let entry = rule.get_ref();
                    RuleSpans {
                        table: rule.span(),
                        program: entry.program.span(),
                        args: entry
                            .args
                            .as_ref()
                            .map(|args| (args.span(), args.get_ref().iter().map(Spanned::span).collect())),
                        timeout: entry.timeout.as_ref().map(Spanned::span),
                    }
                })
                .collect(),
            deny: file.deny.iter().map(Spanned::span).collect(),
            env: file
                .env
                .passthrough
                .iter()
                .chain(&file.env.allow)
                .chain(file.allow.iter().flat_map(|rule| rule.get_ref().env.keys()))
                .map(|s| (s.get_ref().clone(), s.span()))
                .collect(),
            dirs: file
                .cwd_allow
                .iter()
                .chain(&file.default_cwd)
                .map(|s| (PathBuf::from(s.get_ref()), s.span()))
                .collect(),
            sandbox: file
                .sandbox
                .read
                .iter()
                .chain(&file.sandbox.write)
                .map(|s| (PathBuf::from(s.get_ref()), s.span()))
                .collect(),
            max_processes: file.sandbox.max_processes.as_ref().map(Spanned::span),
            timeout: file.timeout.as_ref().map(Spanned::span),
            max_children: file.max_children.as_ref().map(Spanned::span),
        }
    }

    fn find(&self, err: &PolicyError) -> Option<Range<usize>> {
        let by_path = |list: &[(PathBuf, Range<usize>)], path: &Path| {
            list.iter().find(|(p, _)| p == path).map(|(_, span)| span.clone())
        };
        let rule = |index: &usize| self.allow.get(*index);
        match err {
            PolicyError::RelativeSearchDir { dir } => by_path(&self.search_path, dir),
            PolicyError::ProgramNotFound { index, .. }
            | PolicyError::RelativeProgram { index, .. }
            | PolicyError::NotExecutable { index, .. }
            | PolicyError::DuplicateRule { index, .. }
            | PolicyError::Sha256 { index, .. }
            | PolicyError::EmptyProgram { index } => rule(index).map(|r| r.program.clone()),
            PolicyError::BadPattern { index, pattern, .. } => rule(index).and_then(|r| {
                let (all, each) = r.args.as_ref()?;
                Some(each.get(*pattern).unwrap_or(all).clone())
            }),
            PolicyError::EmptyArgs { index } => {
                rule(index).map(|r| r.args.as_ref().map_or_else(|| r.table.clone(), |(all, _)| all.clone()))
            }
            PolicyError::ZeroTimeout { index: Some(index) } => rule(index).and_then(|r| r.timeout.clone()),
            PolicyError::ZeroTimeout { index: None } => self.timeout.clone(),
            PolicyError::RelativeDeny { index, .. }
            | PolicyError::DenyNotFound { index, .. }
            | PolicyError::DenyNotExecutable { index, .. } => self.deny.get(*index).cloned(),
            PolicyError::LoaderEnv { name } | PolicyError::UnsafeEnv { name } | PolicyError::BadEnvName { name } => {
                self.env.iter().find(|(n, _)| n == name).map(|(_, span)| span.clone())
            }
            PolicyError::Cwd { dir, .. } | PolicyError::RelativeCwd { dir } => by_path(&self.dirs, dir),
            PolicyError::ZeroMaxChildren => self.max_children.clone(),
            PolicyError::ZeroMaxProcesses => self.max_processes.clone(),
            PolicyError::RelativeSandboxPath { path } | PolicyError::SandboxPath { path, .. } => {
                by_path(&self.sandbox, path)
            }
        }
    }
}

/// The line of a top-level `allow` that is one table (`[allow]`, `allow = { … }`) rather than
/// a list of rule tables (`[[allow]]`); `None` if there is none, or `text` is not TOML.
fn allow_table_line(text: &str) -> Option<usize> {
    let root = toml::de::DeTable::parse(text).ok()?;
    let (key, value) = root.get_ref().get_key_value("allow")?;
    matches!(value.get_ref(), toml::de::DeValue::Table(_)).then(|| line_of(text, key.span().start))
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

impl Policy {
    /// Parses and validates a TOML policy (format in `docs/policy.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_host_spawn::Policy;
    ///
    /// let policy = Policy::from_toml_str(r#"
    ///     timeout = "10s"
    ///     max_children = 4
    ///
    ///     [[allow]]
    ///     program = "true"
    /// "#)?;
    /// assert!(!policy.is_audit_only());
    /// # Ok::<(), wrt_host_spawn::PolicyFileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`PolicyFileError::Parse`] for invalid TOML and malformed values (the message has the
    /// line and column); [`PolicyFileError::UnknownKeys`] listing every unknown key, with its
    /// line and what was probably meant; [`PolicyFileError::AllowNotList`] for `[allow]` written
    /// for `[[allow]]`; [`PolicyFileError::Invalid`] with the line for a policy that does not
    /// validate (a program that is not found, a bad pattern, …), or
    /// [`PolicyFileError::InvalidEntries`] with every bad deny entry's line when there are
    /// several.
    ///
    /// # Ambient authority
    ///
    /// Validation resolves programs and directories on the host's file system.
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyFileError> {
        Self::parse(text, Path::new("<string>"))
    }

    /// Reads, parses and validates a TOML policy file (format in `docs/policy.md`).
    ///
    /// # Errors
    ///
    /// As [`Policy::from_toml_str`], plus [`PolicyFileError::Read`].
    ///
    /// # Ambient authority
    ///
    /// Reads `path` and resolves programs and directories on the host's file system.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, PolicyFileError> {
        let path = path.as_ref();
        let text =
            fs::read_to_string(path).map_err(|source| PolicyFileError::Read { path: path.to_owned(), source })?;
        let mut policy = Self::parse(&text, path)?;
        policy.source = Some(path.to_owned());
        Ok(policy)
    }

    fn parse(text: &str, path: &Path) -> Result<Self, PolicyFileError> {
        let file: PolicyFile = toml::from_str(text).map_err(|source| {
            if let Some(line) = allow_table_line(text) {
                return PolicyFileError::AllowNotList { path: path.to_owned(), line };
            }
            // serde stops at the first unknown key; report them all.
            let keys = unknown::keys(text);
            if keys.is_empty() {
                PolicyFileError::Parse { path: path.to_owned(), source }
            } else {
                PolicyFileError::UnknownKeys { path: path.to_owned(), keys }
            }
        })?;
        let spans = Spans::new(&file);
        let policy = Self::from_parsed(file);
        let line = |err: &PolicyError| spans.find(err).map_or(1, |span| line_of(text, span.start));
        let Err(source) = policy.validate() else { return Ok(policy) };
        // Every deny entry that could never match is reported, not only the first.
        let deny_errors = match source {
            PolicyError::RelativeDeny { .. }
            | PolicyError::DenyNotFound { .. }
            | PolicyError::DenyNotExecutable { .. } => policy.deny_errors(),
            _ => Vec::new(),
        };
        if deny_errors.len() > 1 {
            let errors = deny_errors.into_iter().map(|err| (line(&err), err)).collect();
            return Err(PolicyFileError::InvalidEntries { path: path.to_owned(), errors });
        }
        Err(PolicyFileError::Invalid { path: path.to_owned(), line: line(&source), source })
    }

    fn from_parsed(file: PolicyFile) -> Self {
        let mut policy = Self::deny_all();
        if let Some(dirs) = file.search_path {
            policy = policy.search_path(dirs.into_iter().map(Spanned::into_inner));
        }
        for entry in file.allow {
            let entry = entry.into_inner();
            let mut rule = ProgramRule::new(entry.program.into_inner());
            rule.args = entry.args.map(|args| args.into_inner().into_iter().map(Spanned::into_inner).collect());
            rule.env = entry.env.into_iter().map(|(name, value)| (name.into_inner().into(), value.into())).collect();
            rule.timeout = entry.timeout.map(|t| t.into_inner().0);
            rule.output_limit = entry.output_limit.map(|s| s.0);
            rule.rlimits = entry.rlimits.map(Rlimits::from);
            rule.sha256 = entry.sha256.map(|s| s.0);
            rule.network = entry.network;
            policy = policy.allow(rule);
        }
        for rule in file.deny {
            policy = policy.deny_program(rule.into_inner());
        }
        policy = policy
            .env_passthrough(file.env.passthrough.into_iter().map(Spanned::into_inner))
            .env_allow(file.env.allow.into_iter().map(Spanned::into_inner))
            .allow_ld_env(file.allow_ld_env)
            .audit_only(file.audit_only);
        for dir in file.cwd_allow {
            policy = policy.cwd_allow(dir.into_inner());
        }
        if let Some(dir) = file.default_cwd {
            policy = policy.default_cwd(dir.into_inner());
        }
        if let Some(timeout) = file.timeout {
            policy = policy.timeout(timeout.into_inner().0);
        }
        if let Some(grace) = file.kill_grace {
            policy = policy.kill_grace(grace.0);
        }
        if let Some(limit) = file.output_limit {
            policy = policy.output_limit(limit.0);
        }
        if let Some(rlimits) = file.rlimits {
            policy = policy.rlimits(rlimits.into());
        }
        if let Some(max) = file.max_children {
            policy = policy.max_children(max.into_inner().0);
        }
        if let Some(enabled) = file.sandbox.enabled {
            policy = policy.child_sandbox(enabled);
        }
        for path in file.sandbox.read {
            policy = policy.sandbox_read(path.into_inner());
        }
        for dir in file.sandbox.write {
            policy = policy.sandbox_write(dir.into_inner());
        }
        if let Some(max) = file.sandbox.max_processes {
            policy = policy.sandbox_max_processes(max.into_inner());
        }
        if let Some(view) = file.sandbox.view {
            policy = policy.sandbox_view(view);
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5 s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1d").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2 KB"), Ok(2000));
        assert_eq!(parse_size("1.5MiB"), Ok(3 << 19));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert!(parse_size("1 mib").is_err());
        assert!(parse_size("99999999999 TiB").is_err());
    }

    #[test]
    fn line_numbers() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}

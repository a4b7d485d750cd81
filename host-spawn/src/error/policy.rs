//! Why a policy, or the file it was loaded from, cannot be used.

use std::io;
use std::path::PathBuf;

/// Why a [`Policy`](crate::Policy) cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A search directory is not absolute.
    #[error("search directory `{}` is not absolute", .dir.display())]
    RelativeSearchDir {
        /// The directory as written.
        dir: PathBuf,
    },
    /// An allow rule names a program that is not found.
    #[error("allow rule {}: program `{}` not found", .index + 1, .program.display())]
    ProgramNotFound {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// An allow rule names a relative path.
    #[error("allow rule {}: program `{}` must be a bare name or an absolute path", .index + 1, .program.display())]
    RelativeProgram {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// An allow rule names a file that is not executable.
    #[error("allow rule {}: `{}` is not executable", .index + 1, .program.display())]
    NotExecutable {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
    },
    /// Two allow rules resolve to the same program.
    #[error("allow rule {}: `{}` already has allow rule {}", .index + 1, .path.display(), .first + 1)]
    DuplicateRule {
        /// Index of the second rule.
        index: usize,
        /// Index of the first rule.
        first: usize,
        /// The canonical path both resolve to.
        path: PathBuf,
    },
    /// An argument pattern is malformed.
    #[error("allow rule {}: argument pattern {}: {reason}", .index + 1, .pattern + 1)]
    BadPattern {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// Index of the pattern list.
        pattern: usize,
        /// What is wrong.
        reason: String,
    },
    /// An `LD_*`/`DYLD_*` name is listed but `allow_ld_env` is off.
    #[error(
        "environment variable `{name}` is a dynamic-loader variable; only a policy with `allow_ld_env = true` may list it"
    )]
    LoaderEnv {
        /// The name.
        name: String,
    },
    /// One of glibc's unsafe variables (`GCONV_PATH`, `TMPDIR`, …) is listed: never allowed.
    #[error("environment variable `{name}` changes what programs load or read and is never passed to a child")]
    UnsafeEnv {
        /// The name.
        name: String,
    },
    /// A timeout of zero, which would kill every child at once (write `"none"` for no
    /// timeout).
    #[error("{}: `timeout` must be more than 0 (write \"none\" for no timeout)", rule_name(*.index))]
    ZeroTimeout {
        /// The allow rule (0-based), or `None` for the policy's default.
        index: Option<usize>,
    },
    /// `args = []`: a rule that accepts no argument list at all.
    #[error(
        "allow rule {}: `args = []` accepts no call at all; write `[[]]` for \"no arguments\" or leave `args` out",
        .index + 1
    )]
    EmptyArgs {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
    },
    /// A deny rule is a relative path.
    #[error("deny rule {}: `{}` must be a bare name or an absolute path", .index + 1, .program.display())]
    RelativeDeny {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// A deny rule names nothing that exists, so it could never match.
    #[error("deny rule {}: `{}` is not found, so it would never match", .index + 1, .program.display())]
    DenyNotFound {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// A deny rule names a file that is not an executable, so it could never match.
    #[error("deny rule {}: `{}` is not executable, so it would never match", .index + 1, .program.display())]
    DenyNotExecutable {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The rule as written.
        program: PathBuf,
    },
    /// `default_cwd` or a `cwd_allow` entry is relative.
    #[error("working directory `{}` must be an absolute path", .dir.display())]
    RelativeCwd {
        /// The directory as written.
        dir: PathBuf,
    },
    /// `[sandbox] max_processes` is 0.
    #[error("sandbox.max_processes must be at least 1")]
    ZeroMaxProcesses,
    /// A `[sandbox]` `read` or `write` path is relative.
    #[error("sandbox path `{}` must be an absolute path", .path.display())]
    RelativeSandboxPath {
        /// The path as written.
        path: PathBuf,
    },
    /// A `[sandbox]` `read` or `write` path cannot be resolved.
    #[error("sandbox path `{}` cannot be resolved", .path.display())]
    SandboxPath {
        /// The path as written.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// An environment variable name is empty or contains `=` or NUL.
    #[error("environment variable name `{name}` is invalid")]
    BadEnvName {
        /// The name, lossily decoded.
        name: String,
    },
    /// An allowed or default working directory cannot be canonicalised.
    #[error("working directory `{}` cannot be used", .dir.display())]
    Cwd {
        /// The directory as written.
        dir: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// An allow rule pins a SHA-256 that its program does not have, or its program cannot be
    /// hashed, or is a `#!` script (which cannot be pinned).
    #[error("allow rule {}: `{}` {reason}", .index + 1, .program.display())]
    Sha256 {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
        /// The program as written.
        program: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `max_children` is zero.
    #[error("`max_children` must be an integer ≥ 1")]
    ZeroMaxChildren,
    /// An allow rule's program is the empty string.
    #[error("allow rule {}: `program` is empty; write the program's bare name or absolute path", .index + 1)]
    EmptyProgram {
        /// Index of the rule (0-based; messages count from 1).
        index: usize,
    },
}

/// A key of a policy file that its table does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownKey {
    /// The key as a dotted path (`allow[2].flags`, rules counted from 1).
    pub key: String,
    /// Its 1-based line.
    pub line: usize,
    /// What was probably meant, as a sentence: where the key belongs when another table knows
    /// it (``"`allow_ld_env` belongs at the top level, not in `[env]`"``), or the nearest key
    /// of its own table (``"did you mean `timeout`?"``).
    pub hint: Option<String>,
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` at line {}", self.key, self.line)?;
        match &self.hint {
            Some(hint) => write!(f, " ({hint})"),
            None => Ok(()),
        }
    }
}

fn unknown_keys(keys: &[UnknownKey]) -> String {
    let list: Vec<String> = keys.iter().map(UnknownKey::to_string).collect();
    let noun = if keys.len() == 1 { "unknown key" } else { "unknown keys" };
    format!("{noun}: {}", list.join(", "))
}

fn invalid_entries(errors: &[(usize, PolicyError)]) -> String {
    let list: Vec<String> = errors.iter().map(|(line, error)| format!("line {line}: {error}")).collect();
    format!("{} invalid entries: {}", errors.len(), list.join("; "))
}

fn rule_name(index: Option<usize>) -> String {
    index.map_or_else(|| "policy".to_owned(), |i| format!("allow rule {}", i + 1))
}

/// Why a policy file could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyFileError {
    /// The file could not be read.
    #[error("failed to read policy file `{}`", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The file is not valid TOML, has an unknown key, or a value of the wrong shape.
    /// The message includes the line and column.
    #[error("invalid policy file `{}`", .path.display())]
    Parse {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// The parser's error, with the line and column.
        #[source]
        source: toml::de::Error,
    },
    /// The file has keys the format does not know (every one is listed, with its line and
    /// what was probably meant).
    #[error("invalid policy file `{}`: {}", .path.display(), unknown_keys(.keys))]
    UnknownKeys {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// Each unknown key, in file order.
        keys: Vec<UnknownKey>,
    },
    /// `allow` is one table (`[allow]`, `allow = { … }`) instead of a list of rule tables
    /// (`[[allow]]`).
    #[error(
        "invalid policy file `{}` at line {line}: `allow` is a list of rules: write `[[allow]]` for each rule",
        .path.display()
    )]
    AllowNotList {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// The 1-based line of the `allow` key or `[allow]` header.
        line: usize,
    },
    /// The file parses, but several of its entries are unusable: every bad `deny` entry is
    /// reported at once.
    #[error("invalid policy file `{}`: {}", .path.display(), invalid_entries(.errors))]
    InvalidEntries {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// Each bad entry's 1-based line and what is wrong with it, in rule order.
        errors: Vec<(usize, PolicyError)>,
    },
    /// The file parses but describes an unusable policy.
    #[error("invalid policy file `{}` at line {line}", .path.display())]
    Invalid {
        /// The file (`<string>` for [`Policy::from_toml_str`](crate::Policy::from_toml_str)).
        path: PathBuf,
        /// The 1-based line of the offending value.
        line: usize,
        /// What is wrong.
        #[source]
        source: PolicyError,
    },
}

//! What `wrt policy check` reports: every rule resolved, and warnings about rules that are,
//! in practice, permission to run anything.

use std::path::{Path, PathBuf};

use super::{CompiledPolicy, Policy};
use crate::error::PolicyError;

/// A validated policy's rules as they resolved on this host, and what looks unsafe in them.
/// Built by [`Policy::report`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PolicyReport {
    /// Each allow rule as written, and the canonical path it resolved to, in file order.
    pub allow: Vec<(PathBuf, PathBuf)>,
    /// Each deny rule as written, and every canonical path it covers.
    pub deny: Vec<(PathBuf, Vec<PathBuf>)>,
    /// What looks unsafe, in rule order.
    pub warnings: Vec<PolicyWarning>,
}

/// One finding of [`Policy::report`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyWarning {
    /// The allow rule (0-based; messages count from 1), or `None` for the policy as a whole.
    pub rule: Option<usize>,
    /// What is wrong and what to do about it.
    pub message: String,
}

/// How a program with a known escape can be made to run other programs or write files.
struct Escape {
    /// Program names (the rule as written, or the file it resolves to).
    names: &'static [&'static str],
    /// Runs code given in its arguments: any open wildcard in a pattern is enough.
    runs_code: bool,
    /// The escapes, for the message.
    how: &'static str,
}

const ESCAPES: &[Escape] = &[
    Escape {
        names: &["cc", "gcc", "g++", "c++", "clang", "clang++", "cpp"],
        runs_code: false,
        how: "`-wrapper`, `@file` response files, `-fplugin=` and `-B` run any program",
    },
    Escape {
        names: &["git"],
        runs_code: false,
        how: "`-c`, `--output=`, `--upload-pack`, `--exec-path`, `core.sshCommand`, `core.fsmonitor`, filters and hooks run programs or write files",
    },
    Escape {
        names: &["ssh", "scp", "sftp"],
        runs_code: false,
        how: "`-o ProxyCommand=` and `LocalCommand` run any program",
    },
    Escape {
        names: &["tar"],
        runs_code: false,
        how: "`--to-command`, `--checkpoint-action=exec` and `--use-compress-program` run any program",
    },
    Escape {
        names: &["find"],
        runs_code: false,
        how: "`-exec`, `-execdir`, `-ok` run programs and `-fprint` writes files",
    },
    Escape {
        names: &["xargs", "env", "nice", "nohup", "timeout", "setsid", "stdbuf"],
        runs_code: true,
        how: "it runs the program its arguments name",
    },
    Escape {
        names: &[
            "sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "python", "python3", "perl", "ruby", "node", "php",
            "lua",
        ],
        runs_code: true,
        how: "it runs the code its arguments give",
    },
    Escape {
        names: &["make", "gmake"],
        runs_code: false,
        how: "it runs the commands of any makefile (`-f`) and `--eval`",
    },
    Escape {
        names: &["awk", "gawk", "mawk", "nawk"],
        runs_code: true,
        how: "`system()` and pipes in a program run any command",
    },
    Escape { names: &["sed"], runs_code: false, how: "`-e` scripts with `e` run commands and `w` writes files" },
    Escape {
        names: &["vi", "vim", "nvim", "less", "more", "man"],
        runs_code: false,
        how: "`:!`, `!cmd`, `LESSOPEN` and pagers run commands",
    },
];

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// The known escape of a rule, by the name it is written as or the file it resolves to
/// (`cc` → `x86_64-linux-gnu-gcc-12`).
fn escape_of(written: &Path, canonical: &Path) -> Option<&'static Escape> {
    let names = [file_name(written), file_name(canonical)];
    ESCAPES.iter().find(|escape| {
        names.iter().any(|name| {
            escape.names.iter().any(|known| {
                *name == *known
                    || name
                        .strip_prefix(known)
                        .is_some_and(|rest| rest.starts_with(['-', '.']) || rest.chars().all(|c| c.is_ascii_digit()))
                    || name.rsplit_once('-').is_some_and(|(_, tool)| tool == *known)
                    || (matches!(*known, "gcc" | "clang") && name.contains(&format!("-{known}-")))
            })
        })
    })
}

impl Policy {
    /// Validates the policy, resolves every rule, and lists rules that are effectively
    /// permission to run anything: a program with known exec or write escapes (compilers,
    /// `git`, `ssh`, `tar`, `find`, `xargs`, `env`, shells and interpreters, `make`, `awk`,
    /// `sed`, pagers and editors) allowed with free arguments, or with patterns that admit
    /// options or `@file` arguments the rule does not spell out.
    ///
    /// # Errors
    ///
    /// As [`Policy::validate`].
    ///
    /// # Ambient authority
    ///
    /// Resolves programs and directories on the host's file system.
    pub fn report(&self) -> Result<PolicyReport, PolicyError> {
        let compiled = self.compile()?;
        Ok(report(self, &compiled))
    }
}

fn report(policy: &Policy, compiled: &CompiledPolicy) -> PolicyReport {
    let mut allow = Vec::new();
    let mut warnings = Vec::new();
    for (index, rule) in policy.allow.iter().enumerate() {
        let Some((path, compiled_rule)) = compiled.allow.iter().find(|(_, r)| r.written == rule.program) else {
            continue;
        };
        allow.push((rule.program.clone(), path.clone()));
        let Some(escape) = escape_of(&rule.program, path) else { continue };
        let shown = rule.program.display();
        let problem = match &compiled_rule.args {
            None => Some("any arguments are allowed".to_owned()),
            Some(patterns) if escape.runs_code && patterns.iter().any(|p| p.has_open_wildcard()) => {
                Some("a pattern has `*`, `?`, `**` or a negated class".to_owned())
            }
            Some(patterns) if patterns.iter().any(|p| p.admits_leading(&['-', '@'])) => {
                Some("a pattern admits options or `@file` arguments it does not spell out".to_owned())
            }
            Some(_) => None,
        };
        if let Some(problem) = problem {
            warnings.push(PolicyWarning {
                rule: Some(index),
                message: format!(
                    "allow rule {} (`{shown}`) is effectively allow-all: {problem}, and {}; restrict it to fixed arguments",
                    index + 1,
                    escape.how
                ),
            });
        }
    }
    if policy.audit_only {
        warnings.push(PolicyWarning {
            rule: None,
            message: "`audit_only = true` runs every request: for finding out what a guest needs, never for production"
                .to_owned(),
        });
    }
    let mut deny: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for written in &policy.deny {
        let paths = compiled.deny.iter().filter(|(_, _, w)| w == written).map(|(p, _, _)| p.clone()).collect();
        deny.push((written.clone(), paths));
    }
    PolicyReport { allow, deny, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProgramRule;

    fn warnings(policy: Policy) -> Vec<String> {
        policy.report().unwrap().warnings.into_iter().map(|w| w.message).collect()
    }

    #[test]
    fn free_arguments_to_a_known_escape_are_flagged() {
        let found = warnings(Policy::deny_all().allow_program("sh").allow_program("true"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("allow rule 1 (`sh`) is effectively allow-all: any arguments"), "{found:?}");
    }

    #[test]
    fn patterns_are_judged_by_what_they_admit() {
        let digits = Policy::deny_all().allow(ProgramRule::new("sh").args(["/opt/report.sh", "[0-9][0-9]"]));
        assert!(warnings(digits).is_empty(), "a class lists its characters");
        let open = Policy::deny_all().allow(ProgramRule::new("sh").args(["/opt/report.sh", "x*"]));
        assert!(warnings(open)[0].contains("a pattern has `*`"));
        let fixed = Policy::deny_all().allow(ProgramRule::new("sh").args(["/opt/report.sh"]));
        assert!(warnings(fixed).is_empty());
        let cc = Policy::deny_all().allow(ProgramRule::new("cc").args(["-c", "*.c"]));
        assert!(warnings(cc)[0].contains("`@file`"));
        let cc = Policy::deny_all().allow(ProgramRule::new("cc").args(["-c", "[!@-]*.c"]));
        assert!(warnings(cc).is_empty());
        let git = Policy::deny_all().allow(ProgramRule::new("git").args(["diff", "**"]));
        assert!(warnings(git)[0].contains("--output="));
    }

    #[test]
    fn names_are_recognised_through_what_they_resolve_to() {
        assert!(escape_of(Path::new("cc"), Path::new("/usr/bin/x86_64-linux-gnu-gcc-12")).is_some());
        assert!(escape_of(Path::new("python3.11"), Path::new("/usr/bin/python3.11")).is_some());
        assert!(escape_of(Path::new("true"), Path::new("/usr/bin/true")).is_none());
        assert!(escape_of(Path::new("shred"), Path::new("/usr/bin/shred")).is_none());
    }
}

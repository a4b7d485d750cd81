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

mod identity;
mod programs;

use self::identity::{KnownFiles, Recognised};
use self::programs::{Family, Kind, env_covers};
use super::pattern::ArgsPattern;

impl Policy {
    /// Validates the policy, resolves every rule, and lists rules that are effectively
    /// permission to run anything or write anywhere, judged by what each rule admits for the
    /// program families it knows (shells and interpreters fed by stdin, program text in the
    /// arguments, runners, writers, options that run programs or write files, tools no
    /// pattern makes safe), recognised by name, by the file a rule resolves to, and by that
    /// file's contents; and the variables of `env.allow` that make an allowed program run
    /// code the guest chooses. docs/policy.md, "Checking a policy", lists them.
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

/// Names that make a program read its program text from stdin.
const STDIN_NAMES: &[&str] = &["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/dev/tty"];

/// What is wrong with one rule of a known family, and what would be safe instead; `None`
/// when its argument lists are safe for its kind.
fn problem(family: &Family, args: Option<&[ArgsPattern]>) -> Option<(String, &'static str)> {
    let Some(patterns) = args else {
        let fix = match family.kind {
            Kind::ReadsStdin | Kind::ShellRunner | Kind::Admin => NO_PATTERN,
            _ => "restrict it to fixed argument lists (`args = [[...]]`)",
        };
        return Some(("any arguments are allowed".to_owned(), fix));
    };
    match family.kind {
        Kind::ReadsStdin | Kind::ShellRunner | Kind::Admin => {
            return Some((String::new(), NO_PATTERN));
        }
        Kind::Interpreter { code_options } => {
            if patterns.iter().any(ArgsPattern::has_open_wildcard) {
                return Some((OPEN.to_owned(), FIXED_CODE));
            }
            if let Some(pattern) = patterns.iter().find(|p| reads_stdin(p, code_options)) {
                let (literals, _) = pattern.literals();
                let shown: Vec<String> = literals.into_iter().flatten().map(|l| format!("\"{l}\"")).collect();
                return Some((
                    format!(
                        "the argument list [{}] gives it no script, so it reads one from its stdin",
                        shown.join(", ")
                    ),
                    FIXED_CODE,
                ));
            }
        }
        Kind::CodeInArgs | Kind::Runner | Kind::Writer => {
            if patterns.iter().any(ArgsPattern::has_open_wildcard) {
                let fix = match family.kind {
                    Kind::CodeInArgs => "spell its program text out in full, with no wildcard",
                    Kind::Runner => "allow the program it would run directly, with fixed arguments",
                    _ => "spell the files out, with no `*`, `?`, `**` or negated class",
                };
                return Some((OPEN.to_owned(), fix));
            }
            if family.kind == Kind::CodeInArgs && patterns.iter().any(names_stdin) {
                return Some((
                    "an argument list makes it read its program from stdin (`-f -`, `/dev/stdin`)".to_owned(),
                    FIXED_CODE,
                ));
            }
        }
        Kind::Options => {}
    }
    let starts: &[char] = if family.names.contains(&"cc") { &['-', '@'] } else { &['-'] };
    let admitting: Vec<&ArgsPattern> = patterns.iter().filter(|p| p.admits_leading(starts)).collect();
    if admitting.is_empty() {
        return None;
    }
    // In the family's order, each once, whichever patterns admit it.
    let admitted: Vec<&str> = family
        .options
        .iter()
        .copied()
        .filter(|option| admitting.iter().any(|p| !p.admitted(&[option]).is_empty()))
        .collect();
    let what = if starts.contains(&'@') { "options or `@file` arguments" } else { "options" };
    let problem = if admitted.is_empty() {
        format!("a pattern admits {what} it does not spell out")
    } else {
        let list: Vec<String> = admitted.iter().map(|o| format!("`{o}`")).collect();
        format!("a pattern admits {what} it does not spell out, {} among them", list.join(", "))
    };
    Some((
        problem,
        "start every pattern that is not a fixed text with a class that excludes `-` (and `@`), such as `[!@-]*`",
    ))
}

const OPEN: &str = "a pattern has `*`, `?`, `**` or a negated class";
const NO_PATTERN: &str = "no argument pattern makes it safe: allow a program that does the one task instead";
const FIXED_CODE: &str =
    "give it a fixed script file (`args = [[\"/opt/jobs/task.sh\"]]`) or fixed code (`-c`), never its stdin";

/// Whether an argument list of an interpreter leaves it reading its program from stdin: it
/// names stdin (`-`, `/dev/stdin`), asks for it (`-s`, `-i`), or gives neither a script (a
/// fixed argument that is no option) nor fixed code after one of `code_options`.
fn reads_stdin(pattern: &ArgsPattern, code_options: &[&str]) -> bool {
    let (literals, _) = pattern.literals();
    if names_stdin(pattern) || literals.iter().flatten().any(|l| l == "-s" || l == "-i") {
        return true;
    }
    let mut gives_code = false;
    let mut after_code_option = false;
    for literal in &literals {
        match literal {
            Some(_) if after_code_option => {
                gives_code = true;
                after_code_option = false;
            }
            Some(text) if code_options.contains(&text.as_str()) => after_code_option = true,
            Some(text) if !text.starts_with('-') => gives_code = true,
            _ => after_code_option = false,
        }
    }
    !gives_code
}

/// Whether an argument list names stdin as a file.
fn names_stdin(pattern: &ArgsPattern) -> bool {
    pattern.literals().0.iter().flatten().any(|l| STDIN_NAMES.contains(&l.as_str()))
}

/// What the child sandbox still bounds, for the end of a warning.
fn bounded(policy: &Policy) -> &'static str {
    if policy.sandbox.enabled {
        "Under the child sandbox it still reaches only the system locations, the guest's directories and \
         `sandbox.read`/`sandbox.write`, without network unless the rule sets `network = true`, but there \
         it can do anything"
    } else {
        "With the child sandbox off (`[sandbox] enabled = false`), that is everything wrt's user can do"
    }
}

fn report(policy: &Policy, compiled: &CompiledPolicy) -> PolicyReport {
    let mut allow = Vec::new();
    let mut warnings = Vec::new();
    let known = KnownFiles::find(&compiled.search_path);
    let mut families: Vec<(usize, &Path, &'static Family)> = Vec::new();
    for (index, rule) in policy.allow.iter().enumerate() {
        let Some((path, compiled_rule)) = compiled.allow.iter().find(|(_, r)| r.written == rule.program) else {
            continue;
        };
        allow.push((rule.program.clone(), path.clone()));
        let Some((family, recognised)) = known.family_of(&rule.program, path) else { continue };
        families.push((index, rule.program.as_path(), family));
        let Some((problem, fix)) = problem(family, compiled_rule.args.as_deref()) else { continue };
        let shown = rule.program.display();
        let identity = match recognised {
            Recognised::Name => String::new(),
            Recognised::HardLink(of) => format!(" (a hard link of `{}`)", of.display()),
            Recognised::Copy(of) => format!(" (a copy of `{}`)", of.display()),
        };
        warnings.push(PolicyWarning {
            rule: Some(index),
            message: format!(
                "allow rule {} (`{shown}`{identity}) is effectively allow-all: {}; {fix}. {}.",
                index + 1,
                if problem.is_empty() { family.how.to_owned() } else { format!("{problem}, and {}", family.how) },
                bounded(policy)
            ),
        });
    }
    for name in &policy.env_allow {
        let Some(name) = name.to_str() else { continue };
        let affected: Vec<String> = families
            .iter()
            .filter(|(_, _, family)| family.env.iter().any(|env| env_covers(env, name)))
            .map(|(index, program, _)| format!("allow rule {} (`{}`)", index + 1, program.display()))
            .collect();
        if !affected.is_empty() {
            warnings.push(PolicyWarning {
                rule: None,
                message: format!(
                    "`env.allow` lists `{name}`, which makes {} run or load code the guest chooses; remove it, \
                     and set a fixed value in the rule's own `env` if the program needs one. {}.",
                    affected.join(" and "),
                    bounded(policy)
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

    /// The warnings for one rule, or `None` when the program is not installed here.
    fn rule_warnings(rule: ProgramRule) -> Option<Vec<String>> {
        let policy = Policy::deny_all().allow(rule);
        policy.validate().ok()?;
        Some(warnings(policy))
    }

    fn rule(program: &str, args: &[&str]) -> ProgramRule {
        ProgramRule::new(program).args(args.iter().copied())
    }

    #[test]
    fn free_arguments_to_a_known_escape_are_flagged() {
        let found = warnings(Policy::deny_all().allow_program("sh").allow_program("true"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("allow rule 1 (`sh`) is effectively allow-all: any arguments"), "{found:?}");
        assert!(found[0].contains("Under the child sandbox it still reaches only"), "{found:?}");
    }

    #[test]
    fn patterns_are_judged_by_what_they_admit() {
        let digits = Policy::deny_all().allow(rule("sh", &["/opt/report.sh", "[0-9][0-9]"]));
        assert!(warnings(digits).is_empty(), "a class lists its characters");
        let open = Policy::deny_all().allow(rule("sh", &["/opt/report.sh", "x*"]));
        assert!(warnings(open)[0].contains("a pattern has `*`"));
        let fixed = Policy::deny_all().allow(rule("sh", &["/opt/report.sh"]));
        assert!(warnings(fixed).is_empty());
        let cc = Policy::deny_all().allow(rule("cc", &["-c", "*.c"]));
        assert!(warnings(cc)[0].contains("`@file`"));
        let cc = Policy::deny_all().allow(rule("cc", &["-c", "[!@-]*.c"]));
        assert!(warnings(cc).is_empty());
        let git = Policy::deny_all().allow(rule("git", &["diff", "**"]));
        assert!(warnings(git)[0].contains("--output="));
    }

    /// A shell or interpreter whose fixed arguments give no script reads one from the stdin
    /// the guest writes; `ed`, `gdb`, `sqlite3` and `psql` read commands from it whatever
    /// their arguments.
    #[test]
    fn interpreters_fed_by_stdin_are_flagged_whatever_their_fixed_arguments() {
        for (program, args) in [
            ("sh", &[][..]),
            ("bash", &["-s"][..]),
            ("python3", &["-"][..]),
            ("perl", &[][..]),
            ("node", &[][..]),
            ("ed", &["/tmp/notes"][..]),
            ("awk", &["-f", "/dev/stdin"][..]),
            ("sed", &["-f", "/dev/stdin"][..]),
            ("make", &["-f", "-"][..]),
            ("gdb", &["-q"][..]),
            ("sqlite3", &[":memory:"][..]),
            ("psql", &[][..]),
            ("tclsh", &[][..]),
        ] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert_eq!(found.len(), 1, "{program} {args:?}: {found:?}");
            assert!(found[0].contains("stdin"), "{program} {args:?}: {found:?}");
        }
        for (program, args) in [
            ("sh", &["/opt/jobs/report.sh"][..]),
            ("sh", &["-c", "echo hi"][..]),
            ("python3", &["-c", "print(1)"][..]),
            ("python3", &["-m", "json.tool"][..]),
            ("awk", &["{ print $1 }"][..]),
            ("sed", &["s/a/b/"][..]),
            ("make", &["-C", "/tmp", "all"][..]),
        ] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert!(found.is_empty(), "{program} {args:?}: {found:?}");
        }
    }

    /// A pattern that can produce an option the rule does not spell out, through a wildcard,
    /// a class or an escaped `-`, is flagged with the dangerous options it lets through.
    #[test]
    fn patterns_that_admit_options_are_flagged_with_the_options() {
        for (program, args, option) in [
            ("git", &["log", "--o*"][..], Some("`--output=`")),
            ("git", &["log", "--[a-z]*"][..], Some("`--output=`")),
            ("git", &["log", "\\-\\-output=*"][..], Some("`--output=`")),
            ("cc", &["-c", "-W*", "[!@-]*.c"][..], Some("`-Wl,-plugin`")),
            ("cc", &["-c", "-Wl,*", "[!@-]*.c"][..], None),
            ("tar", &["-t", "-[a-z]*"][..], None),
        ] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert_eq!(found.len(), 1, "{program} {args:?}: {found:?}");
            assert!(found[0].contains("admits options"), "{program} {args:?}: {found:?}");
            if let Some(option) = option {
                assert!(found[0].contains(option), "{program} {args:?}: {found:?}");
            }
        }
        // Program text in the arguments: any open wildcard is code.
        for (program, args) in [("sed", &["-n", "[!@-]*"][..]), ("make", &["-C", "/tmp", "[a-z]*"][..])] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert!(found[0].contains("a pattern has `*`"), "{program} {args:?}: {found:?}");
        }
    }

    #[test]
    fn variables_that_inject_code_are_flagged_for_the_programs_they_reach() {
        let policy = |program: &str, name: &str| {
            Policy::deny_all().allow(rule(program, &["-c", "true"])).allow_program("true").env_allow([name])
        };
        for (program, name) in [
            ("bash", "BASH_ENV"),
            ("sh", "ENV"),
            ("bash", "SHELLOPTS"),
            ("bash", "PS4"),
            ("python3", "PYTHONSTARTUP"),
            ("python3", "PYTHONPATH"),
            ("perl", "PERL5OPT"),
            ("node", "NODE_OPTIONS"),
            ("git", "GIT_CONFIG_COUNT"),
            ("git", "GIT_SSH_COMMAND"),
            ("git", "GIT_PAGER"),
            ("cc", "GCC_EXEC_PREFIX"),
        ] {
            let found = warnings(policy(program, name));
            assert!(
                found
                    .iter()
                    .any(|w| w.starts_with(&format!("`env.allow` lists `{name}`")) && w.contains("allow rule 1")),
                "{program} {name}: {found:?}"
            );
        }
        // Only where a program it reaches is allowed.
        let found = warnings(Policy::deny_all().allow_program("true").env_allow(["NODE_OPTIONS", "LANG"]));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn runners_writers_and_host_tools_are_known() {
        for program in ["chroot", "unshare", "nsenter", "script", "mount", "su"] {
            let Some(found) = rule_warnings(rule(program, &["x"])) else { continue };
            assert_eq!(found.len(), 1, "{program}: {found:?}");
            assert!(found[0].contains("no argument pattern makes it safe"), "{program}: {found:?}");
        }
        for (program, args) in [
            ("flock", &["/tmp/lock", "*"][..]),
            ("strace", &["-f", "**"][..]),
            ("taskset", &["1", "*"][..]),
            ("cp", &["/srv/in", "*"][..]),
            ("dd", &["if=/srv/in", "of=*"][..]),
            ("tee", &["[!-]*"][..]),
            ("sort", &["-o", "*"][..]),
            ("truncate", &["-s", "0", "*"][..]),
            ("curl", &["-s", "*"][..]),
        ] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert_eq!(found.len(), 1, "{program} {args:?}: {found:?}");
        }
        for (program, args) in [("cp", &["/srv/in", "/srv/out"][..]), ("flock", &["/tmp/lock", "true"][..])] {
            let Some(found) = rule_warnings(rule(program, args)) else { continue };
            assert!(found.is_empty(), "{program} {args:?}: {found:?}");
        }
    }

    #[test]
    fn a_copy_of_a_shell_under_another_name_is_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("report-tool");
        std::fs::copy(std::fs::canonicalize("/bin/bash").unwrap(), &copy).unwrap();
        let found = warnings(Policy::deny_all().allow(ProgramRule::new(&copy).args::<[&str; 0], &str>([])));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("(a copy of `"), "{found:?}");
        assert!(found[0].contains("stdin"), "{found:?}");
    }

    #[test]
    fn versioned_names_are_recognised() {
        assert!(programs::family_named("perl5.36.0").is_some());
        assert!(programs::family_named("ruby3.1").is_some());
        assert!(programs::family_named("python3.11").is_some());
        assert!(programs::family_named("x86_64-linux-gnu-gcc-12").is_some());
        assert!(programs::family_named("true").is_none());
    }
}

//! The examples of docs/policy.md, loaded as written and held to what the text around them
//! promises (the first example once allowed any command, did not work, and let a "read-only"
//! `git` write files).

use std::fs;
use std::path::Path;

use wrt_host_spawn::{Command, Denial, Policy, SpawnError, Spawner};

use crate::lock;

const DOC: &str = include_str!("../../../docs/policy.md");

/// The TOML blocks of the doc, in order.
fn examples() -> Vec<&'static str> {
    DOC.split("```toml\n").skip(1).map(|block| block.split("```").next().unwrap()).collect()
}

/// Example 1 with its work directory replaced by `dir`.
fn build_policy(dir: &Path) -> Policy {
    let text = examples()[0].replace("/srv/build", dir.to_str().unwrap());
    Policy::from_toml_str(&text).unwrap_or_else(|e| panic!("{}", wrt_text::error_chain(&e)))
}

fn work_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let canonical = fs::canonicalize(dir.path()).unwrap();
    (dir, canonical)
}

fn have(tool: &str) -> bool {
    let found = Policy::deny_all().allow_program(tool).validate().is_ok();
    if !found {
        eprintln!("SKIPPED: `{tool}` is not installed");
    }
    found
}

#[test]
fn every_example_loads() {
    let blocks = examples();
    assert_eq!(blocks.len(), 3);
    let (_guard, dir) = work_dir();
    for block in blocks {
        let text = block.replace("/srv/build", dir.to_str().unwrap());
        if let Err(e) = Policy::from_toml_str(&text) {
            panic!("{}\n{block}", wrt_text::error_chain(&e));
        }
    }
}

/// Example 1's `*.c` also matched gcc's `@file` response files, so `cc -c -O2 @evil.c -o x.o`
/// ran whatever `evil.c` said (`-wrapper /bin/sh,-c,...`).
#[test]
fn example_1_cc_refuses_response_files() {
    if !have("cc") {
        return;
    }
    let _lock = lock();
    let (_guard, dir) = work_dir();
    fs::write(dir.join("ok.c"), "int f(void) { return 1; }\n").unwrap();
    fs::write(dir.join("evil.c"), "-wrapper /bin/sh,-c,id>PWNED ok.c\n").unwrap();
    let spawner = Spawner::new(build_policy(&dir)).unwrap();
    for args in [
        ["-c", "-O2", "@evil.c", "-o", "x.o"],
        ["-c", "-O2", "ok.c", "-o", "@x.o"],
        ["-c", "-O2", "-wrapper.c", "-o", "x.o"],
        ["-c", "-O2", "ok.c", "-o", "-fplugin=x.o"],
    ] {
        let err = spawner.spawn(Command::new("cc").args(args).cwd(&dir)).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::Args { .. }, .. }), "{args:?}: {err}");
    }
    assert!(!dir.join("PWNED").exists());
}

/// Example 1 compiles for real: the child runs with argv[0] `cc` and a `PATH` (through which
/// gcc finds `cc1`), which the request cannot replace.
#[test]
fn example_1_cc_compiles() {
    if !have("cc") {
        return;
    }
    let _lock = lock();
    let (_guard, dir) = work_dir();
    fs::write(dir.join("ok.c"), "int f(void) { return 1; }\n").unwrap();
    let spawner = Spawner::new(build_policy(&dir)).unwrap();
    let output = spawner.output(Command::new("cc").args(["-c", "-O2", "ok.c", "-o", "ok.o"]).cwd(&dir), None).unwrap();
    assert!(output.outcome.success(), "{:?}: {}", output.outcome, String::from_utf8_lossy(&output.stderr));
    assert!(fs::metadata(dir.join("ok.o")).unwrap().len() > 0);
    // In the default directory too, which is the work directory.
    fs::remove_file(dir.join("ok.o")).unwrap();
    let output = spawner.output(Command::new("cc").args(["-c", "-O2", "ok.c", "-o", "ok.o"]), None).unwrap();
    assert!(output.outcome.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // The request cannot replace the rule's PATH: it may set no variable at all.
    let err =
        spawner.spawn(Command::new("cc").args(["-c", "-O2", "ok.c", "-o", "ok.o"]).env("PATH", "/tmp")).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::Env { .. }, .. }), "{err}");
}

/// Example 1's "read-only" `git` rule allowed `diff --no-index --output=FILE`, which writes
/// files.
#[test]
fn example_1_git_is_read_only() {
    if !have("git") {
        return;
    }
    let _lock = lock();
    let (_guard, dir) = work_dir();
    let spawner = Spawner::new(build_policy(&dir)).unwrap();
    let target = dir.join("written");
    let output_arg = format!("--output={}", target.display());
    for args in [
        vec!["diff", "--no-index", &output_arg, "a", "b"],
        vec!["-c", "core.fsmonitor=false", "--no-pager", "diff", "--no-index", &output_arg, "a", "b"],
        vec!["-c", "core.fsmonitor=false", "--no-pager", "log", "--oneline", "-n", "1", &output_arg],
        vec!["-c", "core.pager=sh", "--no-pager", "status", "--short"],
        vec!["-c", "core.fsmonitor=false", "--no-pager", "log", "--oneline", "-n", "$(id)"],
    ] {
        let err = spawner.spawn(Command::new("git").args(&args).cwd(&dir)).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::Args { .. }, .. }), "{args:?}: {err}");
    }
    assert!(!target.exists());
    // What the example does allow runs.
    let init = std::process::Command::new(spawner_git_path()).args(["init", "-q"]).current_dir(&dir).status().unwrap();
    assert!(init.success());
    let output = spawner
        .output(Command::new("git").args(["-c", "core.fsmonitor=false", "--no-pager", "status", "--short"]), None)
        .unwrap();
    assert!(output.outcome.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

fn spawner_git_path() -> std::path::PathBuf {
    let report = Policy::deny_all().allow_program("git").report().unwrap();
    report.allow[0].1.clone()
}

/// Example 2: the date is digits, not any character.
#[test]
fn example_2_the_date_pattern_refuses_shell_syntax() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::from_toml_str(examples()[1]).unwrap()).unwrap();
    for day in ["$(id-;;-|x", "2026-11-3;", "2026-1x-30", "2026-11-30 "] {
        let err = spawner.spawn(Command::new("sh").args(["/opt/jobs/report.sh", "--day", day])).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::Args { .. }, .. }), "{day}: {err}");
    }
    let explained = Policy::from_toml_str(examples()[1])
        .unwrap()
        .explain(Command::new("sh").args(["/opt/jobs/report.sh", "--day", "2026-11-30"]))
        .unwrap();
    assert_eq!(explained.decision, wrt_host_spawn::Decision::Allow, "{}", explained.reason);
}

/// The doc's examples pass `policy check` with no warning, but for the audit-only one, whose
/// warning is its point.
#[test]
fn the_examples_pass_policy_check() {
    let (_guard, dir) = work_dir();
    for (i, block) in examples().into_iter().enumerate() {
        let text = block.replace("/srv/build", dir.to_str().unwrap());
        let report = Policy::from_toml_str(&text).unwrap().report().unwrap();
        let warnings: Vec<&str> = report.warnings.iter().map(|w| w.message.as_str()).collect();
        if text.contains("audit_only = true") {
            assert_eq!(warnings.len(), 1, "example {}: {warnings:?}", i + 1);
            assert!(warnings[0].starts_with("`audit_only = true`"), "{warnings:?}");
        } else {
            assert!(warnings.is_empty(), "example {}: {warnings:?}", i + 1);
        }
    }
}

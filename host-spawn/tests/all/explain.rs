//! `Policy::explain` against the spawner: the same requests, generated across the policies of
//! docs/policy.md and a few more, get the same decision and the same reason from both.

use std::os::unix::fs::symlink;
use std::path::Path;

use std::time::Duration;

use wrt_host_spawn::{AuditLog, Command, Decision, Policy, RateLimit, Spawner};

use crate::{LogBuffer, lock};

const DOC: &str = include_str!("../../../docs/policy.md");

/// The policies to compare under: the doc's examples (with `/srv/build` replaced by `dir`),
/// and policies with deny rules, audit-only mode, environment lists and working directories.
fn policies(dir: &Path) -> Vec<(String, Policy)> {
    let mut policies: Vec<(String, Policy)> = DOC
        .split("```toml\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .enumerate()
        .map(|(i, text)| {
            let text = text.replace("/srv/build", dir.to_str().unwrap());
            (format!("doc example {}", i + 1), Policy::from_toml_str(&text).unwrap())
        })
        .collect();
    let rules = format!(
        r#"
        deny = ["su"]
        cwd_allow = ["{dir}"]
        [env]
        allow = ["LANG"]
        [[allow]]
        program = "true"
        [[allow]]
        program = "echo"
        args = [["hi"], ["[0-9]", "**"]]
        "#,
        dir = dir.display()
    );
    let loader =
        format!("allow_ld_env = true\n{}", rules.replace(r#"allow = ["LANG"]"#, r#"allow = ["LANG", "LD_PRELOAD"]"#));
    policies.push(("rules".to_owned(), Policy::from_toml_str(&rules).unwrap()));
    policies.push(("rules, LD_PRELOAD allowed".to_owned(), Policy::from_toml_str(&loader).unwrap()));
    policies
        .push(("rules, audit-only".to_owned(), Policy::from_toml_str(&format!("audit_only = true\n{rules}")).unwrap()));
    policies
}

/// Requests made of every combination of a program, arguments, environment and working
/// directory, including the ones the spawner hides things from.
fn requests(dir: &Path) -> Vec<Command> {
    let dangling = dir.join("dangling");
    let _ = symlink("/no/such/target", &dangling);
    let link_to_true = dir.join("true-link");
    let _ = symlink("/bin/true", &link_to_true);
    let programs: Vec<String> = vec![
        "true".into(),
        "/bin/true".into(),
        "echo".into(),
        "git".into(),
        "cc".into(),
        "sh".into(),
        "su".into(),
        "..".into(),
        ".".into(),
        "./true".into(),
        "bin/true".into(),
        "/etc/passwd".into(),
        "/etc".into(),
        "/no/such/program".into(),
        "no-such-program-here".into(),
        dangling.display().to_string(),
        link_to_true.display().to_string(),
        "ls".into(),
    ];
    let args: [&[&str]; 6] = [
        &[],
        &["hi"],
        &["7", "x", "y"],
        &["/opt/jobs/report.sh", "--day", "2026-11-30"],
        &["-c", "core.fsmonitor=false", "--no-pager", "status", "--short"],
        &["--output=/tmp/x"],
    ];
    let envs: [&[(&str, &str)]; 4] = [&[], &[("LANG", "C")], &[("LD_PRELOAD", "/tmp/x.so")], &[("TMPDIR", "/tmp")]];
    let cwds: [Option<String>; 4] =
        [None, Some(dir.display().to_string()), Some("/no/such/dir".into()), Some("relative".into())];
    let mut out = Vec::new();
    for program in &programs {
        for args in args {
            for (e, env) in envs.iter().enumerate() {
                for (c, cwd) in cwds.iter().enumerate() {
                    // Every program and argument list with the plain request, and the other
                    // environments and directories with a few of them (enough to meet every
                    // check without thousands of spawns).
                    if (e > 0 || c > 0) && args.len() > 1 && args[0] != "hi" {
                        continue;
                    }
                    let mut command = Command::new(program);
                    command.args(args.iter().copied());
                    for (name, value) in env.iter() {
                        command.env(name, value);
                    }
                    if let Some(cwd) = cwd {
                        command.cwd(cwd);
                    }
                    out.push(command);
                }
            }
        }
    }
    out
}

#[test]
fn explain_decides_every_request_as_the_spawner_does() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(dir.path()).unwrap();
    let requests = requests(&dir);
    let mut compared = 0;
    for (name, policy) in policies(&dir) {
        let buffer = LogBuffer::default();
        let spawner = Spawner::new(policy.clone())
            .unwrap()
            .with_audit_log(AuditLog::new(buffer.clone()))
            .with_refusal_rate_limit(RateLimit::new(u32::MAX, Duration::from_secs(1)));
        for command in &requests {
            let explained = policy.explain(command).unwrap();
            let before = buffer.records().len();
            let spawned = spawner.spawn(command);
            if let Ok(mut child) = spawned {
                let _ = child.kill(wrt_host_spawn::Signal::SIGKILL);
                let _ = child.wait();
            }
            let records = buffer.records();
            let decisions: Vec<_> = records[before..].iter().filter(|r| r["event"] == "decision").collect();
            assert_eq!(decisions.len(), 1, "{name}: {command:?}: one decision record per request");
            let record = decisions[0];
            assert_eq!(
                (record["decision"].as_str().unwrap(), record["reason"].as_str().unwrap()),
                (explained.decision.as_str(), explained.reason.as_str()),
                "{name}: {command:?}: the spawner (left) and explain (right) disagree"
            );
            if explained.decision.runs() {
                assert_eq!(record["rule"].as_str(), explained.rule.as_ref().and_then(|r| r.to_str()), "{name}");
            }
            compared += 1;
        }
    }
    assert!(compared > 1000, "{compared} requests compared");
}

#[test]
fn explain_names_no_path_a_refusal_would_hide() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangling");
    symlink("/no/such/target", &dangling).unwrap();
    let policy = Policy::deny_all().allow_program("true");
    for program in [Path::new("/etc/passwd"), Path::new("/etc"), Path::new(".."), &dangling] {
        let explained = policy.explain(&Command::new(program)).unwrap();
        assert_eq!(explained.decision, Decision::Deny, "{program:?}: {}", explained.reason);
        assert_eq!(explained.path, None, "{program:?}");
        assert!(!explained.reason.contains("/usr"), "{program:?}: {}", explained.reason);
    }
}

/// A bare name that no rule names is denied under its own name: the message does not say
/// where the search path found it (a symlink into a directory of the host's).
#[test]
fn a_bare_name_is_denied_under_its_own_spelling() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (bin, hidden) = (root.join("bin"), root.join("hidden"));
    std::fs::create_dir(&bin).unwrap();
    std::fs::create_dir(&hidden).unwrap();
    std::fs::copy("/bin/true", hidden.join("real-tool")).unwrap();
    symlink(hidden.join("real-tool"), bin.join("tool")).unwrap();
    let policy = Policy::deny_all().search_path([&bin]).allow_program("/bin/true");
    let err = Spawner::new(policy.clone()).unwrap().spawn(&Command::new("tool")).unwrap_err();
    assert_eq!(err.to_string(), "spawning `tool` is denied: no allow rule names `tool`");
    let explained = policy.explain(&Command::new("tool")).unwrap();
    assert!(!explained.reason.contains("hidden"), "{}", explained.reason);
    for program in ["..", "."] {
        let err = Spawner::new(policy.clone()).unwrap().spawn(&Command::new(program)).unwrap_err();
        assert!(!err.to_string().contains(root.to_str().unwrap()), "{err}");
    }
}

//! Policy enforcement with real programs: symlinks, `..`, the policy's PATH, NUL bytes,
//! concurrency, audit-only mode.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use wrt_host_spawn::{Command, Denial, InvalidRequest, Policy, SpawnError, Spawner};

use crate::{canonical, lock};

#[test]
fn a_symlink_to_a_denied_program_is_denied() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("innocent");
    symlink("/bin/sh", &link).unwrap();
    let spawner =
        Spawner::new(Policy::deny_all().allow_program("true").allow_program("sh").deny_program("sh")).unwrap();
    let err = spawner.spawn(&Command::new(&link)).unwrap_err();
    let SpawnError::Denied { path, reason, .. } = &err else { panic!("{err:?}") };
    assert_eq!(path.as_deref(), Some(canonical("/bin/sh").as_path()));
    assert_eq!(
        *reason,
        Denial::DenyRule { path: canonical("/bin/sh"), rule: PathBuf::from("sh") },
        "deny wins over allow"
    );

    // Without a deny rule, a symlink to a program that is not allowed is just not allowed.
    let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap();
    let err = spawner.spawn(&Command::new(&link)).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::NotAllowed { .. }, .. }), "{err}");

    // A symlink to an allowed program runs the program it points to.
    let to_true = dir.path().join("yes");
    symlink("/bin/true", &to_true).unwrap();
    let mut child = spawner.spawn(&Command::new(&to_true)).unwrap();
    assert_eq!(child.path(), canonical("/bin/true"));
    assert!(child.wait().unwrap().success());
}

#[test]
fn dot_dot_and_relative_paths_are_denied() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap();
    for program in ["/usr/bin/../bin/sh", "/usr/bin/../../usr/bin/sh", "/bin/../bin/./sh"] {
        let err = spawner.spawn(&Command::new(program)).unwrap_err();
        let SpawnError::Denied { path, reason, .. } = &err else { panic!("{program}: {err:?}") };
        // Denied, and the error does not reveal what the path resolved to.
        assert_eq!(*path, None, "{program}");
        assert_eq!(*reason, Denial::NotAllowed { path: PathBuf::from(program) }, "{program}: {err}");
        assert!(!err.to_string().contains("dash"), "{err}");
    }
    for program in ["true/..", "./true", "bin/true", "../bin/true", "usr/bin/true"] {
        let err = spawner.spawn(&Command::new(program)).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::RelativeProgram, .. }), "{program}: {err}");
    }
    // `..` through a file is not a path at all; no rule names it, so it is not allowed.
    let err = spawner.spawn(&Command::new("/bin/true/../sh")).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::NotAllowed { .. }, .. }), "{err}");
    // `..` that stays on an allowed program is fine: the canonical path is what counts.
    let mut child = spawner.spawn(&Command::new("/usr/bin/../bin/true")).unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn paths_no_rule_names_are_denied_whether_or_not_they_exist() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap();
    for program in ["/etc/passwd", "/root", "/nonexistent/program", "/usr/bin/ls"] {
        let err = spawner.spawn(&Command::new(program)).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::NotAllowed { .. }, .. }), "{program}: {err}");
    }
}

#[test]
fn a_program_on_the_host_path_but_not_the_policy_path_is_not_found() {
    let _lock = lock();
    let host_path = std::env::var_os("PATH").unwrap();
    let on_host = std::env::split_paths(&host_path).any(|dir| dir.join("true").is_file());
    assert!(on_host, "the test needs `true` on the host's PATH");

    let empty = tempfile::tempdir().unwrap();
    let policy = Policy::deny_all().search_path([empty.path()]).allow_program("/usr/bin/true");
    let spawner = Spawner::new(policy).unwrap();
    let err = spawner.spawn(&Command::new("true")).unwrap_err();
    assert!(matches!(err, SpawnError::NotFound { .. }), "{err}");
    // By its absolute path it is allowed.
    assert!(spawner.spawn(&Command::new("/usr/bin/true")).unwrap().wait().unwrap().success());

    // A program found on the policy's PATH is run from there, whatever the host's PATH says.
    let bin = tempfile::tempdir().unwrap();
    fs::copy("/bin/true", bin.path().join("mytool")).unwrap();
    let spawner = Spawner::new(Policy::deny_all().search_path([bin.path()]).allow_program("mytool")).unwrap();
    let mut child = spawner.spawn(&Command::new("mytool")).unwrap();
    assert_eq!(child.path(), canonical(bin.path().join("mytool").to_str().unwrap()));
    assert!(child.wait().unwrap().success());
}

#[test]
fn nul_bytes_and_malformed_requests_are_rejected() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true").env_allow(["A"])).unwrap();
    let invalid = |command: &Command| match spawner.spawn(command) {
        Err(SpawnError::InvalidRequest { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    assert_eq!(invalid(&Command::new("")), InvalidRequest::EmptyProgram);
    assert_eq!(invalid(&Command::new("tr\0ue")), InvalidRequest::NulInProgram);
    assert_eq!(invalid(Command::new("true").args(["ok", "b\0ad"])), InvalidRequest::NulInArg { index: 1 });
    assert_eq!(invalid(Command::new("true").env("A", "x\0y")), InvalidRequest::NulInEnvValue { name: "A".into() });
    for name in ["", "A=B", "A\0"] {
        assert!(matches!(invalid(Command::new("true").env(name, "v")), InvalidRequest::InvalidEnvName { .. }));
    }
    assert_eq!(invalid(Command::new("true").cwd("/tm\0p")), InvalidRequest::NulInCwd);
    // Validation comes before resolution: a missing program with a NUL argument is invalid,
    // not "not found".
    assert_eq!(invalid(Command::new("/no/such/program").arg("\0")), InvalidRequest::NulInArg { index: 0 });
    assert_eq!(spawner.running(), 0);
}

#[test]
fn loader_variables_are_refused() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap();
    let err = spawner.spawn(Command::new("true").env("LD_PRELOAD", "/tmp/evil.so")).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::LoaderEnv { .. }, .. }), "{err}");
}

#[test]
fn too_many_children() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("sleep").max_children(2)).unwrap();
    let mut first = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
    let _second = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
    let err = spawner.spawn(Command::new("sleep").arg("100")).unwrap_err();
    assert!(matches!(err, SpawnError::TooManyChildren { limit: 2, .. }), "{err}");
    first.kill(wrt_host_spawn::Signal::SIGKILL).unwrap();
    first.wait().unwrap();
    let third = spawner.spawn(Command::new("sleep").arg("100"));
    assert!(third.is_ok(), "a reaped child frees its place");
}

#[test]
fn argument_patterns_are_enforced() {
    let _lock = lock();
    let policy = Policy::deny_all().allow(wrt_host_spawn::ProgramRule::new("sh").args(["-c", "echo *"]));
    let spawner = Spawner::new(policy).unwrap();
    let output = spawner.output(Command::new("sh").args(["-c", "echo ok"]), None).unwrap();
    assert_eq!(output.stdout, b"ok\n");
    let err = spawner.spawn(Command::new("sh").args(["-c", "rm -rf /tmp/x"])).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::Args { .. }, .. }), "{err}");
}

#[test]
fn audit_only_runs_what_it_would_deny() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().audit_only(true)).unwrap();
    let output = spawner.output(Command::new("echo").arg("ran"), None).unwrap();
    assert_eq!(output.stdout, b"ran\n");
    // Requests that cannot run at all still fail.
    assert!(matches!(spawner.spawn(&Command::new("no-such-program-xyz")), Err(SpawnError::NotFound { .. })));
}

#[test]
fn argv0_is_the_rule_as_written_not_the_requests_spelling() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("git-version");
    symlink(canonical("/bin/sh"), &link).unwrap();
    let spawner = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap();
    for program in [link.as_os_str(), "sh".as_ref(), "/bin/sh".as_ref()] {
        let output = spawner.output(Command::new(program).args(["-c", "echo $0"]), None).unwrap();
        assert_eq!(output.stdout, b"sh\n", "{program:?}");
    }
}

#[test]
fn glibc_loader_variables_are_refused_like_ld() {
    let _lock = lock();
    for name in ["GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "LD_PRELOAD"] {
        let policy = Policy::deny_all().allow_program("true").env_allow([name]);
        let err = Spawner::new(policy).map(|_| ()).err();
        let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap();
        let denied = spawner.spawn(Command::new("true").env(name, "x")).unwrap_err();
        assert!(matches!(denied, SpawnError::Denied { .. }), "{name}: {denied}");
        // Listing one in the policy without `allow_ld_env` is itself an error.
        assert!(err.is_some(), "{name} was accepted in env.allow");
    }
}

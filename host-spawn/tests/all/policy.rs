//! Policy enforcement with real programs: symlinks, `..`, the policy's PATH, NUL bytes,
//! concurrency, audit-only mode.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use wrt_host_spawn::{Command, Denial, InvalidRequest, Policy, PolicyError, SpawnError, Spawner};
use wrt_test_support::documented_unsafe_env;

use crate::{canonical, lock};

/// A symlink to a denied program is denied, and the denial names only the requested spelling,
/// never the link's target (not "`/usr/bin/dash` matches deny rule `sh`").
#[test]
fn a_symlink_to_a_denied_program_is_denied_and_reveals_nothing() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("innocent");
    symlink("/bin/sh", &link).unwrap();
    let target = canonical("/bin/sh");
    let spawner =
        Spawner::new(Policy::deny_all().allow_program("true").allow_program("sh").deny_program("sh")).unwrap();
    let err = spawner.spawn(&Command::new(&link)).unwrap_err();
    let SpawnError::Denied { path, reason, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*path, None);
    assert_eq!(*reason, Denial::NotAllowed { path: link.clone() }, "as for any path no rule names");
    let message = wrt_text::error_chain(&err);
    assert!(!message.contains(target.to_str().unwrap()) && !message.contains("`sh`"), "{message}");
    // By name, deny wins over allow, and the message names the request's spelling.
    let err = spawner.spawn(&Command::new("sh")).unwrap_err();
    let SpawnError::Denied { reason, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*reason, Denial::DenyRule { path: PathBuf::from("sh"), rule: PathBuf::from("sh") });
    assert!(!err.to_string().contains(target.to_str().unwrap()), "{err}");

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

/// Children that exited but were never waited for counted against `max_children` ("2 children
/// are already running" when none were).
#[test]
fn max_children_counts_live_processes() {
    let _lock = lock();
    let spawner =
        Spawner::new(Policy::deny_all().allow_program("true").allow_program("sleep").max_children(2)).unwrap();
    let first = spawner.spawn(&Command::new("true")).unwrap();
    let second = spawner.spawn(&Command::new("true")).unwrap();
    for child in [&first, &second] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while crate::proc_stat(child.pid()).is_some_and(|(state, _)| state != 'Z') {
            assert!(std::time::Instant::now() < deadline, "`true` did not exit");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    // Both have exited; nobody waited for them. They hold no place.
    let mut third = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
    let mut fourth = spawner.spawn(Command::new("sleep").arg("100")).unwrap();
    let err = spawner.spawn(Command::new("sleep").arg("100")).unwrap_err();
    assert!(matches!(err, SpawnError::TooManyChildren { limit: 2, running: 2, .. }), "{err}");
    assert_eq!(err.to_string(), "cannot spawn `sleep`: 2 children are running, the limit is 2");
    // The exits of the first two are still theirs to collect.
    let (mut first, mut second) = (first, second);
    assert!(first.wait().unwrap().success());
    assert!(second.wait().unwrap().success());
    for child in [&mut third, &mut fourth] {
        child.kill(wrt_host_spawn::Signal::SIGKILL).unwrap();
        child.wait().unwrap();
    }
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

/// Deny entries that could never match (`usr/bin/su`, `./su`, a typo) were ignored, so the
/// program they meant stayed allowed.
#[test]
fn bad_deny_entries_are_errors() {
    for (entry, want) in [
        ("usr/bin/true", "deny rule 1: `usr/bin/true` must be a bare name or an absolute path"),
        ("./true", "deny rule 1: `./true` must be a bare name or an absolute path"),
        ("truee", "deny rule 1: `truee` is not found, so it would never match"),
        ("/nonexistent/true", "deny rule 1: `/nonexistent/true` is not found, so it would never match"),
        ("/etc/passwd", "deny rule 1: `/etc/passwd` is not executable, so it would never match"),
    ] {
        let err = Policy::deny_all().allow_program("true").deny_program(entry).validate().unwrap_err();
        assert_eq!(err.to_string(), want);
    }
    let err = Policy::from_toml_str("deny = [\"true\", \"./su\"]\n").unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 1: deny rule 2: `./su` must be a bare name or an absolute path"
    );
}

/// A deny rule by name covers every file the name resolves to on the search path, not only the
/// first; another copy with its own allow rule is denied too.
#[test]
fn deny_by_name_covers_every_copy_on_the_search_path() {
    let _lock = lock();
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (first_dir, second_dir) =
        (canonical(first.path().to_str().unwrap()), canonical(second.path().to_str().unwrap()));
    for dir in [&first_dir, &second_dir] {
        fs::copy("/bin/true", dir.join("tool")).unwrap();
    }
    let policy = Policy::deny_all()
        .search_path([&first_dir, &second_dir])
        .allow_program(second_dir.join("tool"))
        .deny_program("tool");
    let spawner = Spawner::new(policy).unwrap();
    let err = spawner.spawn(&Command::new(second_dir.join("tool"))).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::DenyRule { .. }, .. }), "{err}");
}

/// Relative `default_cwd` and `cwd_allow` were resolved against the host's own working
/// directory. They are refused.
#[test]
fn relative_working_directories_are_refused() {
    let err = Policy::deny_all().default_cwd("tmp").validate().unwrap_err();
    assert_eq!(err.to_string(), "working directory `tmp` must be an absolute path");
    let err = Policy::deny_all().cwd_allow(".").validate().unwrap_err();
    assert_eq!(err.to_string(), "working directory `.` must be an absolute path");
    let err = Policy::from_toml_str("\ncwd_allow = [\"/tmp\", \"src\"]\n").unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 2: working directory `src` must be an absolute path"
    );
}

/// Asking for the default directory by name is what asking for none does.
#[test]
fn the_default_directory_may_be_requested() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("pwd")).unwrap();
    let output = spawner.output(Command::new("pwd").cwd("/"), None).unwrap();
    assert_eq!(output.stdout, b"/\n");
    let err = spawner.spawn(Command::new("pwd").cwd("/tmp")).unwrap_err();
    assert!(matches!(err, SpawnError::Denied { reason: Denial::Cwd { .. }, .. }), "{err}");
}

/// `allow_ld_env` unlocks `LD_*`/`DYLD_*` only; glibc's other unsafe variables (the whole list
/// docs/policy.md gives under "Variables refused always", `TMPDIR` and `TZDIR` included) are
/// refused always.
#[test]
fn glibc_unsafe_variables_are_refused_even_with_allow_ld_env() {
    let _lock = lock();
    for name in &documented_unsafe_env() {
        let name = name.as_str();
        for allow_ld_env in [false, true] {
            let err = Policy::deny_all().allow_ld_env(allow_ld_env).env_allow([name]).validate().unwrap_err();
            assert!(matches!(err, PolicyError::UnsafeEnv { .. }), "{name}: {err}");
            let err = Policy::deny_all().allow_ld_env(allow_ld_env).env_passthrough([name]).validate().unwrap_err();
            assert!(matches!(err, PolicyError::UnsafeEnv { .. }), "{name}: {err}");
            let rule = wrt_host_spawn::ProgramRule::new("true").env(name, "x");
            let err = Policy::deny_all().allow_ld_env(allow_ld_env).allow(rule).validate().unwrap_err();
            assert!(matches!(err, PolicyError::UnsafeEnv { .. }), "{name}: {err}");
        }
        let spawner = Spawner::new(Policy::deny_all().allow_program("true").allow_ld_env(true)).unwrap();
        let err = spawner.spawn(Command::new("true").env(name, "x")).unwrap_err();
        assert!(matches!(err, SpawnError::Denied { reason: Denial::LoaderEnv { .. }, .. }), "{name}: {err}");
    }
    // `LD_*` is what `allow_ld_env` is for.
    assert!(Policy::deny_all().allow_ld_env(true).env_allow(["LD_LIBRARY_PATH"]).validate().is_ok());
    let err = Policy::deny_all().env_passthrough(["LD_PRELOAD"]).validate().unwrap_err();
    assert_eq!(
        err.to_string(),
        "environment variable `LD_PRELOAD` is a dynamic-loader variable; only a policy with `allow_ld_env = true` may list it"
    );
}

/// `timeout = 0` killed every child at once; `args = []` denied every call. Both are errors
/// now, and rule numbers in messages count from 1.
#[test]
fn zero_timeouts_and_empty_args_are_errors() {
    let err = Policy::deny_all().timeout(Some(std::time::Duration::ZERO)).validate().unwrap_err();
    assert_eq!(err.to_string(), "policy: `timeout` must be more than 0 (write \"none\" for no timeout)");
    let text = "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"false\"\ntimeout = 0\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 6: allow rule 2: `timeout` must be more than 0 (write \"none\" for no timeout)"
    );
    let text = "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"false\"\nargs = []\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 6: allow rule 2: `args = []` accepts no call at all; write `[[]]` for \"no arguments\" or leave `args` out"
    );
    // `[[]]` is "no arguments".
    let policy = Policy::from_toml_str("[[allow]]\nprogram = \"true\"\nargs = [[]]\n").unwrap();
    let _lock = lock();
    let spawner = Spawner::new(policy).unwrap();
    assert!(spawner.output(&Command::new("true"), None).unwrap().outcome.success());
    assert!(spawner.spawn(Command::new("true").arg("x")).is_err());
}

/// Validation errors name the line of the bad value (not of its `[[allow]]` header), count
/// rules from 1, and every unknown key is reported.
#[test]
fn validation_errors_point_at_the_bad_value() {
    let text = "[[allow]]\nprogram = \"true\"\n\n[[allow]]\ntimeout = \"5s\"\nprogram = \"no-such-program-xyz\"\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 6: allow rule 2: program `no-such-program-xyz` not found"
    );
    let text = "[[allow]]\nprogram = \"true\"\nargs = [[\"ok\"],\n  [\"[z-a]\"]]\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>` at line 4: allow rule 1: argument pattern 2: `[z-a]` has the empty range `z-a`"
    );
    let text = "timout = 5\n[[allow]]\nprogram = \"true\"\nflags = []\n[env]\npasthrough = []\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    assert_eq!(
        wrt_text::error_chain(&err),
        "invalid policy file `<string>`: unknown keys: `timout` at line 1 (did you mean `timeout`?), `allow[1].flags` \
         at line 4, `env.pasthrough` at line 6 (did you mean `passthrough`?)"
    );
}

/// The error of a policy file that does not load, with its sources, on one line.
fn load_error(text: &str) -> String {
    wrt_text::error_chain(&Policy::from_toml_str(text).unwrap_err())
}

/// A top-level key written inside a table is an unknown key there; the message says where it
/// belongs.
#[test]
fn a_top_level_key_inside_env_is_said_to_belong_at_the_top_level() {
    let text = "[[allow]]\nprogram = \"true\"\n\n[env]\nallow = [\"LANG\"]\nallow_ld_env = true\n";
    assert_eq!(
        load_error(text),
        "invalid policy file `<string>`: unknown key: `env.allow_ld_env` at line 6 \
         (`allow_ld_env` belongs at the top level, not in `[env]`)"
    );
    // A rule's key at the top level, and a `[sandbox]` key in a rule.
    let text = "network = true\n[[allow]]\nprogram = \"true\"\nmax_processes = 4\n";
    assert_eq!(
        load_error(text),
        "invalid policy file `<string>`: unknown keys: `network` at line 1 (`network` belongs in an \
         `[[allow]]` rule, not at the top level), `allow[1].max_processes` at line 4 (`max_processes` \
         belongs in `[sandbox]`, not in an `[[allow]]` rule)"
    );
}

/// A misspelt key, at the top level or in a rule, is reported with the nearest key its table
/// knows; a key like none of them gets no guess.
#[test]
fn a_misspelt_key_is_reported_with_the_nearest_known_key() {
    assert_eq!(
        load_error("max_children = 2\ntimout = \"5s\"\n"),
        "invalid policy file `<string>`: unknown key: `timout` at line 2 (did you mean `timeout`?)"
    );
    let text = "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"false\"\ntimout = \"5s\"\nflags = []\n";
    assert_eq!(
        load_error(text),
        "invalid policy file `<string>`: unknown keys: `allow[2].timout` at line 6 (did you mean `timeout`?), \
         `allow[2].flags` at line 7"
    );
    assert_eq!(
        load_error("[env]\npasthrough = [\"PATH\"]\n[rlimits]\nopen_file = 8\n"),
        "invalid policy file `<string>`: unknown keys: `env.pasthrough` at line 2 (did you mean `passthrough`?), \
         `rlimits.open_file` at line 4 (did you mean `open_files`?)"
    );
}

/// `[allow]` (one table) where `[[allow]]` (a list of rule tables) is meant.
#[test]
fn allow_written_as_one_table_says_to_write_one_list_entry_per_rule() {
    let want = "invalid policy file `<string>` at line 3: `allow` is a list of rules: write `[[allow]]` for each rule";
    assert_eq!(load_error("timeout = \"5s\"\n\n[allow]\nprogram = \"true\"\n"), want);
    assert_eq!(load_error("timeout = \"5s\"\n\nallow = { program = \"true\" }\n"), want);
}

/// `max_children` below 1, negative or zero, fails with the same message at its line, and so
/// does a value that is not an integer.
#[test]
fn max_children_below_1_is_said_to_need_an_integer_of_at_least_1() {
    for value in ["-1", "0", "\"4\"", "1.5"] {
        let message = load_error(&format!("timeout = \"5s\"\nmax_children = {value}\n"));
        assert!(message.contains("line 2"), "{value}: {message}");
        assert!(message.contains("`max_children` must be an integer ≥ 1"), "{value}: {message}");
    }
    let err = Policy::deny_all().max_children(0).validate().unwrap_err();
    assert_eq!(err.to_string(), "`max_children` must be an integer ≥ 1");
}

/// `program = ""` is named as an empty program, at its line.
#[test]
fn an_empty_program_is_reported_as_empty() {
    let text = "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"\"\n";
    assert_eq!(
        load_error(text),
        "invalid policy file `<string>` at line 5: allow rule 2: `program` is empty; write the program's bare \
         name or absolute path"
    );
    let err = Policy::deny_all().allow_program("").validate().unwrap_err();
    assert!(matches!(err, PolicyError::EmptyProgram { index: 0 }), "{err}");
}

/// Every deny entry that could never match is reported in one error, each with its line.
#[test]
fn every_bad_deny_entry_is_reported_with_its_line() {
    let text = "deny = [\n  \"true\",\n  \"./su\",\n  \"truee\",\n  \"/etc/passwd\",\n]\n";
    assert_eq!(
        load_error(text),
        "invalid policy file `<string>`: 3 invalid entries: line 3: deny rule 2: `./su` must be a bare name or an \
         absolute path; line 4: deny rule 3: `truee` is not found, so it would never match; line 5: deny rule 4: \
         `/etc/passwd` is not executable, so it would never match"
    );
}

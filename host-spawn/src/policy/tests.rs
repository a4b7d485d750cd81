use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;
use crate::command::Command;
use crate::error::{Denial, PolicyFileError, UnknownKey};
use crate::resolve::{resolve, resolve_id};

fn canonical(program: &str) -> PathBuf {
    resolve(OsStr::new(program), &[PathBuf::from("/usr/bin"), PathBuf::from("/bin")]).unwrap()
}

fn check(policy: &Policy, command: &Command) -> Result<Grant, Denial> {
    let compiled = policy.compile().unwrap();
    let (path, id) = resolve_id(command.get_program(), &compiled.search_path).unwrap();
    compiled.check(&path, id, command).map_err(|(denial, _)| denial)
}

#[test]
fn nothing_is_allowed_by_default() {
    let denial = check(&Policy::deny_all(), &Command::new("true")).unwrap_err();
    assert_eq!(denial, Denial::NotAllowed { path: "true".into() }, "named as requested, not where it resolved");
}

#[test]
fn allowed_by_name_matches_the_absolute_path_too() {
    let policy = Policy::deny_all().allow_program("true");
    assert!(check(&policy, &Command::new("true")).is_ok());
    assert!(check(&policy, &Command::new(canonical("true"))).is_ok());
    assert!(check(&policy, &Command::new("false")).is_err());
}

#[test]
fn deny_wins_over_allow() {
    let policy = Policy::deny_all().allow_program("true").deny_program(canonical("true"));
    let denial = check(&policy, &Command::new("true")).unwrap_err();
    assert_eq!(denial, Denial::DenyRule { path: PathBuf::from("true"), rule: canonical("true") });
}

#[test]
fn a_deny_rule_through_a_symlink_denies_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("alias");
    symlink(canonical("true"), &link).unwrap();
    let policy = Policy::deny_all().allow_program("true").deny_program(&link);
    let denial = check(&policy, &Command::new("true")).unwrap_err();
    assert_eq!(denial, Denial::DenyRule { path: PathBuf::from("true"), rule: link });
}

#[test]
fn argument_patterns() {
    let policy = Policy::deny_all().allow(ProgramRule::new("echo").args(["--", "*"]).args(["-n", "**"]));
    assert!(check(&policy, Command::new("echo").args(["--", "x"])).is_ok());
    assert!(check(&policy, Command::new("echo").args(["-n"])).is_ok());
    assert!(check(&policy, Command::new("echo").args(["-n", "a", "b"])).is_ok());
    let denial = check(&policy, Command::new("echo").args(["-e", "x"])).unwrap_err();
    assert_eq!(denial, Denial::Args { rule: PathBuf::from("echo") });
    assert!(check(&policy, &Command::new("echo")).is_err());
}

#[test]
fn environment_starts_empty_with_passthrough_and_allowed_names() {
    let policy = Policy::deny_all()
        .allow_program("true")
        .env_passthrough(["PATH", "WRT_HOST_SPAWN_SURELY_UNSET"])
        .env_allow(["LANG"]);
    let grant = check(&policy, Command::new("true").env("LANG", "C")).unwrap();
    let keys: Vec<_> = grant.env.keys().cloned().collect();
    assert_eq!(keys, ["LANG", "PATH"]);
    assert_eq!(grant.env[OsStr::new("PATH")], std::env::var_os("PATH").unwrap());

    let denial = check(&policy, Command::new("true").env("HOME", "/")).unwrap_err();
    assert_eq!(denial, Denial::Env { name: "HOME".into() });
}

#[test]
fn a_child_without_a_path_gets_the_search_path() {
    let policy = Policy::deny_all().allow_program("true").search_path(["/usr/bin", "/odd:dir", "/bin"]);
    let grant = check(&policy, &Command::new("/usr/bin/true")).unwrap();
    assert_eq!(grant.env[OsStr::new("PATH")], "/usr/bin:/bin");

    // A rule's own `PATH`, and the host's when passed through, win.
    let policy = Policy::deny_all().allow(ProgramRule::new("true").env("PATH", "/opt/bin"));
    assert_eq!(check(&policy, &Command::new("true")).unwrap().env[OsStr::new("PATH")], "/opt/bin");
    let policy = Policy::deny_all().allow_program("true").env_passthrough(["PATH"]);
    assert_eq!(
        check(&policy, &Command::new("true")).unwrap().env[OsStr::new("PATH")],
        std::env::var_os("PATH").unwrap()
    );
}

#[test]
fn loader_variables_are_refused_unless_allowed() {
    let policy = Policy::deny_all().allow_program("true");
    let denial = check(&policy, Command::new("true").env("LD_PRELOAD", "/x.so")).unwrap_err();
    assert_eq!(denial, Denial::LoaderEnv { name: "LD_PRELOAD".into() });
    let denial = check(&policy, Command::new("true").env("DYLD_INSERT_LIBRARIES", "x")).unwrap_err();
    assert_eq!(denial, Denial::LoaderEnv { name: "DYLD_INSERT_LIBRARIES".into() });

    // Listing one without `allow_ld_env` is a policy error.
    let err = Policy::deny_all().env_allow(["LD_PRELOAD"]).validate().unwrap_err();
    assert!(matches!(err, PolicyError::LoaderEnv { .. }), "{err}");
    let policy = policy.allow_ld_env(true).env_allow(["LD_PRELOAD"]);
    assert!(check(&policy, Command::new("true").env("LD_PRELOAD", "/x.so")).is_ok());
}

#[test]
fn working_directory_allowlist() {
    let allowed = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    fs::create_dir(allowed.path().join("sub")).unwrap();
    let policy = Policy::deny_all().allow_program("true").cwd_allow(allowed.path());

    let grant = check(&policy, &Command::new("true")).unwrap();
    assert_eq!(grant.cwd, Path::new("/"), "the default is `/`, never the host's cwd");
    let grant = check(&policy, Command::new("true").cwd(allowed.path().join("sub"))).unwrap();
    assert_eq!(grant.cwd, fs::canonicalize(allowed.path().join("sub")).unwrap());

    for cwd in [
        other.path().to_owned(),
        allowed.path().join("sub/../.."),
        PathBuf::from("relative"),
        allowed.path().join("missing"),
    ] {
        let denial = check(&policy, Command::new("true").cwd(&cwd)).unwrap_err();
        assert_eq!(denial, Denial::Cwd { cwd }, "escaping via `..` is denied");
    }
}

#[test]
fn limits_come_from_rule_policy_and_request() {
    let policy = Policy::deny_all()
        .timeout(Some(Duration::from_secs(30)))
        .output_limit(1000)
        .rlimits(Rlimits { cpu_seconds: Some(10), ..Rlimits::none() })
        .allow(ProgramRule::new("true").timeout(Duration::from_secs(60)).output_limit(5000))
        .allow_program("false");
    let grant = check(&policy, &Command::new("true")).unwrap();
    assert_eq!(grant.timeout, Some(Duration::from_secs(60)), "the rule replaces the default");
    assert_eq!(grant.output_limit, 5000);
    assert_eq!(grant.rlimits.cpu_seconds, Some(10));

    let grant = check(
        &policy,
        Command::new("true").timeout(Duration::from_secs(90)).output_limit(9000).rlimits(Rlimits {
            cpu_seconds: Some(20),
            open_files: Some(8),
            ..Rlimits::none()
        }),
    )
    .unwrap();
    assert_eq!(grant.timeout, Some(Duration::from_secs(60)), "a request cannot raise it");
    assert_eq!(grant.output_limit, 5000);
    assert_eq!(grant.rlimits.cpu_seconds, Some(10));
    assert_eq!(grant.rlimits.open_files, Some(8), "a request can add a limit");

    let grant = check(&policy, Command::new("false").timeout(Duration::from_secs(1))).unwrap();
    assert_eq!(grant.timeout, Some(Duration::from_secs(1)));
    assert_eq!(grant.output_limit, 1000);
}

#[test]
fn audit_only_grants_what_it_would_deny() {
    let policy = Policy::deny_all().audit_only(true).env_allow(["LANG"]);
    let grant = check(&policy, Command::new("true").env("LANG", "C").env("OTHER", "x")).unwrap();
    assert_eq!(grant.would_deny, Some(Denial::NotAllowed { path: "true".into() }));
    assert!(grant.env.contains_key(OsStr::new("OTHER")), "an unlisted plain variable is only logged");
}

#[test]
fn audit_only_still_refuses_what_changes_what_a_program_loads() {
    let policy = Policy::deny_all().audit_only(true);
    for name in ["LD_PRELOAD", "GCONV_PATH", "TMPDIR", "GLIBC_TUNABLES"] {
        let denial = check(&policy, Command::new("true").env(name, "/tmp/x")).unwrap_err();
        assert_eq!(denial, Denial::LoaderEnv { name: name.into() });
    }
    let allowed = Policy::deny_all().audit_only(true).allow_ld_env(true).env_allow(["LD_LIBRARY_PATH"]);
    let grant = check(&allowed, Command::new("true").env("LD_LIBRARY_PATH", "/opt/lib")).unwrap();
    assert!(grant.env.contains_key(OsStr::new("LD_LIBRARY_PATH")), "listed with allow_ld_env");
}

/// The code's list of variables refused always is exactly the one docs/policy.md states
/// ("Variables refused always"): a name added to either alone fails here, named.
#[test]
fn unsafe_env_is_the_documented_list() {
    let code: BTreeSet<&str> = compiled::UNSAFE_ENV.into_iter().collect();
    assert_eq!(code.len(), compiled::UNSAFE_ENV.len(), "UNSAFE_ENV lists a name twice");
    let documented = wrt_test_support::documented_unsafe_env();
    let documented: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
    let undocumented: Vec<&str> = code.difference(&documented).copied().collect();
    let missing: Vec<&str> = documented.difference(&code).copied().collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "UNSAFE_ENV refuses {undocumented:?}, which docs/policy.md does not list, and lacks {missing:?}, which it lists"
    );
}

#[test]
fn audit_only_refuses_a_working_directory_that_does_not_exist() {
    let policy = Policy::deny_all().audit_only(true);
    let denial = check(&policy, Command::new("true").cwd("/no/such/dir")).unwrap_err();
    assert_eq!(denial, Denial::Cwd { cwd: "/no/such/dir".into() });
    assert!(check(&policy, Command::new("true").cwd("/")).is_ok());
}

#[test]
fn invalid_policies_name_the_rule() {
    let err = Policy::deny_all().allow_program("no-such-program-xyz").validate().unwrap_err();
    assert!(matches!(err, PolicyError::ProgramNotFound { index: 0, .. }), "{err}");
    let err = Policy::deny_all().allow_program("bin/true").validate().unwrap_err();
    assert!(matches!(err, PolicyError::RelativeProgram { index: 0, .. }), "{err}");
    let err = Policy::deny_all()
        .allow_program("true")
        .allow(ProgramRule::new("echo").args(["**", "x"]))
        .validate()
        .unwrap_err();
    assert!(matches!(err, PolicyError::BadPattern { index: 1, pattern: 0, .. }), "{err}");
    let err = Policy::deny_all().allow_program("true").allow_program(canonical("true")).validate();
    assert!(matches!(err, Err(PolicyError::DuplicateRule { index: 1, first: 0, .. })));
    let err = Policy::deny_all().search_path(["usr/bin"]).validate().unwrap_err();
    assert!(matches!(err, PolicyError::RelativeSearchDir { .. }), "{err}");
    let err = Policy::deny_all().max_children(0).validate().unwrap_err();
    assert!(matches!(err, PolicyError::ZeroMaxChildren), "{err}");
    let err = Policy::deny_all().cwd_allow("/no/such/dir").validate().unwrap_err();
    assert!(matches!(err, PolicyError::Cwd { .. }), "{err}");
}

const FULL: &str = r#"
search_path = ["/usr/bin", "/bin"]
max_children = 4
timeout = "10s"
kill_grace = "500ms"
output_limit = "1 MiB"
default_cwd = "/tmp"
cwd_allow = ["/tmp"]
allow_ld_env = false
audit_only = false
deny = ["sh"]

[env]
passthrough = ["PATH"]
allow = ["LANG"]

[rlimits]
core_size = 0

[[allow]]
program = "echo"
args = [["hello", "*"]]
timeout = "none"
output_limit = 4096
rlimits = { cpu_seconds = 5, address_space = "1 GiB", open_files = 32 }

[[allow]]
program = "/usr/bin/true"
"#;

#[test]
fn toml_policy_round_trip() {
    let policy = Policy::from_toml_str(FULL).unwrap();
    let grant = check(&policy, Command::new("echo").args(["hello", "world"]).env("LANG", "C")).unwrap();
    assert_eq!(grant.timeout, None);
    assert_eq!(grant.output_limit, 4096);
    assert_eq!(grant.rlimits.cpu_seconds, Some(5));
    assert_eq!(grant.rlimits.address_space, Some(1 << 30));
    assert_eq!(grant.rlimits.core_size, None, "a rule's rlimits replace the policy's");
    assert_eq!(grant.cwd, fs::canonicalize("/tmp").unwrap());
    assert!(check(&policy, Command::new("echo").arg("bye")).is_err());

    let grant = check(&policy, &Command::new("true")).unwrap();
    assert_eq!(grant.timeout, Some(Duration::from_secs(10)));
    assert_eq!(grant.output_limit, 1 << 20);
    assert_eq!(grant.rlimits.core_size, Some(0));

    let compiled = policy.compile().unwrap();
    assert_eq!(compiled.kill_grace, Duration::from_millis(500));
    assert_eq!(compiled.max_children, 4);
}

#[test]
fn toml_errors_have_lines() {
    let err = Policy::from_toml_str("timeout = \"10s\"\nbogus = 1\n").unwrap_err();
    let PolicyFileError::UnknownKeys { keys, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*keys, [UnknownKey { key: "bogus".to_owned(), line: 2, hint: None }]);
    assert_eq!(err.to_string(), "invalid policy file `<string>`: unknown key: `bogus` at line 2");

    let err = Policy::from_toml_str("\n[[allow]]\nprogram = \"true\"\nfoo = 1\n").unwrap_err();
    let PolicyFileError::UnknownKeys { keys, .. } = &err else { panic!("unknown keys in tables: {err:?}") };
    assert_eq!(*keys, [UnknownKey { key: "allow[1].foo".to_owned(), line: 4, hint: None }]);

    let err = Policy::from_toml_str("\n\ntimeout = \"10 days\"\n").unwrap_err();
    let PolicyFileError::Parse { source, .. } = &err else { panic!("{err:?}") };
    assert!(source.to_string().contains("line 3"), "{source}");

    let text = "max_children = 2\n\n[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"no-such-program-xyz\"\n";
    let err = Policy::from_toml_str(text).unwrap_err();
    let PolicyFileError::Invalid { line, source, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*line, 7, "the line of the `program` value, not of `[[allow]]`");
    assert!(matches!(source, PolicyError::ProgramNotFound { index: 1, .. }));
    assert_eq!(err.to_string(), "invalid policy file `<string>` at line 7",);

    let err = Policy::from_toml_str("[env]\nallow = [\"LANG\",\n  \"LD_PRELOAD\"]\n").unwrap_err();
    let PolicyFileError::Invalid { line, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*line, 3);
}

/// A deny rule matched only the path it resolved to, so another hard link of the same file,
/// allowed by its own path, ran (`--deny-run perl` and `perl5.36.0`).
#[test]
fn deny_rule_covers_every_hard_link() {
    let dir = tempfile::tempdir().unwrap();
    let dir = fs::canonicalize(dir.path()).unwrap();
    let (denied, link) = (dir.join("tool"), dir.join("tool-1.0"));
    fs::copy(canonical("true"), &denied).unwrap();
    fs::hard_link(&denied, &link).unwrap();
    let policy = Policy::deny_all().allow_program(&link).deny_program(&denied);
    let denial = check(&policy, &Command::new(&link)).unwrap_err();
    assert_eq!(denial, Denial::DenyRule { path: link.clone(), rule: denied.clone() });
    // A copy is another file: the deny rule does not cover it.
    let copy = dir.join("tool-copy");
    fs::copy(&denied, &copy).unwrap();
    assert!(check(&Policy::deny_all().allow_program(&copy).deny_program(&denied), &Command::new(&copy)).is_ok());
}

//! `wrt policy check` and `wrt policy explain`: users can check what a policy allows before a
//! guest finds out.

use std::path::Path;

use crate::util::{assert_code, run, stderr, stdout};

fn write(dir: &Path, text: &str) -> String {
    let path = dir.join("policy.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn policy_check_a_clean_policy_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"sh\"\nargs = [[\"/opt/x.sh\", \"[0-9]\"]]\n",
    );
    let out = run(["policy", "check", &file]);
    assert_code(&out, 0);
    let text = stdout(&out);
    let true_path = std::fs::canonicalize("/bin/true").unwrap();
    assert!(text.contains(&format!("allow rule 1: `true` runs {}", true_path.display())), "{text}");
    assert!(text.contains(": ok\n"), "{text}");
}

#[test]
fn policy_check_warns_about_allow_all_rules_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let text = "deny = [\"su\"]\n\n[[allow]]\nprogram = \"sh\"\n\n[[allow]]\nprogram = \"cc\"\nargs = [[\"-c\", \"*.c\"]]\n\n[[allow]]\nprogram = \"git\"\nargs = [[\"diff\", \"**\"]]\n\n[[allow]]\nprogram = \"true\"\n";
    let file = write(dir.path(), text);
    let out = run(["policy", "check", &file]);
    assert_code(&out, 1);
    let text = stdout(&out);
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 3, "{text}");
    assert!(warnings[0].contains("allow rule 1 (`sh`) is effectively allow-all: any arguments are allowed"), "{text}");
    assert!(warnings[1].contains("allow rule 2 (`cc`)") && warnings[1].contains("`@file`"), "{text}");
    assert!(warnings[2].contains("allow rule 3 (`git`)") && warnings[2].contains("--output="), "{text}");
    assert!(text.contains("deny rule 1: `su` covers /"), "{text}");
}

#[test]
fn policy_check_errors_exit_2_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "[[allow]]\nprogram = \"true\"\n\n[[allow]]\nprogram = \"pyhton3-xyz\"\n");
    let out = run(["policy", "check", &file]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("at line 5: allow rule 2: program `pyhton3-xyz` not found"), "{}", stderr(&out));
    let out = run(["policy", "check", dir.path().join("missing.toml").to_str().unwrap()]);
    assert_code(&out, 2);
}

#[test]
fn policy_explain_shows_what_the_child_would_get() {
    let dir = tempfile::tempdir().unwrap();
    let work = std::fs::canonicalize(dir.path()).unwrap();
    let text = format!(
        "cwd_allow = [\"{}\"]\n[env]\nallow = [\"COLOR\"]\n\n[[allow]]\nprogram = \"echo\"\nargs = [[\"hi\", \"*\"]]\nenv = {{ PATH = \"/usr/bin\" }}\nrlimits = {{ core_size = 0 }}\n\n[[allow]]\nprogram = \"sh\"\nargs = [[\"-c\", \"true\"]]\n",
        work.display()
    );
    let file = write(dir.path(), &text);
    let marker = work.join("ran");
    let out = run([
        "policy",
        "explain",
        &file,
        "--cwd",
        work.to_str().unwrap(),
        "--env",
        "COLOR=1",
        "--",
        "echo",
        "hi",
        marker.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    let text = stdout(&out);
    let echo = std::fs::canonicalize("/bin/echo").unwrap();
    for line in [
        "decision: allow".to_owned(),
        "rule: echo".to_owned(),
        format!("path: {}", echo.display()),
        format!("argv: [\"echo\", \"hi\", \"{}\"]", marker.display()),
        format!("cwd: {}", work.display()),
        "env: COLOR=1".to_owned(),
        "env: PATH=/usr/bin".to_owned(),
        "strategy: vfork-exec".to_owned(),
        "sandbox write: none".to_owned(),
        "sandbox tmp: a directory of the guest's children at /tmp (TMPDIR), removed when the guest ends".to_owned(),
        "sandbox view: the file system read-only but for the write directories; /proc of the guest's children only; System V IPC of their own".to_owned(),
        "sandbox network: none".to_owned(),
    ] {
        assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
    }
    assert!(text.lines().any(|l| l.starts_with("sandbox: on (Landlock ABI ")), "{text}");

    // A rule that sets no `PATH` gives the child the search path.
    let out = run(["policy", "explain", &file, "--", "sh", "-c", "true"]);
    assert_code(&out, 0);
    assert!(stdout(&out).lines().any(|l| l == "env: PATH=/usr/local/bin:/usr/bin:/bin"), "{}", stdout(&out));

    // With the guest's directories, and with the sandbox off.
    let out = run(["policy", "explain", &file, "--dir", work.to_str().unwrap(), "--", "echo", "hi", "x"]);
    assert_code(&out, 0);
    assert!(stdout(&out).lines().any(|l| l == format!("sandbox write: {}", work.display())), "{}", stdout(&out));
    let out = run(["policy", "explain", &file, "--child-sandbox", "off", "--", "echo", "hi", "x"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.lines().any(|l| l == "strategy: fork-exec"), "{text}");
    assert!(text.lines().any(|l| l == "sandbox: off (the child has wrt's own authority)"), "{text}");

    // Denied, with the reason; nothing runs.
    let out = run(["policy", "explain", &file, "--", "sh", "-c", &format!("touch {}", marker.display())]);
    assert_code(&out, 1);
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "decision: deny\nreason: spawning `sh` is denied: the arguments match none of the patterns of allow rule `sh`\nrule: sh\n"
        ),
        "{text}"
    );
    assert!(!marker.exists());
    let out = run(["policy", "explain", &file, "--", "ls"]);
    assert_code(&out, 1);
    assert!(
        stdout(&out).starts_with("decision: deny\nreason: spawning `ls` is denied: no allow rule names `ls`\n"),
        "{}",
        stdout(&out)
    );
    let out = run(["policy", "explain", &file, "--env", "LD_PRELOAD=x.so", "--", "echo", "hi", "x"]);
    assert_code(&out, 1);
    // No program after `--` is a usage error.
    let out = run(["policy", "explain", &file]);
    assert_code(&out, 2);
}

/// `--spawn-strategy posix-spawn` switched to fork-exec silently when rlimits applied. Given
/// explicitly, it refuses; without the flag, the switch is the default.
#[test]
fn explicit_posix_spawn_refuses_rlimits() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "[rlimits]\ncore_size = 0\n\n[[allow]]\nprogram = \"true\"\n");
    let audit = dir.path().join("audit.jsonl");
    let guest = wrt_test_guests::ABI_BAD_INPUTS;
    let out = run(["run", "--policy", &file, guest]);
    assert_code(&out, 0);
    // Check 17 of the guest: `true` gets a handle.
    let out = run([
        "run",
        "--policy",
        &file,
        "--spawn-strategy",
        "posix-spawn",
        "--child-sandbox",
        "off",
        "--audit-log",
        audit.to_str().unwrap(),
        guest,
    ]);
    assert_code(&out, 17);
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(
        log.contains("posix_spawn cannot spawn") && log.contains("resource limits need the fork-exec strategy"),
        "{log}"
    );
    // posix_spawn cannot confine a child either: with the child sandbox on, that is the reason.
    std::fs::remove_file(&audit).unwrap();
    let out = run([
        "run",
        "--policy",
        &file,
        "--spawn-strategy",
        "posix-spawn",
        "--audit-log",
        audit.to_str().unwrap(),
        guest,
    ]);
    assert_code(&out, 17);
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(log.contains("posix_spawn cannot confine a child"), "{log}");
    let out = run(["run", "--policy", &file, "--spawn-strategy", "fork-exec", guest]);
    assert_code(&out, 0);
}

/// Hints named fixes that do not work: `--allow-run /etc/passwd`, `--allow-run` for a program a
/// rule already covers, and `allow_ld_env` (which no flag sets) for `--allow-env LD_PRELOAD`.
#[test]
fn hints_name_only_fixes_that_work() {
    use wrt_test_guests::SPAWN_DENIED;
    // A file that is no program: no hint.
    let out = run(["run", "--allow-run", "true", SPAWN_DENIED, "/etc/passwd", "no allow rule"]);
    assert_code(&out, 0);
    assert!(!stderr(&out).contains("--allow-run"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("--allow-run"), "{}", stdout(&out));
    // A program by path: the hint is for the host's user only, never the guest.
    let out = run(["run", "--allow-run", "true", SPAWN_DENIED, "/usr/bin/env", "no allow rule"]);
    assert_code(&out, 0);
    assert!(stderr(&out).contains("allow it with `--allow-run /usr/bin/env`"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("--allow-run"), "{}", stdout(&out));
    // A bare name: both see it.
    let out = run(["run", SPAWN_DENIED, "env", "allow it with `--allow-run env`"]);
    assert_code(&out, 0);
    // Denied by a deny rule: allowing it again would not help.
    let out = run(["run", "--allow-run", "env", "--deny-run", "env", SPAWN_DENIED, "env", "deny rule"]);
    assert_code(&out, 0);
    assert!(!stderr(&out).contains("allow it with"), "{}", stderr(&out));
    // No flag sets `allow_ld_env`; the message says what does.
    let out = run(["run", "--allow-env", "LD_PRELOAD", SPAWN_DENIED, "env"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("only a policy with `allow_ld_env = true` may list it"), "{}", stderr(&out));
}

/// The runtime, not the embedder's hook, decides whether the guest reads a hint about its
/// denied spawn: an embedder that returns one for every denial still shows the guest none for
/// a program it named by path (the hint would tell it which host files exist).
#[test]
fn a_denial_hint_reaches_the_guest_only_for_a_bare_name() {
    use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
    use wrt_test_guests::SPAWN_DENIED;
    let policy = wrt_host_spawn::Policy::deny_all().allow_program("true");
    let capture = GuestOutput::Capture { limit: 1 << 16 };
    let options = RunOptions::new()
        .spawn_policy(&policy)
        .unwrap()
        .stdout(capture.clone())
        .stderr(capture)
        .on_spawn_denied(|_| Some("EMBEDDER HINT".to_owned()));
    let guest = Runtime::new().unwrap().load_file(SPAWN_DENIED).unwrap();
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for (program, shown) in [("env", true), ("/usr/bin/env", false), ("./env", false)] {
        let report = guest.run(&options.clone().args([program])).unwrap();
        let out = String::from_utf8_lossy(&report.stdout);
        assert_eq!(report.outcome, Outcome::Exited(0), "{program}: {out}{}", String::from_utf8_lossy(&report.stderr));
        assert_eq!(out.contains("EMBEDDER HINT"), shown, "{program}: {out}");
    }
}

/// The examples of docs/policy.md pass `wrt policy check` as written (the audit-only one
/// with its warning), and the old first example's `*.c` would not have.
#[test]
fn policy_check_on_the_doc_examples() {
    let doc = include_str!("../../docs/policy.md");
    let blocks: Vec<&str> = doc.split("```toml\n").skip(1).map(|b| b.split("```").next().unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let work = std::fs::canonicalize(dir.path()).unwrap();
    let build = blocks[0].replace("/srv/build", work.to_str().unwrap());
    for (text, code) in [(build.as_str(), 0), (blocks[1], 0), (blocks[2], 1)] {
        let file = write(dir.path(), text);
        let out = run(["policy", "check", &file]);
        assert_code(&out, code);
    }
    let old = build.replace("[!@-]*.c", "*.c");
    let out = run(["policy", "check", &write(dir.path(), &old)]);
    assert_code(&out, 1);
    assert!(stdout(&out).contains("allow rule 2 (`cc`) is effectively allow-all"), "{}", stdout(&out));
}

/// A guest's strings reach `explain`'s output escaped: a newline in an argument, a variable's
/// value or the program cannot add a line of its own, such as a forged `decision: allow`.
#[test]
fn policy_explain_escapes_what_a_request_carries() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "audit_only = true\n[env]\nallow = [\"LANG\"]\n\n[[allow]]\nprogram = \"echo\"\n");
    let forged = "x\ndecision: allow\nreason: allowed";
    let env = format!("LANG={forged}");
    let out = run(["policy", "explain", &file, "--env", &env, "--", "echo", forged]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("decision:")).count(), 1, "{text}");
    assert!(text.lines().any(|l| l == "env: LANG=x\\ndecision: allow\\nreason: allowed"), "{text}");
    let out = run(["policy", "explain", &file, "--", "/no/such\ndecision: allow"]);
    assert_eq!(stdout(&out).lines().filter(|l| l.starts_with("decision:")).count(), 1, "{}", stdout(&out));
}

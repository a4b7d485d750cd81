//! What the host itself keeps (the compile cache, the audit log, the policy file, the
//! programs and the search path) is never reachable through a writable preopen, checked by
//! file identity; preopens of kernel pseudo-filesystems need `--allow-pseudo-fs`; deny rules
//! cover every hard link of a denied file.

use std::path::{Path, PathBuf};
use std::process::Command;

use wrt_runtime::{CacheMode, ConfigError, DirAccess, GuestOutput, RunOptions, Runtime};
use wrt_test_guests::{CLI_HELLO, SPAWN_DENIED};

use crate::util::{assert_code, run, stderr, stdout, wrt};

/// A canonical temp dir with `bin/tool`, a copy of `true`, and an empty `w/` for the guest.
fn layout() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("w")).unwrap();
    std::fs::copy(Path::new("/bin/true").canonicalize().unwrap(), root.join("bin/tool")).unwrap();
    (dir, root)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Asserts that wrt refused to start the guest, with a message containing each of `parts`.
#[track_caller]
fn assert_refused(out: &std::process::Output, parts: &[&str]) {
    assert_code(out, 2);
    let err = stderr(out);
    for part in parts {
        assert!(err.contains(part), "`{part}` not in: {err}");
    }
    assert!(stdout(out).is_empty(), "the guest must not run: {}", stdout(out));
}

/// The program's directory, bind-mounted elsewhere and given as `--dir` (or mounted below a
/// `--dir`), passed the check that compared path prefixes: the guest could rewrite the program.
#[test]
fn program_dir_bind_mounted_into_a_writable_dir_is_refused() {
    if !Command::new("unshare").args(["-rm", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: `unshare -rm` (a user and mount namespace) is not available");
        return;
    }
    let (_guard, root) = layout();
    let (bin, w, sub) = (root.join("bin"), root.join("w"), root.join("w/sub"));
    std::fs::create_dir(&sub).unwrap();
    let tool = bin.join("tool");
    for (mount_point, preopen) in [(&w, &w), (&sub, &w)] {
        // `wrt` runs inside the namespace, where the bind mount exists.
        let script = format!(
            "mount --bind '{}' '{}' && exec '{}' run --dir '{}' --allow-run '{}' '{SPAWN_DENIED}' /bin/sh",
            s(&bin),
            s(mount_point),
            env!("CARGO_BIN_EXE_wrt"),
            s(preopen),
            s(&tool),
        );
        let out = wrt_in_namespace(&script);
        assert_refused(
            &out,
            &[&format!("allow rule `{}`", s(&tool)), &format!("guest-writable directory `{}`", s(preopen))],
        );
    }
}

/// `sh -c script` in a new user and mount namespace, with `wrt`'s test environment.
fn wrt_in_namespace(script: &str) -> std::process::Output {
    crate::util::command("unshare").args(["-rm", "sh", "-c", script]).output().unwrap()
}

/// A hard link of an allowed program inside a `--dir` let the guest rewrite the program: the
/// check looked only at the program's directory. A link deep inside is found; a link outside
/// the `--dir`, on the same file system, is no reach (it was refused before links were searched
/// for); and the program alone, with its one link, is fine.
#[test]
fn hard_link_of_allowed_program_in_writable_dir_is_refused() {
    let (_guard, root) = layout();
    let tool = root.join("bin/tool");
    std::fs::create_dir_all(root.join("w/deep/er")).unwrap();
    std::fs::hard_link(&tool, root.join("w/deep/er/tool")).unwrap();
    let out = run(["run", "--dir", s(&root.join("w")), "--allow-run", s(&tool), SPAWN_DENIED, "/bin/sh"]);
    assert_refused(&out, &[&format!("allow rule `{}`", s(&tool)), "has a hard link inside", "`--dir`"]);
    std::fs::rename(root.join("w/deep/er/tool"), root.join("tool-elsewhere")).unwrap();
    let out = run(["run", "--dir", s(&root.join("w")), "--allow-run", s(&tool), SPAWN_DENIED, "/bin/sh"]);
    assert_code(&out, 0);
    std::fs::remove_file(root.join("tool-elsewhere")).unwrap();
    let out = run(["run", "--dir", s(&root.join("w")), "--allow-run", s(&tool), SPAWN_DENIED, "/bin/sh"]);
    assert_code(&out, 0);
}

/// An audit log inside a `--dir` was truncated and forged by the guest; also when the log is
/// reached through a symlink the guest could re-point, or through a symlink to the directory.
#[test]
fn audit_log_reachable_through_a_writable_dir_is_refused() {
    let (_guard, root) = layout();
    let (w, outside) = (root.join("w"), root.join("logs"));
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, w.join("logs")).unwrap();
    std::os::unix::fs::symlink(&w, root.join("w-link")).unwrap();
    for log in [w.join("audit.jsonl"), w.join("logs/audit.jsonl"), root.join("w-link/audit.jsonl")] {
        let out = run(["run", "--dir", s(&w), "--audit-log", s(&log), CLI_HELLO]);
        assert_refused(&out, &[&format!("audit log `{}`", s(&log)), "`--audit-log`", &format!("`{}`", s(&w))]);
        assert!(!log.exists(), "nothing is written to `{}`", log.display());
    }
    let log = outside.join("audit.jsonl");
    let out = run(["run", "--dir", s(&w), "--audit-log", s(&log), CLI_HELLO]);
    assert_code(&out, 0);
}

/// A policy file inside a `--dir` could be rewritten by the guest for the next run.
#[test]
fn policy_file_inside_a_writable_dir_is_refused() {
    let (_guard, root) = layout();
    let w = root.join("w");
    let policy = crate::spawn::policy_file(&w, "allow = []\n");
    let out = run(["run", "--dir", s(&w), "--policy", &policy, CLI_HELLO]);
    assert_refused(&out, &[&format!("policy file `{policy}`"), "`--policy`", &format!("`{}`", s(&w))]);
    let out = run(["run", "--ro-dir", s(&w), "--policy", &policy, CLI_HELLO]);
    assert_code(&out, 0);
}

/// A search directory the guest can write let it plant symlinks and probe which host files
/// exist (not-executable for `/etc/shadow`, not-found for a missing file).
#[test]
fn writable_search_dir_is_refused() {
    let (_guard, root) = layout();
    let w = root.join("w");
    std::fs::create_dir(w.join("bin")).unwrap();
    let policy = crate::spawn::policy_file(&root, &format!("search_path = [\"{}\"]\n", s(&w.join("bin"))));
    let out = run(["run", "--dir", s(&w), "--policy", &policy, CLI_HELLO]);
    assert_refused(&out, &[&format!("search directory `{}`", s(&w.join("bin"))), &format!("`{}`", s(&w))]);
}

/// A guest given `--dir $HOME` could write wrt's compile cache, whose code the next run loads.
#[test]
fn compile_cache_inside_a_writable_dir_is_not_used() {
    let (_guard, root) = layout();
    let home = root.join("w");
    let cache = home.join(".cache");
    let out = wrt().env("XDG_CACHE_HOME", &cache).args(["run", "--dir", s(&home), CLI_HELLO]).output().unwrap();
    assert_code(&out, 0);
    let err = stderr(&out);
    let note = format!(
        "wrt: not using the compile cache `{}`: it lies inside `--dir {}`, which the guest can write",
        s(&cache.join("wrt/modules")),
        s(&home)
    );
    assert_eq!(err.matches(&note).count(), 1, "{err}");
    assert!(!cache.join("wrt").exists(), "nothing is cached in the guest's directory");

    // A library runtime caching there refuses the run instead.
    let runtime = Runtime::builder().cache(CacheMode::Dir(cache.join("lib"))).build().unwrap();
    let guest = runtime.load_file(CLI_HELLO).unwrap();
    let options =
        RunOptions::new().preopen(&home, "/home", DirAccess::ReadWrite).stdout(GuestOutput::Capture { limit: 1 << 10 });
    let err = guest.run(&options).unwrap_err();
    assert!(matches!(err.downcast_ref::<ConfigError>(), Some(ConfigError::WritableCache { .. })), "{err:#}");
    let read_only =
        RunOptions::new().preopen(&home, "/home", DirAccess::ReadOnly).stdout(GuestOutput::Capture { limit: 1 << 10 });
    assert!(guest.run(&read_only).is_ok());
}

/// `--ro-dir /proc` let the guest read wrt's own environment and memory maps.
#[test]
fn pseudo_fs_preopen_is_refused_unless_allowed() {
    for (flag, dir, fs) in [
        ("--ro-dir", "/proc", "proc"),
        ("--dir", "/proc/self", "proc"),
        ("--ro-dir", "/sys", "sysfs"),
        ("--ro-dir", "/", "proc"),
        ("--ro-dir", "/dev", "dev"),
    ] {
        if !Path::new(dir).exists() {
            eprintln!("SKIPPED: `{dir}` does not exist");
            continue;
        }
        let out = run(["run", flag, dir, CLI_HELLO]);
        assert_refused(&out, &[&format!("directory `{dir}` for the guest"), "--allow-pseudo-fs"]);
        assert!(stderr(&out).contains(&format!("the {fs}")), "{}", stderr(&out));
    }
    let out = run(["run", "--ro-dir", "/proc", "--allow-pseudo-fs", CLI_HELLO]);
    assert_code(&out, 0);
}

/// `--deny-run perl` did not cover a hard link of the same file (`perl5.36.0`) allowed by path.
#[test]
fn deny_rule_covers_a_hard_link_allowed_by_path() {
    let (_guard, root) = layout();
    let (tool, link) = (root.join("bin/tool"), root.join("bin/tool-1.0"));
    std::fs::hard_link(&tool, &link).unwrap();
    let out =
        run(["run", "--allow-run", s(&link), "--deny-run", s(&tool), SPAWN_DENIED, s(&link), "matches deny rule"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("denied: "), "{}", stderr(&out));
}

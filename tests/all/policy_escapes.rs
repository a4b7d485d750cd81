//! Rules that look narrow but run any command, each tried by a real guest through `wrt run`
//! (the command writes a marker file in the guest's `--dir`, where the child sandbox lets it
//! write), and each flagged by `wrt policy check` (exit 1, with a warning for that rule).

use std::fs;
use std::path::{Path, PathBuf};

use wrt_test_guests::SPAWN_POLICY_ESCAPE;

use crate::util::{assert_code, run, stdout};

/// The guest's `--dir` (canonical), on a memory file system when there is one: not the file
/// system of the allowed programs, some of which have many hard links (git's), which
/// `wrt run` refuses to share a writable directory with. The policy file lives outside it.
struct Work {
    _dirs: [tempfile::TempDir; 2],
    dir: PathBuf,
    policy: PathBuf,
}

fn work() -> Work {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let policy = tempfile::tempdir().unwrap();
    Work {
        dir: fs::canonicalize(dir.path()).unwrap(),
        policy: fs::canonicalize(policy.path()).unwrap().join("policy.toml"),
        _dirs: [dir, policy],
    }
}

/// Writes `policy` (with `{dir}` replaced), checks that `wrt policy check` warns with
/// `warning` in a line, and runs the guest with `guest_args` and the work directory as `--dir`.
fn try_escape(work: &Work, policy: &str, warning: &str, guest_args: &[&str]) -> String {
    fs::write(&work.policy, policy.replace("{dir}", work.dir.to_str().unwrap())).unwrap();
    let file = work.policy.to_str().unwrap();
    let out = run(["policy", "check", file]);
    let text = stdout(&out);
    assert_code(&out, 1);
    assert!(text.lines().any(|l| l.starts_with("warning: ") && l.contains(warning)), "{text}");
    let mut args = vec!["run", "--policy", file, "--dir", work.dir.to_str().unwrap(), SPAWN_POLICY_ESCAPE];
    args.extend_from_slice(guest_args);
    let out = run(args);
    assert_code(&out, 0);
    stdout(&out)
}

#[test]
fn a_shell_with_no_arguments_runs_what_the_guest_writes_to_its_stdin() {
    let work = work();
    let dir = &work.dir;
    let marker = dir.join("from-stdin");
    let script = format!("touch {}", marker.display());
    let policy = "[[allow]]\nprogram = \"sh\"\nargs = [[]]\n";
    try_escape(
        &work,
        policy,
        "allow rule 1 (`sh`) is effectively allow-all: the argument list [] gives it no script",
        &["--stdin", &script, "sh"],
    );
    assert!(marker.exists());
}

#[test]
fn bash_env_in_env_allow_runs_a_command() {
    let work = work();
    let dir = &work.dir;
    let marker = dir.join("from-bash-env");
    let policy = "[env]\nallow = [\"BASH_ENV\"]\n\n[[allow]]\nprogram = \"bash\"\nargs = [[\"-c\", \"true\"]]\n";
    let env = format!("BASH_ENV=$(touch {})", marker.display());
    try_escape(
        &work,
        policy,
        "`env.allow` lists `BASH_ENV`, which makes allow rule 1 (`bash`)",
        &["--env", &env, "bash", "-c", "true"],
    );
    assert!(marker.exists());
}

#[test]
fn a_git_pattern_that_admits_options_writes_any_file() {
    let work = work();
    let dir = &work.dir;
    let repo = dir.join("repo");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git").args(args).current_dir(dir).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "repo"]);
    git(&["-C", "repo", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"]);
    let marker = dir.join("written-by-git");
    let policy = "cwd_allow = [\"{dir}\"]\n\n[[allow]]\nprogram = \"git\"\nargs = [[\"log\", \"--o*\"]]\n";
    let output = format!("--output={}", marker.display());
    try_escape(
        &work,
        policy,
        "a pattern admits options it does not spell out, `--output=`",
        &["--cwd", repo.to_str().unwrap(), "git", "log", &output],
    );
    assert!(marker.exists());
}

#[test]
fn a_sed_script_pattern_runs_a_command() {
    let work = work();
    let dir = &work.dir;
    let marker = dir.join("from-sed");
    let policy = "[[allow]]\nprogram = \"sed\"\nargs = [[\"-n\", \"[!@-]*\"]]\n";
    let script = format!("1e touch {}", marker.display());
    try_escape(
        &work,
        policy,
        "allow rule 1 (`sed`) is effectively allow-all: a pattern has `*`",
        &["--stdin", "x\n", "sed", "-n", &script],
    );
    assert!(marker.exists());
}

#[test]
fn a_make_target_pattern_runs_a_command() {
    let work = work();
    let dir = &work.dir;
    let marker = dir.join("from-make");
    let policy = "[[allow]]\nprogram = \"make\"\nargs = [[\"-C\", \"{dir}\", \"[a-z]*\"]]\n";
    // Assigned on the command line, `:=` expands at once; the child's environment is empty, so
    // the assignment sets make's shell itself and names the program by path.
    let assignment = format!("a:=$(eval SHELL:=/bin/sh)$(shell /usr/bin/touch {})", marker.display());
    let out = try_escape(
        &work,
        policy,
        "allow rule 1 (`make`) is effectively allow-all: a pattern has `*`",
        &["make", "-C", dir.to_str().unwrap(), &assignment],
    );
    assert!(marker.exists(), "{out}");
}

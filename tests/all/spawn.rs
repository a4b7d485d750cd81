//! Guests running host programs through the SDK `wrt-guest`: output capture, exit codes and
//! signals, stdin both ways, environment and working directory, denial, timeouts, kill,
//! `wait_any`, many spawns without leaks, and children that never outlive the sandbox.

use std::path::Path;
use std::time::{Duration, Instant};

use wrt_test_guests::*;

use crate::util::{assert_code, json_number, run, stats_line, stderr, stdout, wrt, wrt_lines};

foreach_spawn!(assert_test_exists);
use crate::assert_test_exists;

/// `--allow-run P` for each program.
fn allow(programs: &[&str]) -> Vec<String> {
    programs.iter().flat_map(|p| ["--allow-run".to_owned(), (*p).to_owned()]).collect()
}

/// `wrt run` with the allow rules, the guest and its arguments.
pub(crate) fn run_guest(programs: &[&str], guest: &str, args: &[&str]) -> std::process::Output {
    run_guest_with(&[], programs, guest, args)
}

/// `wrt run` with `flags`, the allow rules, the guest and its arguments.
pub(crate) fn run_guest_with(flags: &[&str], programs: &[&str], guest: &str, args: &[&str]) -> std::process::Output {
    let mut argv = vec!["run".to_owned()];
    argv.extend(flags.iter().map(|f| (*f).to_owned()));
    argv.extend(allow(programs));
    argv.push(guest.to_owned());
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    run(argv)
}

pub(crate) use crate::util::token;
pub(crate) use wrt_test_support::processes::live_with_arg as processes_with;

/// A policy file in `dir` with `text`, and its path.
pub(crate) fn policy_file(dir: &Path, text: &str) -> String {
    let path = dir.join("policy.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn spawn_output() {
    let out = run_guest(&["echo", "sh", "cat", "head"], SPAWN_OUTPUT, &[]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "output ok\n");
}

#[test]
fn spawn_status() {
    let out = run_guest(&["true", "false", "sh"], SPAWN_STATUS, &[]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "status ok\n");
}

#[test]
fn spawn_stdin_cat() {
    let out = run_guest(&["cat", "true"], SPAWN_STDIN_CAT, &["16777216"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "16777216 bytes each way, three times\n");
}

#[test]
fn spawn_env() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), "[env]\nallow = [\"WRT_ALLOWED\"]\n");
    let out = wrt()
        .env("WRT_PASS", "from the host")
        .env("WRT_TEST_SECRET", "leak")
        .args(["run", "--policy", &policy, "--allow-run", "env", "--allow-env", "WRT_PASS"])
        // The child's environment: the variable passed through, and the policy's search path
        // as `PATH`, which nothing else sets.
        .args(["--env", "GUEST_ONLY=1", SPAWN_ENV, "WRT_PASS=from the host", "PATH=/usr/local/bin:/usr/bin:/bin"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("env ok\n"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("leak"));
}

#[test]
fn spawn_cwd() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let allowed = allowed.path().canonicalize().unwrap();
    std::fs::create_dir(allowed.join("sub")).unwrap();
    let policy = policy_file(
        outside.path(),
        &format!("cwd_allow = [{:?}]\n\n[[allow]]\nprogram = \"pwd\"\n", allowed.to_str().unwrap()),
    );
    let outside = outside.path().canonicalize().unwrap();
    let out = run(["run", "--policy", &policy, SPAWN_CWD, allowed.to_str().unwrap(), outside.to_str().unwrap()]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("cwd ok\n"), "{}", stdout(&out));
}

#[test]
fn spawn_denied() {
    // Deny by default: the guest sees DENIED with the host's message, which (docs/abi.md)
    // names the flag that would allow the program; wrt also says so on stderr.
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let out = run(["run", "--audit-log", audit.to_str().unwrap(), SPAWN_DENIED, "sh", "--allow-run"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("denied: "), "{}", stdout(&out));
    assert!(wrt_lines(&out).iter().any(|l| l.contains("`--allow-run sh`")), "{}", stderr(&out));
    let log = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(log.lines().count(), 3, "one decision per attempt:\n{log}");
    assert!(log.lines().all(|l| l.contains("\"deny\"")), "{log}");

    // Deny beats allow.
    let out = run(["run", "--allow-run", "sh", "--deny-run", "sh", SPAWN_DENIED, "sh", "deny rule"]);
    assert_code(&out, 0);

    // A symlink to a denied program is the program: rules and requests resolve to the
    // canonical path, whatever name the guest (or the allow rule) uses.
    let link = dir.path().join("innocent");
    std::os::unix::fs::symlink(Path::new("/bin/sh").canonicalize().unwrap(), &link).unwrap();
    let link = link.to_str().unwrap();
    // The guest is told only that no rule names its spelling, not that the link leads to a denied
    // program.
    let out = run(["run", "--allow-run", "true", "--deny-run", "sh", SPAWN_DENIED, link, "no allow rule"]);
    assert_code(&out, 0);
    let out = run(["run", "--allow-run", link, "--deny-run", "sh", SPAWN_DENIED, link, "deny rule"]);
    assert_code(&out, 0);
    let out = run(["run", "--allow-run", "true", SPAWN_DENIED, link, "no allow rule"]);
    assert_code(&out, 0);
}

#[test]
fn spawn_timeout() {
    let started = Instant::now();
    let out = run_guest(&["sleep"], SPAWN_TIMEOUT, &[]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("timeout ok\n"), "{}", stdout(&out));
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
}

#[test]
fn spawn_kill() {
    let token = token();
    // Its children look for the sleeper in the host's /proc, which the child sandbox hides.
    let out = run_guest_with(&["--child-sandbox", "off"], &["sleep", "sh", "grep", "true"], SPAWN_KILL, &[&token]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "kill ok\n");
    assert_eq!(processes_with(&format!("1000.{token}")), Vec::<u32>::new());
}

#[test]
fn spawn_wait_any() {
    let out = run_guest(&["sleep", "sh"], SPAWN_WAIT_ANY, &[]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "wait_any ok\n");
}

#[test]
fn spawn_many() {
    // The guest compares the host's open fds before and after (via /proc/$PPID/fd, after a
    // warm-up) and looks for zombies; here the counts are checked too.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Its children count the host's descriptors in /proc, which the child sandbox hides.
    let out = run_guest_with(&["--child-sandbox", "off"], &["true", "sh", "ls", "ps", "grep"], SPAWN_MANY, &["1000"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    let counts = line.trim().strip_prefix("spawned 1000, fds ").expect(&line);
    let (fds, zombies) = counts.split_once(", zombies ").expect(&line);
    let (before, after) = fds.split_once(" -> ").expect(&line);
    let (before, after): (u32, u32) = (before.parse().unwrap(), after.parse().unwrap());
    assert!(after <= before, "{line}");
    assert_eq!(zombies, "0", "{line}");
}

#[test]
fn spawn_hang() {
    // A guest blocked in `wait` on a child that never ends: the sandbox's --timeout stops it,
    // and the child dies with the sandbox.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let token = token();
    let started = Instant::now();
    let out = run(["run", "--timeout", "1s", "--allow-run", "sleep", SPAWN_HANG, &token]);
    assert_code(&out, 124);
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    assert!(stdout(&out).starts_with("waiting for child "), "{}", stdout(&out));
    assert!(stderr(&out).contains("timed out after 1s"), "{}", stderr(&out));
    assert_eq!(processes_with(&format!("1000.{token}")), Vec::<u32>::new(), "the child outlived the sandbox");
}

/// A child's own timeout (300 ms) ends it while the guest sleeps and never looks at it; before, the
/// timer moved only while the guest waited, read, wrote or polled, so the child ran until the guest
/// touched it or ended.
#[test]
fn spawn_unwatched() {
    use std::io::{BufRead, BufReader};
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mark = format!("1000.{}", token());
    let mut child = wrt()
        .args(["run", "--allow-run", "sleep", SPAWN_UNWATCHED, &mark])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "started\n");
    let started = Instant::now();
    let sleeper = format!("sleep {mark}");
    while !processes_with(&sleeper).is_empty() {
        assert!(
            started.elapsed() < Duration::from_millis(2500),
            "the child outlived its timeout while the guest slept"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {rest}");
    assert!(rest.contains("signal: 15 (SIGTERM), timed out"), "{rest}");
}

#[test]
fn spawn_too_many() {
    let out = run_guest(&["sleep"], SPAWN_TOO_MANY, &["16"]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("too many ok\n"), "{}", stdout(&out));
}

#[test]
fn spawn_abi() {
    let out = run_guest(&["true", "cat"], SPAWN_ABI, &[]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("abi ok\n"), "{}", stdout(&out));
}

/// Lines of the JSONL audit log at `path` whose argv contains `arg`.
fn audit_lines_with(path: &Path, arg: &str) -> Vec<String> {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    log.lines().filter(|l| l.contains(&format!("\"{arg}\""))).map(str::to_owned).collect()
}

/// With every handle in use, `spawn` used to return NO_MEMORY after the program had already run
/// (the audit log showed its allow and exit records). Every check that can refuse a spawn now comes
/// before the program starts: no record, no `execve`.
#[test]
fn spawn_handle_limit() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let out = run(["run", "--allow-run", "true", "--audit-log", audit.to_str().unwrap(), SPAWN_HANDLE_LIMIT, "1024"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.starts_with("refused: "), "{text}");
    assert!(text.contains("1024 handles are live"), "{text}");
    assert!(text.ends_with("released ok\n"), "{text}");
    assert_eq!(audit_lines_with(&audit, "held").len(), 1024, "an allow record each");
    assert_eq!(audit_lines_with(&audit, "refused-spawn"), Vec::<String>::new(), "the refused spawn ran");
    assert_eq!(audit_lines_with(&audit, "after-release").len(), 1);
    // Exit records name the pid only: one for each of the 1025 programs that ran, no more.
    let log = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains("\"event\":\"exit\"")).count(), 1025);
    // The refusal leaves its own record, as every request does: a denial that started nothing.
    let refused: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["decision"] == "deny")
        .collect();
    assert_eq!(refused.len(), 1, "{log}");
    assert!(refused[0]["reason"].as_str().unwrap().contains("1024 handles are live"), "{}", refused[0]);
    assert_eq!(refused[0]["pid"], serde_json::Value::Null);
    assert_eq!(log.lines().count(), 2 * 1025 + 1);
}

#[test]
fn refused_spawn_never_executes() {
    // The same, seen by the kernel: strace lists every execve of wrt and its children.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((out, trace)) = crate::util::wrt_under_strace(
        "refused_spawn_never_executes",
        "execve",
        ["run", "--allow-run", "true", SPAWN_HANDLE_LIMIT, "1024"],
    ) else {
        return;
    };
    assert_code(&out, 0);
    let execs = |arg: &str| trace.lines().filter(|l| l.contains("execve(") && l.contains(arg)).count();
    assert_eq!(execs("\"held\""), 1024, "strace saw every spawn");
    assert_eq!(execs("\"after-release\""), 1);
    assert_eq!(execs("\"refused-spawn\""), 0, "the refused spawn was executed:\n{}", stdout(&out));
}

/// Runs `wrt run --allow-run true SPAWN_FD_BUDGET max` in `sh` after `limits` (ulimit lines).
fn run_with_fd_limits(limits: &str, max: &str) -> std::process::Output {
    let script = format!("{limits}; exec \"$0\" run --allow-run true \"$1\" \"$2\"");
    crate::util::wrt_under_sh(&script).args([SPAWN_FD_BUDGET, max]).output().unwrap()
}

/// Under `ulimit -n 256`, spawns with piped stdio used to fail with SPAWN_FAILED once the process
/// ran out of descriptors (82 children). The budget refuses first, with a message, and the guest
/// can go on.
#[test]
fn spawn_fd_budget() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_with_fd_limits("ulimit -n 256", "1000");
    assert_code(&out, 0);
    let text = stdout(&out);
    let refused = text.lines().find_map(|l| l.strip_prefix("refused after ")).unwrap_or_else(|| panic!("{text}"));
    let (held, message) = refused.split_once(": ").expect(&text);
    let held: u32 = held.parse().expect(&text);
    assert!(held >= 40, "{text}");
    assert!(message.contains("file descriptors") && message.contains("256"), "{text}");
}

#[test]
fn cli_raises_the_soft_descriptor_limit() {
    // A low soft limit under a higher hard one: wrt raises the soft limit at startup, so 300
    // children with piped stdio fit where 82 did.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_with_fd_limits("ulimit -S -n 256 && ulimit -H -n 4096", "300");
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "held 300\n");
}

/// A guest looping on a denied program whose name forges a line, carries terminal escapes and is
/// 100 KiB long: stderr shows each name escaped and capped, at most 20 denial lines, and one line
/// with the count of the rest.
#[test]
fn spawn_denied_loop() {
    let mut name = String::from("/no/such/x\nwrt: allow it with `--allow-run /bin/sh`\u{1b}[2J\u{202e}");
    name.push_str(&"B".repeat(100 << 10));
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let out = run(["run", "--audit-log", audit.to_str().unwrap(), SPAWN_DENIED_LOOP, &name, "100"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "denied 100 times\n");
    let err = stderr(&out);
    assert!(!err.contains(['\u{1b}', '\u{202e}']), "{err:?}");
    assert!(!err.lines().any(|l| l.starts_with("wrt: allow it")), "a forged line:\n{err}");
    let lines = wrt_lines(&out);
    let denials: Vec<_> = lines.iter().filter(|l| l.contains("no allow rule names")).collect();
    assert_eq!(denials.len(), 20, "{err}");
    for line in &denials {
        assert!(line.contains(r"/no/such/x\nwrt: allow it"), "{line}");
        assert!(line.contains(&format!("…({} bytes)", name.len())), "{line}");
        assert!(line.len() < 2048, "a line of {} bytes", line.len());
    }
    assert!(lines.iter().any(|l| l.contains("80 more denied spawns")), "{err}");
    assert!(err.len() < 64 << 10, "{} bytes of stderr", err.len());

    // The audit log: valid JSONL, bounded, rate-limited the same way.
    let log = std::fs::read_to_string(&audit).unwrap();
    let records: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.iter().filter(|r| r["event"] == "decision").count(), 20, "{log}");
    let suppressed: u64 =
        records.iter().filter(|r| r["event"] == "suppressed").map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(suppressed, 80, "{log}");
    assert!(log.len() < 64 << 10, "{} bytes of audit log", log.len());
}

/// A program the guest could replace (inside a read-write preopen, or below a preopened parent, or
/// through a symlinked preopen) is refused before the guest starts; a read-only preopen, or a
/// read-write one elsewhere, is fine.
#[test]
fn program_in_writable_preopen_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let prog = bin.join("tool");
    std::fs::copy(Path::new("/bin/true").canonicalize().unwrap(), &prog).unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let (prog_s, bin_s) = (prog.to_str().unwrap(), bin.to_str().unwrap());

    for (flag, preopen) in
        [("--dir", bin_s), ("--dir", dir.path().to_str().unwrap()), ("--dir", link.to_str().unwrap())]
    {
        let out = run(["run", flag, preopen, "--allow-run", prog_s, SPAWN_DENIED, "/bin/sh"]);
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(err.contains(&format!("allow rule `{prog_s}`")), "{err}");
        assert!(err.contains(&format!("guest-writable directory `{preopen}`")), "{err}");
        assert!(stdout(&out).is_empty(), "the guest must not run: {}", stdout(&out));
    }
    for (flag, preopen) in [("--ro-dir", bin_s), ("--dir", other.to_str().unwrap())] {
        let out = run(["run", flag, preopen, "--allow-run", prog_s, SPAWN_DENIED, "/bin/sh"]);
        assert_code(&out, 0);
        assert!(stdout(&out).starts_with("denied: "), "{}", stderr(&out));
    }
}

const PIPELINE_PROGRAMS: [&str; 8] = ["printf", "tr", "sort", "sh", "wc", "head", "yes", "cat"];

/// A three-stage pipeline, stderr merged into stdout; the megabyte that passes between children
/// never passes through the guest: `--stats` counts only what the guest read (the last stages'
/// output).
#[test]
fn spawn_pipeline() {
    let mut argv = vec!["run".to_owned(), "--stats=json".to_owned()];
    argv.extend(allow(&PIPELINE_PROGRAMS));
    argv.push(SPAWN_PIPELINE.to_owned());
    let out = run(argv);
    assert_code(&out, 0);
    let text = stdout(&out);
    let read: f64 = text
        .trim()
        .strip_prefix("pipelines ok, read ")
        .and_then(|rest| rest.strip_suffix(" bytes"))
        .unwrap_or_else(|| panic!("{text}"))
        .parse()
        .unwrap();
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "stream_bytes"), read, "{stats}");
    assert!(read < 100.0, "the guest read only the counts and short outputs: {read}");
    assert_eq!(json_number(&stats, "spawns"), 9.0, "{stats}");
}

/// Every stage of a pipeline ends with the guest, and so does what each stage started.
#[test]
fn pipeline_children_end_with_the_guest() {
    let token = token();
    let mut argv = vec!["run".to_owned()];
    argv.extend(allow(&PIPELINE_PROGRAMS));
    argv.extend([SPAWN_PIPELINE.to_owned(), "hang".to_owned(), token.clone()]);
    let out = run(argv);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "started\n");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&token).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(processes_with(&token), Vec::<u32>::new(), "stages outlived the guest");
}

/// Pipeline errors of a hostile guest, each with its own code and message; a denied stage leaves
/// the source's stdout readable.
#[test]
fn spawn_pipeline_errors() {
    let out = run_guest(&["printf", "cat"], SPAWN_PIPELINE_ERRORS, &[]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("pipeline errors ok\n"), "{}", stdout(&out));
}

/// `Child::pipe_into` in the core-module SDK: `printf | sort` joined by the host; a stdout that
/// is not piped and a denied stage fail with their own codes, and the denied stage leaves the
/// source's stdout readable.
#[test]
fn spawn_pipe_into() {
    let out = run_guest(&["printf", "sort"], SPAWN_PIPE_INTO, &[]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("not piped: cannot pipe the stdout of child"), "{text}");
    assert!(text.contains("denied: ") && text.contains("ls"), "{text}");
    assert!(text.ends_with("pipe_into ok\n"), "{text}");
}

/// A pseudo-terminal (isatty on 0, 1, 2; `stty size` at spawn and after a resize; `sh -i`); what
/// the child prints to the terminal goes to the guest, never to wrt's stderr.
#[test]
fn spawn_pty() {
    let out = run_guest(&["sh", "stty"], SPAWN_PTY, &[]);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("pty ok\n"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("PTY-MARKER") && !stderr(&out).contains("PTY-TITLE"), "{}", stderr(&out));
}

/// A child on a terminal leads its own session, and still ends with the guest, with what it
/// started.
#[test]
fn pty_children_end_with_the_guest() {
    let token = token();
    let out = run_guest(&["sh"], SPAWN_PTY, &["hang", &token]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "started\n");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&token).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(processes_with(&token), Vec::<u32>::new(), "a terminal's processes outlived the guest");
}

/// A child's inherited stdout and stderr go where the guest's go. Through the CLI they are the
/// host's; under an embedder's capture they land in the same capture, the child's lines after what
/// the guest printed before it and before what it printed after.
#[test]
fn spawn_inherit() {
    let out = run_guest(&["sh"], SPAWN_INHERIT, &[]);
    assert_code(&out, 3);
    assert_eq!(stdout(&out), "guest before\nchild out\nguest after\n");
    assert!(stderr(&out).contains("child err"), "{}", stderr(&out));

    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let policy = wrt_host_spawn::Policy::deny_all().allow_program("sh");
    let guest = wrt_runtime::Runtime::new().unwrap().load_file(SPAWN_INHERIT).unwrap();
    let capture = wrt_runtime::GuestOutput::Capture { limit: 1 << 16 };
    let options = wrt_runtime::RunOptions::new().spawn_policy(&policy).unwrap().stdout(capture.clone()).stderr(capture);
    for _ in 0..20 {
        let report = guest.run(&options).unwrap();
        assert_eq!(report.outcome, wrt_runtime::Outcome::Exited(3));
        assert_eq!(String::from_utf8_lossy(&report.stdout), "guest before\nchild out\nguest after\n");
        assert_eq!(String::from_utf8_lossy(&report.stderr), "child err\n");
    }
    // A capture of 16 bytes keeps the first 16 of the guest's and the child's bytes together.
    let small = wrt_runtime::GuestOutput::Capture { limit: 16 };
    let report = guest.run(&options.clone().stdout(small)).unwrap();
    assert_eq!(String::from_utf8_lossy(&report.stdout), "guest before\nchi");
    assert!(report.stdout_truncated);
}

/// What `spawn_bad_inputs` prints, and its component twin `component_bad_inputs` too: the
/// code (or status) of each bad input, the same through both ABIs.
pub(crate) const BAD_INPUTS_OUTPUT: &str = "\
nul in an argument: INVALID_ARGUMENT
nul in the program: INVALID_ARGUMENT
empty program: INVALID_ARGUMENT
relative program path: DENIED
relative directory: DENIED
stdin merged with stdout: INVALID_ARGUMENT
stdout merged with stdout: INVALID_ARGUMENT
zero timeout: ok: signal: 15 (SIGTERM), timed out
signal 0: INVALID_ARGUMENT
signal -1: INVALID_ARGUMENT
signal 32: INVALID_ARGUMENT
signal 64: INVALID_ARGUMENT
signal 256: INVALID_ARGUMENT
terminal resize without a terminal: NOT_PIPED
terminal resize to nothing: INVALID_ARGUMENT
wait: ok: exit status: 0
wait for any of no children: INVALID_ARGUMENT
buffer of 2 GiB: INVALID_ARGUMENT
backwards slice: OUT_OF_RANGE
slice past the end: OUT_OF_RANGE
read past the end: OUT_OF_RANGE
";

#[test]
fn spawn_bad_inputs() {
    let out = run_guest(&["true", "sleep"], SPAWN_BAD_INPUTS, &[]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), BAD_INPUTS_OUTPUT);
}

/// The escape-trying guest reports a refused spawn as an error and exits 1 (its escapes are
/// in `policy_escapes`).
#[test]
fn spawn_policy_escape() {
    let out = run(["run", SPAWN_POLICY_ESCAPE, "--stdin", "id", "sh"]);
    assert_code(&out, 1);
    assert!(stdout(&out).starts_with("error: "), "{}", stdout(&out));
}

/// A script of the guest `spawn_ops` (what the fuzz target `process_ops` feeds it) that uses
/// every operation: `cat` fed and read through pipes taken from it, its stdin closed before its
/// stdout is read; a shell whose stdout is read after it has ended; a wait with a timeout, a
/// signal, `try_wait`, `wait_any`, `pipe_into` from a child whose stdout is not piped or was
/// taken, a kill of an ended child, and a child and a pipe dropped in either order.
pub(crate) const OPS_SCRIPT: &[u8] = &[
    0, 1, 6, // spawn cat, stdin and stdout piped
    0, 2, 0x46, // spawn sh, stdout piped, stderr merged
    0, 0, 0, // spawn true, all null
    0, 3, 6, // spawn sleep 0.05, stdin and stdout piped
    1, 0, 0, // take cat's stdin
    2, 0, 0, // take cat's stdout
    3, 0, 1, // write 64 bytes to it
    5, 0, 0, // drop cat's stdin: end of file
    4, 0, 255, // read cat's stdout
    2, 1, 0, // take sh's stdout
    6, 1, 200, // wait up to 200 ms for sh
    4, 1, 10, // read sh's stdout after it ended
    9, 3, 17, // SIGTERM to sleep
    10, 3, 0, // try_wait sleep
    11, 0, 10, // wait_any, 10 ms
    12, 2, 6, // pipe true's stdout (null) into cat: refused
    12, 0, 6, // pipe cat's stdout (taken) into cat: refused
    7, 1, 0, // kill sh, which has ended
    8, 0, 0, // drop cat
    5, 0, 1, // drop cat's stdout, after cat
];

/// `wrt run` of an ops guest with `OPS_SCRIPT` on stdin and the programs it runs allowed.
pub(crate) fn run_ops(guest: &str) -> std::process::Output {
    use std::io::Write as _;
    let mut command = wrt();
    command.arg("run").args(allow(&["true", "cat", "sh", "sleep"])).arg(guest);
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(OPS_SCRIPT).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn spawn_ops() {
    let out = run_ops(SPAWN_OPS);
    assert_code(&out, 0);
    // Four spawns, the write, two reads, the wait, the signal, `try_wait`, `wait_any` and the
    // kill of an ended child succeed; both `pipe_into`s are refused.
    assert_eq!(stdout(&out), "ops: 12 ok, 2 failed\n", "{}", stderr(&out));
}

/// The peak memory wrt reports for a child is the child's own, or 0 (not known), never wrt's:
/// a child started with `vfork` (`posix_spawn`, `vfork-exec`) or `fork` (`fork-exec`) carries
/// wrt's peak into its `execve`, so with the guest holding 1 GiB `ls` "peaked" at more than
/// 1 GiB under every strategy. Now `ls`, a program that touches 64 MiB and a pipeline report
/// 0 there; and a program whose peak is above wrt's (768 MiB beside a guest holding nothing)
/// reports its own, within 10 % of what GNU time reports for it natively.
#[test]
fn spawn_peak_memory() {
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("SKIPPED: GNU time (`/usr/bin/time`) is not installed");
        return;
    }
    let big = "python3 -c \"b = b'x' * (768 << 20)\"";
    let native = crate::util::command("/usr/bin/time").args(["-f", "%M", "sh", "-c", big]).output().unwrap();
    let native_kib: u64 = stderr(&native).trim().lines().last().unwrap().parse().unwrap();
    let strategies: [&[&str]; 3] = [
        &["--spawn-strategy", "posix-spawn", "--child-sandbox", "off"],
        &["--spawn-strategy", "fork-exec"],
        &["--spawn-strategy", "vfork-exec"],
    ];
    let peak = |how: &[&str], mib: &str, script: &str| {
        let last = [SPAWN_PEAK_MEMORY, mib, script];
        let out = run(["run", "--allow-run", "sh"].iter().chain(how).chain(&last));
        assert_code(&out, 0);
        let text = stdout(&out);
        text.trim().strip_prefix("peak ").and_then(|n| n.parse::<u64>().ok()).unwrap_or_else(|| panic!("{text}"))
    };
    for how in strategies {
        for script in ["ls -l /usr/bin", "python3 -c \"b = b'x' * (64 << 20)\"", "ls /usr/bin | sort | wc -l"] {
            assert_eq!(peak(how, "1024", script), 0, "{how:?}, `{script}` beside a guest holding 1 GiB");
        }
        let own = peak(how, "0", big) / 1024;
        assert!(own.abs_diff(native_kib) * 10 <= native_kib, "{how:?}: {own} KiB, natively {native_kib} KiB");
    }
}

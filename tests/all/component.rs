//! Component guests (`wasm32-wasip2`, built from `guests/test-guests/components` on the SDK
//! `wrt-process`) running host programs through `wrt:process`: `ls -l /`, and the conformance
//! scenarios (output, exit status and signals, environment scrubbing, deny by default, timeout,
//! kill, waiting on several children, output limit, buffers, bad inputs; pseudo-terminals too).
//! Each scenario whose core-module twin (`spawn_*`, on `wrt-guest`) prints a stable text runs
//! both and compares.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use wrt_runtime::wasmtime::component::{Component, types::ComponentItem};
use wrt_runtime::wasmtime::{Config, Engine};
use wrt_test_guests::*;

use crate::spawn::{BAD_INPUTS_OUTPUT, policy_file, processes_with, run_guest, token};
use crate::util::{assert_code, run, stderr, stdout, wrt, wrt_lines};

foreach_component!(assert_test_exists);
use crate::assert_test_exists;

/// The names of the instances a component imports.
fn imports(bytes: &[u8]) -> Vec<String> {
    let engine = Engine::new(&Config::new()).unwrap();
    let component = Component::new(&engine, bytes).expect("a valid component");
    let ty = component.component_type();
    ty.imports(&engine)
        .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn components_import_wrt_process() {
    for (bytes, buffers) in
        [(COMPONENT_LS_BYTES, false), (COMPONENT_BUFFERS_BYTES, true), (COMPONENT_OUTPUT_BYTES, false)]
    {
        let imports = imports(bytes);
        assert!(imports.iter().any(|i| i == "wrt:process/process@0.1.0"), "{imports:?}");
        assert_eq!(imports.iter().any(|i| i == "wrt:process/buffers@0.1.0"), buffers, "{imports:?}");
    }
    let engine = Engine::new(&Config::new()).unwrap();
    assert!(Component::new(&engine, SPAWN_OUTPUT_BYTES).is_err(), "a core module is not a component");
}

/// Runs the core-module guest and its component twin with the same allow rules and arguments:
/// same exit code, same stdout. Returns the component's run.
#[track_caller]
fn twins(programs: &[&str], core: &str, component: &str, args: &[&str]) -> Output {
    let core_out = run_guest(programs, core, args);
    let component_out = run_guest(programs, component, args);
    assert_code(&core_out, 0);
    assert_code(&component_out, 0);
    assert_eq!(stdout(&component_out), stdout(&core_out), "the two ABIs disagree; stderr:\n{}", stderr(&component_out));
    component_out
}

#[test]
fn component_ls() {
    let (_dir, dir) = crate::component_guests::listed_dir();
    let out = run(["run", "--allow-run", "ls", "--ro-dir", &dir, COMPONENT_LS, &dir]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(text.lines().any(|l| l == "alpha.txt"), "{text}");
    assert!(text.ends_with("ls: exit status: 0\n"), "{text}");
    // The child sandbox holds for a component's children: `/` was not given.
    let out = run_guest(&["ls"], COMPONENT_LS, &["/"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("cannot open directory '/': Permission denied"), "{}", stderr(&out));
    // The exit code of ls is the guest's (exit-with-code).
    let out = run_guest(&["ls"], COMPONENT_LS, &["/nonexistent/wrt-component-ls"]);
    assert_code(&out, 2);
    assert!(stdout(&out).ends_with("ls: exit status: 2\n"), "{}", stdout(&out));
    assert!(stderr(&out).contains("wrt-component-ls"), "{}", stderr(&out));
    // Deny by default: no allow rule, the host's message names the flag.
    let out = run(["run", COMPONENT_LS]);
    assert_code(&out, 100);
    assert!(stderr(&out).contains("`--allow-run ls`"), "{}", stderr(&out));
}

#[test]
fn component_output() {
    let out = twins(&["echo", "sh", "cat", "head"], SPAWN_OUTPUT, COMPONENT_OUTPUT, &[]);
    assert_eq!(stdout(&out), "output ok\n");
}

#[test]
fn component_status() {
    let out = twins(&["true", "false", "sh"], SPAWN_STATUS, COMPONENT_STATUS, &[]);
    assert_eq!(stdout(&out), "status ok\n");
}

#[test]
fn component_stdin_cat() {
    let out = run_guest(&["cat", "wc", "true"], COMPONENT_STDIN_CAT, &["16777216"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "16777216 bytes each way, three times\n");
}

#[test]
fn component_env() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), "[env]\nallow = [\"WRT_ALLOWED\"]\n");
    let run_env = |guest: &str| {
        wrt()
            .env("WRT_PASS", "from the host")
            .env("WRT_TEST_SECRET", "leak")
            .args(["run", "--policy", &policy, "--allow-run", "env", "--allow-env", "WRT_PASS"])
            .args(["--env", "GUEST_ONLY=1", guest, "WRT_PASS=from the host", "PATH=/usr/local/bin:/usr/bin:/bin"])
            .output()
            .unwrap()
    };
    let (core, component) = (run_env(SPAWN_ENV), run_env(COMPONENT_ENV));
    assert_code(&component, 0);
    assert!(stdout(&component).ends_with("env ok\n"), "{}", stdout(&component));
    assert!(!stdout(&component).contains("leak"));
    assert_eq!(stdout(&component), stdout(&core));
}

#[test]
fn component_cwd() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let allowed = allowed.path().canonicalize().unwrap();
    std::fs::create_dir(allowed.join("sub")).unwrap();
    let policy = policy_file(
        outside.path(),
        &format!("cwd_allow = [{:?}]\n\n[[allow]]\nprogram = \"pwd\"\n", allowed.to_str().unwrap()),
    );
    let outside = outside.path().canonicalize().unwrap();
    let args = |guest| {
        ["run", "--policy", &policy, guest, allowed.to_str().unwrap(), outside.to_str().unwrap()].map(str::to_owned)
    };
    let (core, component) = (run(args(SPAWN_CWD)), run(args(COMPONENT_CWD)));
    assert_code(&component, 0);
    assert!(stdout(&component).ends_with("cwd ok\n"), "{}", stdout(&component));
    assert_eq!(stdout(&component), stdout(&core));
}

#[test]
fn component_denied() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let out = run(["run", "--audit-log", audit.to_str().unwrap(), COMPONENT_DENIED, "sh", "--allow-run"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("denied: "), "{}", stdout(&out));
    assert!(wrt_lines(&out).iter().any(|l| l.contains("`--allow-run sh`")), "{}", stderr(&out));
    let log = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(log.lines().count(), 3, "one decision per attempt:\n{log}");
    assert!(log.lines().all(|l| l.contains("\"deny\"")), "{log}");
    // The same message as through the core ABI; deny beats allow.
    let core = run(["run", SPAWN_DENIED, "sh", "--allow-run"]);
    assert_eq!(stdout(&out), stdout(&core));
    let out = run(["run", "--allow-run", "sh", "--deny-run", "sh", COMPONENT_DENIED, "sh", "deny rule"]);
    assert_code(&out, 0);
}

#[test]
fn component_timeout() {
    let started = Instant::now();
    let core = run_guest(&["sleep"], SPAWN_TIMEOUT, &[]);
    let out = run_guest(&["sleep"], COMPONENT_TIMEOUT, &[]);
    assert_code(&core, 0);
    assert_code(&out, 0);
    assert!(stdout(&out).ends_with("timeout ok\n"), "{}", stdout(&out));
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    // The same statuses through both ABIs, but for how long each child ran.
    let statuses = |out: &Output| -> Vec<String> {
        stdout(out).lines().map(|line| line.split(" after ").next().unwrap().to_owned()).collect()
    };
    assert_eq!(statuses(&out), statuses(&core));
    assert_eq!(statuses(&out).len(), 4, "{}", stdout(&out));
}

/// `process.run` ends at the sandbox's deadline while a process the child started in a new
/// session holds its stdout, as the core ABI's `run` does.
#[test]
fn component_run_ends_at_deadline() {
    crate::containment::run_ends_at_the_deadline(COMPONENT_RUN_ENDS_AT_DEADLINE);
}

#[test]
fn component_kill() {
    let token = token();
    // Its children look for the sleeper in the host's /proc, which the child sandbox hides.
    let out = crate::spawn::run_guest_with(
        &["--child-sandbox", "off"],
        &["sleep", "sh", "grep", "true"],
        COMPONENT_KILL,
        &[&token],
    );
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "kill ok\n");
    assert_eq!(processes_with(&format!("1000.{token}")), Vec::<u32>::new());
}

#[test]
fn component_wait_any() {
    let out = twins(&["sleep", "sh"], SPAWN_WAIT_ANY, COMPONENT_WAIT_ANY, &[]);
    assert_eq!(stdout(&out), "wait_any ok\n");
}

#[test]
fn component_too_many() {
    let out = twins(&["sleep"], SPAWN_TOO_MANY, COMPONENT_TOO_MANY, &["16"]);
    assert!(stdout(&out).ends_with("too many ok\n"), "{}", stdout(&out));
}

#[test]
fn component_pipeline() {
    let programs = ["printf", "tr", "sort", "sh", "wc", "head", "yes", "cat"];
    let out = twins(&programs, SPAWN_PIPELINE, COMPONENT_PIPELINE, &[]);
    assert!(stdout(&out).starts_with("pipelines ok, read "), "{}", stdout(&out));
}

#[test]
fn component_buffers() {
    let out = run_guest(&["cat"], COMPONENT_BUFFERS, &[]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "buffers ok\n");
}

#[test]
fn component_bad_inputs() {
    let out = twins(&["true", "sleep"], SPAWN_BAD_INPUTS, COMPONENT_BAD_INPUTS, &[]);
    assert_eq!(stdout(&out), BAD_INPUTS_OUTPUT);
}

/// Twins that are one source: each scenario here is one file in `twins/`, built as the core
/// module `<suite>_<name>` on `wrt-guest` and as the component `component_<name>` on
/// `wrt-process`, and no copy of it is left among the core-module or the component guests, so a
/// scenario changed on one side only cannot be.
#[test]
fn twin_scenarios_have_one_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("guests/test-guests");
    let names = [
        "spawn_output",
        "spawn_status",
        "spawn_env",
        "spawn_denied",
        "spawn_timeout",
        "spawn_wait_any",
        "spawn_too_many",
        "spawn_cwd",
        "spawn_pipeline",
        "spawn_pty",
        "spawn_bad_inputs",
        "contain_run_ends_at_deadline",
    ];
    for name in names {
        let twin = root.join(format!("twins/src/bin/{name}.rs"));
        assert!(twin.is_file(), "{} is missing", twin.display());
        let (_suite, rest) = name.split_once('_').unwrap();
        for copy in [format!("programs/src/bin/{name}.rs"), format!("components/src/bin/component_{rest}.rs")] {
            assert!(!root.join(&copy).exists(), "{copy} is a second source of the twin `{name}`");
        }
    }
}

#[test]
fn component_pty() {
    let out = twins(&["sh", "stty"], SPAWN_PTY, COMPONENT_PTY, &[]);
    assert_eq!(stdout(&out), "pty ok\n");
    assert!(!stderr(&out).contains("PTY-MARKER") && !stderr(&out).contains("PTY-TITLE"), "{}", stderr(&out));
    // A shell on a terminal and its background job end with the guest.
    let token = token();
    let out = run_guest(&["sh"], COMPONENT_PTY, &["hang", &token]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "started\n");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&token).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(processes_with(&token), Vec::<u32>::new(), "a terminal's processes outlived the guest");
}

/// Resident KiB of `wrt run [flags] component_hold.wasm MIB`'s mappings with and without `dc`
/// (`MADV_DONTFORK`) in `VmFlags`, while the component holds its memory.
fn held_rss_kib(flags: &[&str], mib: u32) -> (u64, u64) {
    use std::io::BufRead;
    let mut child = wrt()
        .arg("run")
        .args(flags)
        .args([COMPONENT_HOLD, &mib.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("failed to start wrt");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, format!("holding {mib} MiB\n"));
    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", child.id())).unwrap();
    let (mut dc, mut other, mut rss) = (0, 0, 0);
    for line in smaps.lines() {
        if let Some(kib) = line.strip_prefix("Rss:") {
            rss = kib.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            // VmFlags is the last field of each mapping.
            if flags.split_whitespace().any(|f| f == "dc") {
                dc += rss;
            } else {
                other += rss;
            }
            rss = 0;
        }
    }
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    (dc, other)
}

/// A component's linear memories come from wrt's memory creator, marked `MADV_DONTFORK` like a core
/// module's; with `--dontfork off` the same bytes are not.
#[test]
fn component_hold() {
    let (dc, other) = held_rss_kib(&[], 64);
    assert!(dc >= 64 << 10, "only {dc} KiB resident in `dc` mappings ({other} KiB elsewhere)");
    assert!(other < 64 << 10, "{other} KiB resident outside `dc` mappings");
    let (dc, other) = held_rss_kib(&["--dontfork", "off"], 64);
    assert!(dc < 64 << 10, "{dc} KiB resident in `dc` mappings with --dontfork off");
    assert!(other >= 64 << 10, "only {other} KiB resident outside `dc` mappings with --dontfork off");
}

/// The sandbox's deadline stops a component blocked on a child's stdout stream, its stdin stream
/// (pipe full), its exit pollable, or a clock sleep; the child ends with it.
#[test]
fn component_blocked() {
    for how in ["read", "write", "exit", "sleep"] {
        let started = Instant::now();
        let out =
            wrt().args(["run", "--allow-run", "sleep", "--timeout", "1s", COMPONENT_BLOCKED, how]).output().unwrap();
        assert_code(&out, 124);
        assert_eq!(stdout(&out), format!("blocking on {how}\n"), "{how}");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{how}: took {took:?}");
    }
}

/// The component guest of `wrt bench component-spawn` and its core-module twin
/// (`bench_spawn_loop`): N spawns of `/bin/true`; both fail alike, saying why, on bad
/// arguments, a denied program and a program that fails.
#[test]
fn component_bench_spawn() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    twins(&["/bin/true"], BENCH_SPAWN_LOOP, COMPONENT_BENCH_SPAWN, &["5"]);
    for (allow, args, expected) in [
        ("/bin/true", &["many"][..], "`many` is not a number of spawns"),
        ("/bin/true", &[], "usage: component_bench_spawn N [PROGRAM]"),
        ("/bin/true", &["2", "/bin/false"], "spawn 0 of `/bin/false` failed"),
        ("/bin/false", &["2", "/bin/false"], "spawn 0 of `/bin/false` ended with exit status: 1"),
    ] {
        let out = run_guest(&[allow], COMPONENT_BENCH_SPAWN, args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// The guest of `wrt bench component-startup`: a line on stdout, exit 0, and nothing but WASI
/// imported, so that `wasmtime run` runs it too.
#[test]
fn component_hello() {
    let out = run(["run", COMPONENT_HELLO]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello\n");
    let imports = imports(COMPONENT_HELLO_BYTES);
    assert!(imports.iter().all(|i| i.starts_with("wasi:")), "{imports:?}");
}

#[test]
fn component_open_fifo() {
    // With a writer holding the FIFO open, the component's read-only open returns at once.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let _writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let spec = format!("{}::/data", dir.path().display());
    let out = run(["run", "--timeout", "10s", "--ro-dir", &spec, COMPONENT_OPEN_FIFO, "/data/fifo"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "opened\n");
}

/// A component's read-only open of a FIFO with no writer waited in `openat` for good, past
/// `--timeout`: it is interrupted at the deadline, and the component stops there.
#[test]
fn component_fifo_open_stops_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&dir.path().join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let spec = format!("{}::/data", dir.path().display());
    let (out, elapsed) = crate::util::output_within(
        wrt().args(["run", "--timeout", "1s", "--ro-dir", &spec, COMPONENT_OPEN_FIFO, "/data/fifo"]),
        Duration::from_secs(30),
    );
    assert_code(&out, 124);
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
}

/// The component guest of `wrt bench real`, built from the core module's source: each mode
/// prints what the core module prints, and it fails alike (with 1: the exit of WASI 0.2 has no
/// code for the usage's 2).
#[test]
fn component_bench_tree_search() {
    let (_dir, spec) = crate::bench::tree_search_input();
    let guest = |guest: &str, args: &[&str]| {
        let argv: Vec<&str> = ["run", "--ro-dir", &spec, guest].iter().chain(args).copied().collect();
        run(argv)
    };
    for args in [&["tree-search", "/t", "needle"][..], &["hexdump", "/t/a/b/dump.bin"], &["emit", "70000"]] {
        let (core, component) = (guest(BENCH_TREE_SEARCH, args), guest(COMPONENT_BENCH_TREE_SEARCH, args));
        assert_code(&component, 0);
        assert_eq!(component.stdout, core.stdout, "{args:?}: {}", stderr(&component));
    }
    let out = guest(COMPONENT_BENCH_TREE_SEARCH, &["hexdump", "/t/a/b/dump.bin"]);
    assert_eq!(stdout(&out), crate::bench::TREE_SEARCH_DUMP);
    for (args, expected) in [
        (&["emit"][..], "component_bench_tree_search: usage: "),
        (&["hexdump", "/t/missing"], "/t/missing: No such file or directory"),
    ] {
        let out = guest(COMPONENT_BENCH_TREE_SEARCH, args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// A component's reads of a file in a synchronous run are made on the guest's own thread: Rust
/// 1.97's standard library reads with the non-blocking `read`, which wasmtime's own file stream
/// answers by reading on another thread while the guest waits in `poll`.
#[test]
fn a_components_file_reads_run_on_the_guests_thread() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..300_000_u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), &bytes).unwrap();
    let spec = format!("{}::/t", dir.path().display());
    let Some((out, trace)) = crate::util::wrt_under_strace(
        "a_components_file_reads_run_on_the_guests_thread",
        "execve,pread64",
        ["run", "--ro-dir", &spec, COMPONENT_BENCH_TREE_SEARCH, "hexdump", "/t/big.bin"],
    ) else {
        return;
    };
    assert_code(&out, 0);
    let dump = stdout(&out);
    assert_eq!(dump.lines().count(), 300_000 / 16 + 1, "one line per 16 bytes, then the size");
    assert_eq!(dump.lines().last(), Some("000493e0"));
    let pid = trace.split_whitespace().next().expect("the trace names wrt's pid first");
    let reads: Vec<&str> = trace.lines().filter(|l| l.contains("pread64(")).collect();
    assert!(reads.len() >= 300_000 / 65_536, "{} reads of a 300,000-byte file:\n{trace}", reads.len());
    let elsewhere: Vec<&&str> = reads.iter().filter(|l| l.split_whitespace().next() != Some(pid)).collect();
    assert!(elsewhere.is_empty(), "reads on a thread other than the guest's ({pid}):\n{trace}");
}

/// A component's read of a FIFO, which a writer holds open but never writes to, fails at once
/// (a FIFO cannot be read at an offset: ESPIPE) rather than blocking the guest's thread while it
/// waits for data.
#[test]
fn a_components_read_of_a_silent_fifo_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let _writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let spec = format!("{}::/t", dir.path().display());
    let (out, elapsed) = crate::util::output_within(
        wrt().args(["run", "--timeout", "20s", "--ro-dir", &spec, COMPONENT_BENCH_TREE_SEARCH, "hexdump", "/t/fifo"]),
        Duration::from_secs(60),
    );
    assert_code(&out, 1);
    assert!(stderr(&out).contains("/t/fifo: ") && stderr(&out).contains("os error 29"), "{}", stderr(&out));
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
}

#[test]
fn component_ops() {
    let (core, component) = (crate::spawn::run_ops(SPAWN_OPS), crate::spawn::run_ops(COMPONENT_OPS));
    assert_code(&component, 0);
    assert_eq!(stdout(&component), stdout(&core), "the two ABIs disagree; stderr:\n{}", stderr(&component));
}

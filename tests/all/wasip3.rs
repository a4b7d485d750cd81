//! WASI 0.3 commands (`wasi:cli/run@0.3.0`, an async function; the guest `p3_command`, built
//! from `guests/test-guests/wasip3` for `wasm32-wasip2` on the `wasip3` bindings) run under `wrt
//! run` and the library with every option meaning what it means for a WASI 0.2 component:
//! arguments, environment, preopens, stdin and stdout through WASI 0.3's streams, exit codes,
//! traps, timeout, fuel, the memory limit and `wrt:process`. Runs through the library
//! (synchronous, asynchronous, cancelled) are wrt-runtime's tests (`runtime/tests/all/wasip3.rs`).

use std::time::{Duration, Instant};

use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime, WasiVersion};
use wrt_test_guests::*;

use crate::util::{assert_code, run, stderr, stdout, wrt, wrt_lines};

foreach_p3!(assert_test_exists);
use crate::assert_test_exists;

/// `wrt run p3_command ARGS`.
fn p3(args: &[&str]) -> std::process::Output {
    run_with(&[], args)
}

/// `wrt run FLAGS p3_command ARGS`.
fn run_with(flags: &[&str], args: &[&str]) -> std::process::Output {
    let mut argv = vec!["run"];
    argv.extend(flags);
    argv.push(P3_COMMAND);
    argv.extend(args);
    run(argv)
}

#[test]
fn p3_command() {
    // The guest exports both versions' `run`, as every Rust bin on `wasm32-wasip2` does: wrt
    // runs WASI 0.3's (the other would say so on stderr and exit 3).
    let out = p3(&["hello"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello from WASI 0.3\n");
    assert_eq!(stderr(&out), "");
    let guest = Runtime::new().unwrap().load_file(P3_COMMAND).unwrap();
    assert!(guest.is_component());
    assert_eq!(guest.wasi_version(), WasiVersion::P3);
    let hello = Runtime::new().unwrap().load_file(COMPONENT_HELLO).unwrap();
    assert_eq!(hello.wasi_version(), WasiVersion::P2);
}

#[test]
fn p3_hello() {
    // The guest of the WASI 0.3 start measured against `wasmtime run` (docs/benchmarks.md): it
    // imports nothing of wrt's, only WASI (0.3, and 0.2 from Rust's std).
    let out = run(["run", P3_HELLO]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello\n");
    let engine = wrt_runtime::wasmtime::Engine::default();
    let component = wrt_runtime::wasmtime::component::Component::new(&engine, P3_HELLO_BYTES).unwrap();
    let imports: Vec<String> = component.component_type().imports(&engine).map(|(name, _)| name.to_owned()).collect();
    assert!(imports.iter().all(|name| name.starts_with("wasi:")), "{imports:?}");
    assert!(imports.iter().any(|name| name.starts_with("wasi:cli/stdout@0.3.")), "{imports:?}");
}

#[test]
fn arguments_environment_and_stderr_are_the_runs_own() {
    let out = run_with(&["--env", "GREETING=hi", "--argv0", "tool"], &["args", "one", "two words"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "tool\nargs\none\ntwo words\n");
    // Only what `--env` gives: nothing of wrt's own environment.
    let out = wrt().env("HOST_SECRET", "x").args(["run", "--env", "GREETING=hi", P3_COMMAND, "env"]).output().unwrap();
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "GREETING=hi\n");
    let out = p3(&["stderr", "to the error stream"]);
    assert_code(&out, 0);
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", "to the error stream"));
}

#[test]
fn exit_codes_failures_and_traps_end_the_run_as_for_wasi_0_2() {
    assert_code(&p3(&["exit", "7"]), 7);
    assert_code(&p3(&["exit", "0"]), 0);
    // `run` returning `Err(())` is a failure without a code.
    assert_code(&p3(&["fail"]), 1);
    let out = p3(&["trap"]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("wasm trap"), "{}", stderr(&out));
    let out = p3(&["no-such-mode"]);
    assert_code(&out, 1);
    assert!(stderr(&out).contains("unknown mode `no-such-mode`"), "{}", stderr(&out));
}

#[test]
fn preopens_give_what_they_name_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "read through WASI 0.3\n").unwrap();
    let grant = format!("{}::/data", dir.path().display());
    let out = run_with(&["--ro-dir", &grant], &["read", "note.txt"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "read through WASI 0.3\n");
    // Out of the preopen: refused by WASI, the guest fails.
    let out = run_with(&["--ro-dir", &grant], &["read", "../../etc/passwd"]);
    assert_code(&out, 1);
    assert!(stderr(&out).contains("open: "), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    // No preopen at all: no directory.
    let out = p3(&["read", "note.txt"]);
    assert_code(&out, 1);
    assert_eq!(stdout(&out), "no preopened directory\n");
}

#[test]
fn stdin_reaches_the_guest_through_its_stream() {
    let mut child = wrt()
        .args(["run", P3_COMMAND, "cat"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"line one\nline two\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "line one\nline two\n");
}

#[test]
fn the_timeout_stops_a_guest_that_waits_and_one_that_computes() {
    for mode in [["sleep", "60000"], ["spin", ""]] {
        let started = Instant::now();
        let out = run_with(&["--timeout", "300ms"], &mode);
        assert_code(&out, 124);
        assert!(stderr(&out).contains("timed out after 300ms"), "{mode:?}: {}", stderr(&out));
        assert!(started.elapsed() < Duration::from_secs(30), "{mode:?}: the timeout did not stop the guest");
    }
    // A wait within the timeout ends as it should.
    let out = run_with(&["--timeout", "20s"], &["sleep", "10"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "slept\n");
}

#[test]
fn fuel_and_the_memory_limit_hold() {
    let out = run_with(&["--fuel", "1000000"], &["spin"]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("ran out of fuel"), "{}", stderr(&out));
    // 64 MiB of heap under a 32 MiB limit: the allocation fails, and the guest aborts.
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(P3_COMMAND).unwrap();
    let options =
        RunOptions::new().args(["grow", "64"]).max_memory(32 << 20).stdout(GuestOutput::Capture { limit: 1 << 10 });
    let report = guest.run(&options).unwrap();
    assert!(matches!(report.outcome, Outcome::Trapped(_)), "{:?}", report.outcome);
    assert!(report.hit_memory_limit());
    assert_eq!(report.stdout, b"");
    // Within the limit, it grows.
    let report = guest.run(&options.clone().max_memory(256 << 20)).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    assert_eq!(report.stdout, b"grew\n");
    assert!(!report.hit_memory_limit());
}

#[test]
fn wrt_process_works_from_a_wasi_0_3_command_under_the_same_policy() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_with(&["--allow-run", "echo"], &["spawn", "echo", "from a child"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "from a child\nexit 0\n");
    // Deny by default: a program not allowed is refused, and nothing runs.
    let out = p3(&["spawn", "echo", "from a child"]);
    assert_code(&out, 1);
    assert!(stderr(&out).contains("spawn: "), "{}", stderr(&out));
    assert!(wrt_lines(&out).iter().any(|l| l.contains("`--allow-run echo`")), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn wasmtimes_flags_for_wasi_0_3_are_accepted() {
    let out = run(["run", "-W", "component-model-async", "-S", "p3", P3_COMMAND, "hello"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello from WASI 0.3\n");
    let out = run(["run", "-S", "p3=n", P3_COMMAND, "hello"]);
    assert_code(&out, 2);
    assert!(wrt_lines(&out)[0].contains("`-S p3=n`: wrt cannot turn off WASI 0.3"), "{}", stderr(&out));
}

/// A guest reaches no network unless `--allow-net` grants it: a WASI 0.3 TCP socket cannot be
/// made without a rule, and connecting one is refused (`access-denied`) with a rule for another
/// port or network, and
/// goes through with a rule that holds the address (`loopback`, the address itself, its
/// network, `-S inherit-network`). Listening through WASI 0.2's sockets (Rust's std) is
/// refused on the wildcard address unless a rule holds it, and allowed on a granted one.
#[test]
fn sockets_reach_only_what_allow_net_grants() {
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = target.local_addr().unwrap();
    let (addr_text, other_port) = (addr.to_string(), format!("127.0.0.1:{}", addr.port().wrapping_add(1).max(1)));
    let connect = |flags: &[&str]| stdout(&run_with(flags, &["connect", &addr_text]));
    // Without a rule, no socket can even be made.
    assert_eq!(connect(&[]), "create: ErrorCode::AccessDenied\n");
    let denied = "connect: ErrorCode::AccessDenied\n";
    for rule in [other_port.as_str(), "10.0.0.0/8", "[::1]"] {
        assert_eq!(connect(&["--allow-net", rule]), denied, "--allow-net {rule}");
    }
    for flags in [
        &["--allow-net", "loopback"][..],
        &["--allow-net", &addr_text],
        &["--allow-net", "127.0.0.0/8"],
        &["--allow-net", "10.0.0.0/8", "--allow-net", "127.0.0.1"],
        &["-S", "inherit-network"],
    ] {
        assert_eq!(connect(flags), "connected\n", "{flags:?}");
    }
    let listen = |flags: &[&str], on: &str| stdout(&run_with(flags, &["listen", on]));
    assert!(listen(&[], "127.0.0.1:0").starts_with("listen: "), "{}", listen(&[], "127.0.0.1:0"));
    assert_eq!(listen(&["--allow-net", "loopback"], "127.0.0.1:0"), "listening\n");
    let wildcard = listen(&["--allow-net", "loopback"], "0.0.0.0:0");
    assert!(wildcard.starts_with("listen: "), "{wildcard}");
    assert_eq!(listen(&["--allow-net", "any"], "0.0.0.0:0"), "listening\n");
    // A confined child first: the guest's thread, which `wrt run` lets keep the children's
    // filter (no sockets), keeps none when the guest has a network of its own.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_with(&["--allow-run", "true", "--allow-net", "loopback"], &["spawn-connect", "true", &addr_text]);
    assert_eq!(stdout(&out), "ran: 0\nconnected\n", "{}", stderr(&out));
}

//! The guest ABI at its edges: every bad input to every host function gets its documented error
//! code, and the host stays up.

use wrt_runtime::wrt_host_spawn::{Policy, ProgramRule};
use wrt_runtime::{GuestOutput, Outcome, RunOptions, Runtime};
use wrt_test_guests::*;

use crate::util::{assert_code, run, stdout};

foreach_abi!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn abi_bad_inputs() {
    // The guest exits with the number of the first check that failed (listed in its header).
    let out = run(["run", "--allow-run", "true", ABI_BAD_INPUTS]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "every bad input got its documented error code\n");
}

/// Requests the ABI could not decode (outside memory, NUL bytes, an empty program, not UTF-8) left
/// no audit record, although every outcome is to be logged.
#[test]
fn malformed_requests_are_audited() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let out = run(["run", "--allow-run", "true", "--audit-log", audit.to_str().unwrap(), ABI_BAD_INPUTS]);
    assert_code(&out, 0);
    let records: Vec<serde_json::Value> =
        std::fs::read_to_string(&audit).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let decisions: Vec<&serde_json::Value> = records.iter().filter(|r| r["event"] == "decision").collect();
    // 14 `spawn` calls before the handle checks, one good `spawn`, 6 `run` calls: every one
    // leaves a decision.
    assert_eq!(decisions.len(), 21, "{records:#?}");
    let invalid: Vec<&&serde_json::Value> = decisions
        .iter()
        .filter(|r| r["decision"] == "error" && r["reason"].as_str().unwrap().starts_with("invalid request"))
        .collect();
    // Checks 1-12 of `spawn` and 54-57 of `run`.
    assert_eq!(invalid.len(), 16, "{invalid:#?}");
    let programs: Vec<&str> = invalid.iter().map(|r| r["program"].as_str().unwrap()).collect();
    // Escaped like every guest-controlled string: a byte that is not UTF-8 shows as `\xNN`.
    assert!(programs.contains(&r"tr\xffue"), "not UTF-8, escaped: {programs:?}");
    assert!(programs.contains(&""), "the empty program: {programs:?}");
    assert!(programs.contains(&"true"), "a NUL byte in an argument: {programs:?}");
    for record in &invalid {
        assert_eq!(record["pid"], serde_json::Value::Null);
        assert_eq!(record["path"], serde_json::Value::Null);
    }
}

#[test]
fn abi_bad_inputs_leave_the_host_usable() {
    // The same sandbox runs the hostile guest many times, then an ordinary one.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let policy = Policy::deny_all().allow_program("true");
    let options = RunOptions::new().spawn_policy(&policy).unwrap().stdout(GuestOutput::Capture { limit: 1 << 16 });
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(ABI_BAD_INPUTS).unwrap();
    for _ in 0..20 {
        assert_eq!(guest.run(&options).unwrap().outcome, Outcome::Exited(0));
    }
    let hello = runtime.load_file(CLI_HELLO).unwrap();
    assert_eq!(hello.run(&options).unwrap().outcome, Outcome::Exited(0));
}

#[test]
fn abi_fuzz() {
    // Driven by the property test below; here: the guest loads and its valid request spawns.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let options = RunOptions::new().spawn_policy(&Policy::deny_all().allow_program("/bin/true")).unwrap();
    let guest = Runtime::new().unwrap().load_file(ABI_FUZZ).unwrap();
    let mut instance = guest.instantiate(&options).unwrap();
    let outcome =
        instance.invoke("spawn", &[wrt_runtime::WasmValue::I32(1024), wrt_runtime::WasmValue::I32(49)]).unwrap();
    assert_eq!(outcome, Outcome::Returned(vec![wrt_runtime::WasmValue::I32(1)]));
}

#[test]
fn abi_no_memory() {
    let out = run(["run", ABI_NO_MEMORY]);
    assert_code(&out, 0);
}

/// Arbitrary calls of every host function (child and handle-based buffer functions alike), with
/// arguments drawn from edge values and random ones (`guests/test-guests/wat/abi_fuzz.wat` exports each
/// function with raw arguments): every call returns a value or a documented error code; none
/// traps, none panics the host.
mod fuzz {
    use std::time::Duration;

    use proptest::prelude::*;
    use wrt_runtime::wrt_host_spawn::Policy;
    use wrt_runtime::{ErrorCode, GuestOutput, Outcome, RunOptions, Runtime, WasmValue};
    use wrt_test_guests::ABI_FUZZ;

    fn int() -> impl Strategy<Value = i32> {
        prop_oneof![
            Just(0),
            Just(-1),
            Just(1),
            Just(2),
            Just(3),
            Just(4),
            Just(49),
            Just(1024),
            Just(2048),
            Just(65535),
            Just(65536),
            Just(i32::MAX),
            Just(i32::MIN),
            // The first buffer handles, the largest buffer and read_buffer's largest max_len.
            Just(0x4000_0000),
            Just(0x4000_0001),
            Just(0x4000_0002),
            Just(1 << 30),
            Just((1 << 30) + 1),
            Just(16 << 20),
            any::<i32>(),
        ]
    }

    fn timeout() -> impl Strategy<Value = i64> {
        prop_oneof![Just(0i64), Just(1), Just(-1), Just(i64::MIN), Just(i64::MAX), 0i64..50]
    }

    /// A signal that cannot stop a child forever (stop signals would make waits hang).
    fn signal() -> impl Strategy<Value = i32> {
        int().prop_map(|s| if (19..=22).contains(&s) { 9 } else { s })
    }

    fn call() -> impl Strategy<Value = (&'static str, Vec<WasmValue>)> {
        prop_oneof![
            (int(), int()).prop_map(|(a, b)| ("spawn", vec![WasmValue::I32(a), WasmValue::I32(b)])),
            Just(("spawn", vec![WasmValue::I32(1024), WasmValue::I32(49)])),
            (int(), int(), int(), int()).prop_map(|(a, b, c, d)| ("write", [a, b, c, d].map(WasmValue::I32).to_vec())),
            int().prop_map(|a| ("close_stdin", vec![WasmValue::I32(a)])),
            (int(), int(), int(), int(), int())
                .prop_map(|(a, b, c, d, e)| ("read", [a, b, c, d, e].map(WasmValue::I32).to_vec())),
            (int(), int(), timeout())
                .prop_map(|(a, b, t)| ("poll", vec![WasmValue::I32(a), WasmValue::I32(b), WasmValue::I64(t)])),
            (int(), timeout(), int())
                .prop_map(|(a, t, c)| ("wait", vec![WasmValue::I32(a), WasmValue::I64(t), WasmValue::I32(c)])),
            (int(), int(), timeout(), int()).prop_map(|(a, b, t, d)| (
                "wait_any",
                vec![WasmValue::I32(a), WasmValue::I32(b), WasmValue::I64(t), WasmValue::I32(d)]
            )),
            (int(), signal()).prop_map(|(a, b)| ("kill", vec![WasmValue::I32(a), WasmValue::I32(b)])),
            int().prop_map(|a| ("release", vec![WasmValue::I32(a)])),
            (int(), int(), int(), int()).prop_map(|(a, b, c, d)| ("run", [a, b, c, d].map(WasmValue::I32).to_vec())),
            (int(), int()).prop_map(|(a, b)| ("last_error", vec![WasmValue::I32(a), WasmValue::I32(b)])),
            (int(), int()).prop_map(|(a, b)| ("buffer_from", vec![WasmValue::I32(a), WasmValue::I32(b)])),
            Just(("buffer_from", vec![WasmValue::I32(1024), WasmValue::I32(49)])),
            int().prop_map(|a| ("buffer_alloc", vec![WasmValue::I32(a)])),
            int().prop_map(|a| ("buffer_len", vec![WasmValue::I32(a)])),
            (int(), int(), int(), int())
                .prop_map(|(a, b, c, d)| ("buffer_read", [a, b, c, d].map(WasmValue::I32).to_vec())),
            (int(), int(), int(), int())
                .prop_map(|(a, b, c, d)| ("buffer_write", [a, b, c, d].map(WasmValue::I32).to_vec())),
            (int(), int(), int()).prop_map(|(a, b, c)| ("buffer_slice", [a, b, c].map(WasmValue::I32).to_vec())),
            (int(), int()).prop_map(|(a, b)| ("buffer_concat", vec![WasmValue::I32(a), WasmValue::I32(b)])),
            Just(("buffer_concat", vec![WasmValue::I32(2048), WasmValue::I32(2)])),
            int().prop_map(|a| ("buffer_release", vec![WasmValue::I32(a)])),
            (int(), int(), int(), int())
                .prop_map(|(a, b, c, d)| ("read_buffer", [a, b, c, d].map(WasmValue::I32).to_vec())),
            (int(), int(), int(), int())
                .prop_map(|(a, b, c, d)| ("write_buffer", [a, b, c, d].map(WasmValue::I32).to_vec())),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
            ..ProptestConfig::default()
        })]

        #[test]
        fn host_functions_answer_every_argument(calls in prop::collection::vec(call(), 1..16)) {
            let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let options = RunOptions::new()
                .spawn_policy(&Policy::deny_all().allow_program("/bin/true"))
                .unwrap()
                .stdout(GuestOutput::Null)
                .timeout(Duration::from_secs(30))
                // Bounds what random buffer_alloc and buffer_concat calls can hold (NO_MEMORY past it).
                .max_memory(256 << 20);
            let guest = Runtime::new().unwrap().load_file(ABI_FUZZ).unwrap();
            let mut instance = guest.instantiate(&options).unwrap();
            for (name, args) in &calls {
                let outcome = instance.invoke(name, args).unwrap();
                let Outcome::Returned(values) = &outcome else {
                    panic!("{name}({args:?}) ended the guest: {outcome:?}");
                };
                let [WasmValue::I32(ret)] = values[..] else { panic!("{values:?}") };
                prop_assert!(ret >= 0 || ErrorCode::from_return(ret).is_some(), "{}({:?}) returned {}", name, args, ret);
            }
        }
    }
}

#[test]
fn abi_trap_with_child() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (mark, dir) = marked_policy("sleep", "");
    let out = run(["run", "--policy", &dir.path().join("policy.toml").to_string_lossy(), ABI_TRAP_WITH_CHILD]);
    // A trap (not a return without spawning, which would exit 0).
    assert_code(&out, 134);
    // The child died with the sandbox: no `sleep 4242.5` of this test is left running.
    assert_eq!(marked(&mark), Vec::<u32>::new(), "children outlived the sandbox");
}

/// The variable that marks the children of this module's guests, whose command lines are fixed
/// by the guest (other runs of the same tests on the machine run the same command lines).
const MARK: &str = "WRT_TEST_MARK";

/// A policy file (in the returned directory) that allows `program`, marking it with a fresh
/// token in [`MARK`] through the rule's own environment, after the top-level `settings`;
/// and the token.
fn marked_policy(program: &str, settings: &str) -> (String, tempfile::TempDir) {
    let mark = crate::util::token();
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{settings}[[allow]]\nprogram = \"{program}\"\nenv = {{ {MARK} = \"{mark}\" }}\n");
    std::fs::write(dir.path().join("policy.toml"), text).unwrap();
    (mark, dir)
}

/// Pids of live processes marked with `mark`.
fn marked(mark: &str) -> Vec<u32> {
    wrt_test_support::processes::live_with_env(MARK, mark)
}

/// Runs `wrt` with `args` to its end and returns its output, how long it ran, and whether a
/// process marked with `mark` was seen while it ran (so that a scan for survivors afterwards is
/// known to see the marked children at all).
fn run_watching(mark: &str, args: &[&std::ffi::OsStr]) -> (std::process::Output, std::time::Duration, bool) {
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = crate::util::wrt().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut seen = false;
    while child.try_wait().unwrap().is_none() {
        seen |= !marked(mark).is_empty();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let took = start.elapsed();
    (child.wait_with_output().unwrap(), took, seen)
}

#[test]
fn abi_read_past_deadline() {
    past_deadline(ABI_READ_PAST_DEADLINE);
}

#[test]
fn abi_run_past_deadline() {
    past_deadline(ABI_RUN_PAST_DEADLINE);
}

/// Runs a guest that blocks on a child ignoring SIGTERM, under a 1 s timeout and a policy
/// whose kill grace is 20 s.
fn past_deadline(guest: &str) {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (mark, dir) = marked_policy("sh", "kill_grace = \"20s\"\n");
    let policy = dir.path().join("policy.toml");
    let args =
        ["run".as_ref(), "--timeout".as_ref(), "1s".as_ref(), "--policy".as_ref(), policy.as_os_str(), guest.as_ref()];
    let (out, took, seen) = run_watching(&mark, &args);
    assert_code(&out, 124);
    assert!(seen, "the marked child was never seen running");
    // Stopped at the sandbox deadline, not after the 20 s grace the policy gives children.
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    assert_eq!(marked(&mark), Vec::<u32>::new(), "the child outlived the sandbox");
}

#[test]
fn children_end_with_the_guest_even_while_the_instance_lives() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mark = crate::util::token();
    let policy = Policy::deny_all().allow(ProgramRule::new("sleep").env(MARK, &mark));
    let options = RunOptions::new().spawn_policy(&policy).unwrap();
    let guest = Runtime::new().unwrap().load_file(ABI_TRAP_WITH_CHILD).unwrap();
    let mut instance = guest.instantiate(&options).unwrap();
    let outcome = instance.run_start().unwrap();
    assert!(matches!(outcome, Outcome::Trapped(_)), "{outcome:?}");
    assert_eq!(marked(&mark), Vec::<u32>::new(), "the child outlived the guest");
    drop(instance);
}

#[test]
fn abi_buffer_bad_inputs() {
    // The guest exits with the number of the first check that failed (listed in its header) and
    // says on stderr what it got; it runs `cat` for read_buffer and write_buffer.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = run(["run", "--allow-run", "cat", ABI_BUFFER_BAD_INPUTS]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "every bad buffer input got its documented error code\n");
}

#[test]
fn abi_buffer_bad_inputs_leave_the_host_usable() {
    // The same sandbox runs the hostile guest (65,536 handles and all) several times, then an
    // ordinary one.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let policy = Policy::deny_all().allow_program("cat");
    let options = RunOptions::new().spawn_policy(&policy).unwrap().stdout(GuestOutput::Capture { limit: 1 << 16 });
    let runtime = Runtime::new().unwrap();
    let guest = runtime.load_file(ABI_BUFFER_BAD_INPUTS).unwrap();
    for _ in 0..5 {
        assert_eq!(guest.run(&options).unwrap().outcome, Outcome::Exited(0));
    }
    let hello = runtime.load_file(CLI_HELLO).unwrap();
    assert_eq!(hello.run(&options).unwrap().outcome, Outcome::Exited(0));
}

/// A start function blocked in `wait` on a child stops at the deadline, and the child ends with it.
#[test]
fn abi_start_wait() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (mark, dir) = marked_policy("sleep", "");
    let policy = dir.path().join("policy.toml");
    let args = [
        "run".as_ref(),
        "--timeout".as_ref(),
        "1s".as_ref(),
        "--policy".as_ref(),
        policy.as_os_str(),
        ABI_START_WAIT.as_ref(),
    ];
    let (out, took, seen) = run_watching(&mark, &args);
    assert_code(&out, 124);
    assert!(seen, "the marked child was never seen running");
    assert!(crate::util::stderr(&out).contains("timed out after 1s"), "{}", crate::util::stderr(&out));
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    assert_eq!(marked(&mark), Vec::<u32>::new(), "the child outlived the sandbox");
}

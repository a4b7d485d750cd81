//! Process operations through both guest ABIs: the twin guest `spawn_ops`
//! (`guests/test-guests/twins/src/bin/spawn_ops.rs`), built as a core module (`wrt_v1`) and as a
//! component (`wrt:process`), runs the input as a script of spawns, pipe reads and writes,
//! closes, waits, signals, kills and drops in any order, resources dropped before or after
//! their child ends. Each run must end with the guest's own exit 0 (a trap is a host call that
//! failed the guest), and once it has ended no child of it is left running.
//!
//! Build the two guests first (from the repository's root):
//! `cargo build --release --manifest-path guests/Cargo.toml -p twins --bin spawn_ops --target wasm32-wasip1`,
//! and the same with `--target wasm32-wasip2`.

#![no_main]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use wrt_runtime::wrt_host_spawn::{Policy, ProgramRule};
use wrt_runtime::{Guest, GuestOutput, GuestStdin, Outcome, RunOptions, Runtime};
use wrt_test_support::processes::live_children;

struct Setup {
    guests: [Guest; 2],
    policy: std::sync::Arc<wrt_runtime::wrt_host_spawn::CompiledPolicy>,
}

fn guest_path(target: &str) -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../guests/target/{target}/release/spawn_ops.wasm"));
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build --release --manifest-path guests/Cargo.toml -p twins --bin spawn_ops --target {target}`",
        path.display()
    );
    path
}

fn setup() -> Setup {
    let runtime = Runtime::new().expect("a runtime");
    let load = |target| runtime.load_file(guest_path(target)).expect("the guest loads");
    let mut policy = Policy::deny_all().max_children(16);
    for program in ["true", "cat", "sh", "sleep"] {
        policy = policy.allow(ProgramRule::new(program).timeout(Duration::from_secs(1)));
    }
    let policy = std::sync::Arc::new(policy.compile().expect("the fuzz policy is valid"));
    Setup { guests: [load("wasm32-wasip1"), load("wasm32-wasip2")], policy }
}

fuzz_target!(|script: &[u8]| {
    static SETUP: std::sync::OnceLock<Setup> = std::sync::OnceLock::new();
    let Some((&which, ops)) = script.split_first() else { return };
    let setup = SETUP.get_or_init(setup);
    let options = RunOptions::new()
        .compiled_spawn_policy(std::sync::Arc::clone(&setup.policy))
        .stdin(GuestStdin::Bytes(ops.iter().take(3 * 48).copied().collect()))
        .stdout(GuestOutput::Null)
        .stderr(GuestOutput::Null)
        .timeout(Duration::from_secs(60));
    let report = setup.guests[usize::from(which % 2)].run(&options).expect("the guest runs");
    assert_eq!(report.outcome, Outcome::Exited(0), "{report:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !live_children().is_empty() {
        assert!(Instant::now() < deadline, "children outlived their guest: {:?}", live_children());
        std::thread::sleep(Duration::from_millis(1));
    }
});

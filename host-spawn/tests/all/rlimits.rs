//! The fork-exec strategy applies resource limits; `posix_spawn` is never silently replaced
//! in strict mode, and every result says which strategy ran.

use std::collections::HashMap;
use std::fs;

use wrt_host_spawn::{
    Command, ExitStatus, Policy, ProgramRule, Rlimits, Signal, SpawnError, Spawner, Strategy, Unsupported,
};

use crate::lock;

/// `/proc/self/limits` as printed by the child: name → (soft, hard).
fn parse_limits(text: &str) -> HashMap<String, (String, String)> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let name = line.get(..26)?.trim().to_owned();
            let mut rest = line.get(26..)?.split_whitespace();
            Some((name, (rest.next()?.to_owned(), rest.next()?.to_owned())))
        })
        .collect()
}

#[test]
fn fork_exec_applies_rlimits() {
    let _lock = lock();
    let limits = Rlimits {
        cpu_seconds: Some(7),
        address_space: Some(1 << 30),
        open_files: Some(64),
        file_size: Some(1 << 20),
        processes: Some(500),
        core_size: Some(0),
    };
    let spawner = Spawner::new(Policy::deny_all().allow(ProgramRule::new("cat").rlimits(limits))).unwrap();
    let output = spawner.output(Command::new("cat").arg("/proc/self/limits"), None).unwrap();
    assert!(output.outcome.success());
    assert_eq!(output.outcome.strategy, Strategy::ForkExec, "rlimits fall back to fork-exec");
    let limits = parse_limits(&String::from_utf8(output.stdout).unwrap());
    let both = |v: &str| (v.to_owned(), v.to_owned());
    // The hard CPU limit is one second above the soft one, so SIGXCPU comes first.
    assert_eq!(limits["Max cpu time"], ("7".to_owned(), "8".to_owned()));
    assert_eq!(limits["Max address space"], both("1073741824"));
    assert_eq!(limits["Max open files"], both("64"));
    assert_eq!(limits["Max file size"], both("1048576"));
    assert_eq!(limits["Max processes"], both("500"));
    assert_eq!(limits["Max core file size"], both("0"));
    // Untouched limits keep the host's values.
    assert_eq!(limits["Max stack size"].0, {
        let host = parse_limits(&fs::read_to_string("/proc/self/limits").unwrap());
        host["Max stack size"].0.clone()
    });
}

#[test]
fn strict_mode_refuses_to_fall_back() {
    let _lock = lock();
    let policy =
        Policy::deny_all().allow(ProgramRule::new("true").rlimits(Rlimits { core_size: Some(0), ..Rlimits::none() }));
    let spawner = Spawner::new(policy).unwrap().strict(true);
    let err = spawner.spawn(&Command::new("true")).unwrap_err();
    assert!(
        matches!(
            err,
            SpawnError::StrategyUnavailable { strategy: Strategy::PosixSpawn, reason: Unsupported::Rlimits, .. }
        ),
        "{err}"
    );
    // Asking for fork-exec explicitly is fine in strict mode.
    let spawner = spawner.with_strategy(Strategy::ForkExec);
    let outcome = spawner.spawn(&Command::new("true")).unwrap().wait().unwrap();
    assert_eq!(outcome.strategy, Strategy::ForkExec);
    // A request without limits keeps posix_spawn.
    let spawner = Spawner::new(Policy::deny_all().allow_program("true")).unwrap().strict(true);
    let outcome = spawner.spawn(&Command::new("true")).unwrap().wait().unwrap();
    assert_eq!(outcome.strategy, Strategy::PosixSpawn);
}

#[test]
fn limits_take_effect() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big");
    let spawner = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap();
    // RLIMIT_FSIZE: writing past it raises SIGXFSZ in the writer.
    let script = format!("head -c 100000 /dev/zero > {}; echo $?", file.display());
    let mut limited = Command::new("sh");
    limited.args(["-c", &script]).rlimits(Rlimits { file_size: Some(4096), ..Rlimits::none() });
    let output = spawner.output(&limited, None).unwrap();
    assert_eq!(output.stdout, format!("{}\n", 128 + Signal::SIGXFSZ as i32).as_bytes());
    assert_eq!(fs::metadata(&file).unwrap().len(), 4096);
}

/// `cpu_seconds` set equal soft and hard limits, so Linux sent `SIGKILL` and never `SIGXCPU`.
#[test]
fn cpu_seconds_sends_sigxcpu_before_sigkill() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap();
    // A busy loop is stopped after one second of CPU, by SIGXCPU (whose default action ends
    // the process).
    let output = spawner
        .output(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .rlimits(Rlimits { cpu_seconds: Some(1), ..Rlimits::none() }),
            None,
        )
        .unwrap();
    assert_eq!(output.outcome.status.signal(), Some(Signal::SIGXCPU as i32), "{:?}", output.outcome);
    assert!(!output.outcome.timed_out);
    // A program that catches SIGXCPU can stop cleanly.
    let script = "trap 'echo caught; exit 3' XCPU; while :; do :; done";
    let output = spawner
        .output(
            Command::new("sh").args(["-c", script]).rlimits(Rlimits { cpu_seconds: Some(1), ..Rlimits::none() }),
            None,
        )
        .unwrap();
    assert_eq!(output.outcome.status, ExitStatus::Exited(3), "{:?}", output.outcome);
    assert_eq!(output.stdout, b"caught\n");
}

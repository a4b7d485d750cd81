//! What another process can change under a spawner between two spawns, without the spawner
//! noticing at once: its descriptor limit (`prlimit`), and the mount a program it has resolved
//! lies on (`mount -o remount,noexec`). Each is a clear spawn error, never a panic, a leaked
//! descriptor or a program that runs where it should not.
//!
//! Each change would disturb the other tests of this process, so each test runs its probe in a
//! process of its own: this test binary again, the probe alone.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process;

use wrt_host_spawn::{Command, Policy, SpawnError, Spawner, Stdio};

use crate::lock;

const PROBE_ENV: &str = "WRT_HOST_SPAWN_UNDERNEATH";

/// Runs the ignored probe `probe` of this binary alone, under `wrapper` (a command and its
/// arguments, before the binary) if given; returns its output and whether it passed.
fn run_probe(wrapper: &[&str], probe: &str) -> (String, bool) {
    let exe = std::env::current_exe().unwrap();
    let mut command = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut command = process::Command::new(first);
            command.args(rest).arg(&exe);
            command
        }
        None => process::Command::new(&exe),
    };
    let out = command
        .args(["--exact", probe, "--ignored", "--nocapture", "--test-threads=1"])
        .env(PROBE_ENV, "1")
        .stdin(process::Stdio::null())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (text, out.status.success())
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn spawn_piped(spawner: &Spawner, program: &str) -> Result<wrt_host_spawn::ChildOutcome, SpawnError> {
    let mut command = Command::new(program);
    command.stdin(Stdio::Piped).stdout(Stdio::Piped).stderr(Stdio::Piped);
    spawner.spawn(&command).map(|mut child| child.wait().unwrap())
}

/// The descriptor budget reads the soft `RLIMIT_NOFILE` only when it counts descriptors. A limit
/// lowered in between (by another process's `prlimit`, or here by the probe itself, which the
/// budget cannot tell apart) turns the spawn into a `pipe2` failure with `EMFILE`: an error that
/// says so, with every descriptor the spawn opened closed again, and spawns work once the limit
/// is back.
#[test]
fn a_descriptor_limit_lowered_between_counts_fails_the_spawn_cleanly() {
    let _lock = lock();
    let (text, passed) = run_probe(&[], "changed_underneath::probe_descriptor_limit_lowered_between_counts");
    assert!(passed && text.contains("lowered: refused with EMFILE, restored: spawned"), "{text}");
}

#[test]
#[ignore = "run alone by `a_descriptor_limit_lowered_between_counts_fails_the_spawn_cleanly`"]
fn probe_descriptor_limit_lowered_between_counts() {
    assert!(std::env::var_os(PROBE_ENV).is_some(), "run by its test, never alone: it lowers this process's limit");
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let spawner = Spawner::new(Policy::deny_all().allow_program("/bin/true")).unwrap();
    // The budget counts at a first spawn, then estimates for the next ones.
    assert!(spawn_piped(&spawner, "/bin/true").unwrap().success());
    assert!(spawn_piped(&spawner, "/bin/true").unwrap().success());
    let before = open_fds();
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    // Room for one more descriptor, the lowest free number (the limit bounds descriptor
    // numbers, and inherited ones may lie anywhere): the first pipe of the spawn cannot be made.
    let lowest_free = std::fs::File::open("/dev/null").map(|file| file.as_raw_fd()).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, u64::try_from(lowest_free).unwrap() + 1, hard).unwrap();
    let refused = spawn_piped(&spawner, "/bin/true");
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    let err = refused.expect_err("a spawn with no descriptors to spare");
    // The limit kept since the last count still leaves room, so the budget passes the spawn and
    // the pipe fails; had the budget counted again, it would have refused it itself.
    let how = match &err {
        SpawnError::Stdio { source, .. } if source.raw_os_error() == Some(libc::EMFILE) => "EMFILE",
        SpawnError::TooManyDescriptors { .. } => "the budget",
        other => panic!("{other:?}"),
    };
    assert_eq!(open_fds(), before, "the failed spawn left descriptors open");
    assert!(spawn_piped(&spawner, "/bin/true").unwrap().success());
    assert_eq!(open_fds(), before);
    println!("lowered: refused with {how}, restored: spawned");
}

/// A kept resolution is not asked again whether its file may be executed while the file is
/// unchanged (docs/policy.md, step 2); a mount remounted `noexec` changes no file. `execve`
/// refuses it, and the spawn fails with that error: the program never runs. The probe needs a
/// mount of its own, in a user and mount namespace (`unshare`); where none can be made, the
/// test says so and passes.
#[test]
fn a_program_on_a_mount_remounted_noexec_is_refused_by_exec() {
    let _lock = lock();
    let (text, passed) = run_probe(
        &["/usr/bin/unshare", "--user", "--map-root-user", "--mount"],
        "changed_underneath::probe_program_on_a_mount_remounted_noexec",
    );
    if !passed && text.contains("unshare:") {
        eprintln!("SKIPPED: no user and mount namespace here: {text}");
        return;
    }
    assert!(passed && text.contains("kept: ran, remounted noexec: exec refused, remounted exec: ran"), "{text}");
}

#[test]
#[ignore = "run in a mount namespace by `a_program_on_a_mount_remounted_noexec_is_refused_by_exec`"]
fn probe_program_on_a_mount_remounted_noexec() {
    assert!(std::env::var_os(PROBE_ENV).is_some(), "run by its test, never alone: it mounts");
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().to_str().unwrap();
    let mount = |args: &[&str]| {
        let status = process::Command::new("/usr/bin/mount").args(args).arg(target).status().unwrap();
        assert!(status.success(), "mount {args:?} {target}");
    };
    mount(&["-t", "tmpfs", "-o", "mode=0755", "wrt-test"]);
    let program = dir.path().join("tool");
    std::fs::copy("/bin/true", &program).unwrap();
    let program = program.to_str().unwrap();
    let spawner = Spawner::new(Policy::deny_all().allow_program(program)).unwrap();
    let run = |spawner: &Spawner| spawn_piped(spawner, program);
    assert!(run(&spawner).unwrap().success(), "first run");
    assert!(run(&spawner).unwrap().success(), "kept run");
    mount(&["-o", "remount,noexec"]);
    match run(&spawner) {
        Err(SpawnError::Spawn { source, .. }) => assert_eq!(source, nix::errno::Errno::EACCES, "{source}"),
        other => panic!("a program on a noexec mount: {other:?}"),
    }
    mount(&["-o", "remount,exec"]);
    assert!(run(&spawner).unwrap().success(), "exec again");
    assert!(Path::new(program).exists());
    println!("kept: ran, remounted noexec: exec refused, remounted exec: ran");
}

//! The child view: what a confined child sees of the system, attacked as a hostile child would.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wrt_host_spawn::{ChildSandbox, Command, Output, Policy, Spawner, Stdio};

use crate::lock;

struct Dirs {
    _root: tempfile::TempDir,
    read: PathBuf,
    write: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(root.path()).unwrap();
    let [read, write] = ["read", "write"].map(|name| base.join(name));
    for dir in [&read, &write] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("file.txt"), "contents\n").unwrap();
        fs::set_permissions(dir.join("file.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    }
    Dirs { _root: root, read, write }
}

fn spawner(d: &Dirs, view: bool) -> Spawner {
    let policy = Policy::deny_all().allow_program("sh");
    Spawner::new(policy).unwrap().with_sandbox(ChildSandbox::confined().view(view).read(&d.read).write(&d.write))
}

fn sh(spawner: &Spawner, script: &str) -> Output {
    let mut command = Command::new("sh");
    command.args(["-c", script]).stdin(Stdio::Null).stdout(Stdio::Piped).stderr(Stdio::Piped);
    spawner.output(&command, None).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What a child changes of a file's metadata with `chmod`, `chown` and `touch`.
const CHANGE_METADATA: &str = "chmod 4777 \"$1\"; chown 1:1 \"$1\"; touch -d 2001-01-01 \"$1\"; echo done";

#[test]
fn a_child_in_the_view_changes_no_metadata_outside_its_writable_directories() {
    let _lock = lock();
    let d = dirs();
    let target = d.read.join("file.txt");
    let before = fs::metadata(&target).unwrap();

    let out = sh(&spawner(&d, true), &format!("set -- {}; {CHANGE_METADATA}", p(&target)));
    let after = fs::metadata(&target).unwrap();
    assert_eq!(
        (after.mode(), after.uid(), after.gid(), after.mtime()),
        (before.mode(), before.uid(), before.gid(), before.mtime()),
        "{out:?}"
    );
    assert_eq!(text(&out.stderr).matches("Read-only file system").count(), 3, "{}", text(&out.stderr));

    // In a writable directory the same changes hold (as root, chown too).
    let writable = d.write.join("file.txt");
    let out = sh(&spawner(&d, true), &format!("set -- {}; {CHANGE_METADATA}", p(&writable)));
    assert!(out.stderr.is_empty() || !text(&out.stderr).contains("Read-only"), "{}", text(&out.stderr));
    assert_eq!(fs::metadata(&writable).unwrap().mode() & 0o7777, 0o4777, "{out:?}");

    // Without the view, Landlock alone leaves metadata open: the hole the view closes.
    if nix::unistd::geteuid().is_root() {
        let out = sh(&spawner(&d, false), &format!("chmod 0644 {}", p(&target)));
        assert!(out.outcome.success(), "{out:?}");
        assert_eq!(fs::metadata(&target).unwrap().mode() & 0o7777, 0o644);
    }
}

#[test]
fn a_child_in_the_view_sees_its_own_processes_in_proc_and_not_the_hosts() {
    let _lock = lock();
    let d = dirs();
    let script = "echo $$; ls /proc | grep -c '^[0-9][0-9]*$'; nproc; grep -c ^processor /proc/cpuinfo; \
                  head -1 /proc/self/status; cat /proc/1/environ >/dev/null && echo READ-HOST-MEMORY; \
                  (echo renamed > /proc/self/comm) 2>/dev/null && echo WROTE-PROC";
    let out = sh(&spawner(&d, true), script);
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 5, "{out:?}");
    let own_pid: u32 = lines[0].parse().unwrap();
    let pids: usize = lines[1].parse().unwrap();
    let host_pids = fs::read_dir("/proc")
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_str().unwrap().parse::<u32>().is_ok())
        .count();
    // init, the shell, `ls`, `grep`: a handful, where the host has many.
    assert!(pids < 8 && host_pids > pids, "{pids} in the view, {host_pids} on the host");
    assert!(own_pid < 100, "the shell's pid in its namespace: {own_pid}");
    let cpus = std::thread::available_parallelism().unwrap().get().to_string();
    assert_eq!(lines[2], cpus);
    assert!(lines[3].parse::<usize>().unwrap() >= 1);
    assert_eq!(lines[4], "Name:\thead");
    // pid 1 shares wrt's memory: it is not even listed, its environment out of reach.
    assert!(!text(&out.stdout).contains("READ-HOST-MEMORY"), "{out:?}");
    assert!(!text(&out.stdout).contains("WROTE-PROC"), "the view's /proc is read-only: {out:?}");
    let out = sh(&spawner(&d, true), "ls /proc | grep -x 1 && echo SEES-INIT; ls -d /proc/[0-9]*; cat /proc/1/cmdline");
    assert!(!text(&out.stdout).contains("SEES-INIT"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("No such file or directory"), "{}", text(&out.stderr));

    // Without the view there is no `/proc` at all.
    let out = sh(&spawner(&d, false), "ls /proc/self");
    assert!(!out.outcome.success(), "{out:?}");
}

#[test]
fn the_children_of_a_spawner_share_a_tmp_of_their_own_that_ends_with_it() {
    let _lock = lock();
    let d = dirs();
    let marker = format!("wrt-view-marker-{}", std::process::id());
    let spawner = spawner(&d, true);
    let out = sh(&spawner, &format!("echo \"$TMPDIR\"; echo hello > /tmp/{marker}; ls -A /tmp"));
    assert!(out.outcome.success(), "{out:?}");
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().next(), Some("/tmp"));
    assert!(stdout.contains(&marker), "{stdout}");
    assert!(!Path::new("/tmp").join(&marker).exists(), "the host's /tmp is not the child's");
    // The grants that lie under the host's /tmp are still there, as granted.
    let out = sh(&spawner, &format!("cat /tmp/{marker} {}/file.txt", p(&d.read)));
    assert_eq!(text(&out.stdout), "hello\ncontents\n", "{out:?}");
    let out = sh(&spawner, &format!("echo x > {}/new.txt", p(&d.read)));
    assert!(!out.outcome.success(), "a read grant stays read-only: {out:?}");
}

/// The System V shared memory segments `ipcs -m` lists.
fn segments(listing: &[u8]) -> usize {
    text(listing).lines().filter(|line| line.starts_with("0x")).count()
}

#[test]
fn system_v_ipc_of_the_view_is_its_own() {
    let _lock = lock();
    let d = dirs();
    let made = std::process::Command::new("ipcmk").args(["-M", "4096"]).output().unwrap();
    let id: String = text(&made.stdout).chars().filter(char::is_ascii_digit).collect();
    assert!(made.status.success() && !id.is_empty(), "{made:?}");
    let host = std::process::Command::new("ipcs").arg("-m").output().unwrap();
    let out = sh(&spawner(&d, true), "ipcs -m; ipcmk -M 4096 >/dev/null && ipcs -m");
    let without = sh(&spawner(&d, false), "ipcs -m");
    std::process::Command::new("ipcrm").args(["-m", &id]).status().unwrap();
    assert!(segments(&host.stdout) >= 1, "{}", text(&host.stdout));
    // The view's namespace starts empty, and holds what its children make.
    let listings: Vec<&str> = text(&out.stdout).leak().split("------ Shared Memory Segments --------").collect();
    assert_eq!(listings.len(), 3, "{out:?}");
    assert_eq!((segments(listings[1].as_bytes()), segments(listings[2].as_bytes())), (0, 1), "{out:?}");
    assert!(segments(&without.stdout) >= 1, "without the view the host's segments show: {without:?}");
}

/// Whether a process whose command line contains `marker` runs on the host.
fn runs(marker: &str) -> bool {
    fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| text(&cmdline).replace('\0', " ").contains(marker))
    })
}

#[test]
fn a_daemon_left_in_the_view_ends_with_its_spawner() {
    let _lock = lock();
    let d = dirs();
    let marker = format!("9{}.{}", std::process::id(), 4242);
    let spawner = spawner(&d, true);
    // The shell waits a little, so that `setsid` has left its group (killed when the shell
    // exits) before it does.
    let out = sh(
        &spawner,
        &format!("setsid sh -c 'exec sleep {marker}' </dev/null >/dev/null 2>&1 & sleep 0.3; echo started"),
    );
    assert!(out.outcome.success(), "{out:?}");
    let end = Instant::now() + Duration::from_secs(5);
    while !runs(&format!("sleep {marker}")) {
        assert!(Instant::now() < end, "the daemon never started: {out:?} {}", text(&out.stderr));
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(spawner);
    let end = Instant::now() + Duration::from_secs(5);
    while runs(&format!("sleep {marker}")) {
        assert!(Instant::now() < end, "the daemon outlived its spawner");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An allowed program under the host's `/tmp` (here in a read grant, which the view mounts
/// again inside the children's `/tmp`) is what runs: the directories wrt made above the grant
/// cannot be moved aside (they are mounts of themselves), and the program runs from a
/// descriptor wrt opened, not by its path in the view.
#[test]
fn an_allowed_program_under_tmp_cannot_be_replaced_by_a_child_in_the_view() {
    let _lock = lock();
    let d = dirs();
    let tool = d.read.join("tool");
    fs::copy("/bin/echo", &tool).unwrap();
    let base = d.read.parent().unwrap();
    let policy = Policy::deny_all().allow_program("sh").allow_program(&tool);
    let spawner =
        Spawner::new(policy).unwrap().with_sandbox(ChildSandbox::confined().view(true).read(&d.read).write(&d.write));
    let plant = format!(
        "mv {base} {base}.moved && mkdir -p {read} && printf '#!/bin/sh\\necho PLANTED\\n' > {tool} && chmod +x {tool} && echo planted",
        base = p(base),
        read = p(&d.read),
        tool = p(&tool),
    );
    // The directories wrt made above the grant are mounts of themselves: moving them fails.
    let out = sh(&spawner, &plant);
    assert!(!out.outcome.success() && text(&out.stderr).contains("busy"), "{out:?}");
    let mut command = Command::new(p(&tool));
    command.arg("genuine").stdin(Stdio::Null).stdout(Stdio::Piped).stderr(Stdio::Piped);
    let out = spawner.output(&command, None).unwrap();
    assert_eq!(text(&out.stdout), "genuine\n", "{out:?}");

    // A script there cannot run from a descriptor: refused, not run from the planted path.
    let script = d.read.join("script");
    fs::write(&script, "#!/bin/sh\necho script\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let policy = Policy::deny_all().allow_program(&script);
    let spawner = Spawner::new(policy).unwrap().with_sandbox(ChildSandbox::confined().view(true).read(&d.read));
    let mut command = Command::new(p(&script));
    command.stdout(Stdio::Piped);
    let err = spawner.output(&command, None).unwrap_err();
    assert!(wrt_text::error_chain(&err).contains("ENOEXEC"), "{err}");
}

/// The view's init is reaped only once every process of its PID namespace is; a child the
/// host has not waited for (its handle kept after the spawner) must not hold up the spawner's
/// drop, which kills it with the view.
#[test]
fn dropping_a_spawner_whose_child_is_still_held_does_not_wait_for_it() {
    let _lock = lock();
    let d = dirs();
    let spawner = spawner(&d, true);
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 30"]).stdin(Stdio::Null).stdout(Stdio::Null).stderr(Stdio::Null);
    let mut child = spawner.spawn(&command).unwrap();
    let started = Instant::now();
    drop(spawner);
    assert!(started.elapsed() < Duration::from_secs(5), "the drop took {:?}", started.elapsed());
    let outcome = child.wait().unwrap();
    assert!(!outcome.success(), "{outcome:?}");
}

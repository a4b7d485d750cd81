//! The child sandbox, attacked as a hostile guest would through programs a policy allows:
//! reading and writing outside the given directories (directly, through a planted symlink,
//! through `sh -c`), the network, set-user-ID programs, capabilities, signalling the host;
//! and `ChildSandbox::off()` restoring the host's authority, visibly.

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use wrt_host_spawn::{AuditLog, ChildSandbox, Command, Output, Policy, ProgramRule, Spawner, Stdio, Strategy};

use crate::{LogBuffer, lock, status_field};

/// A directory the guest may read, one it may write, and one it was not given, each with a
/// file in it.
struct Dirs {
    _root: tempfile::TempDir,
    read: std::path::PathBuf,
    write: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(root.path()).unwrap();
    let [read, write, outside] = ["read", "write", "outside"].map(|name| base.join(name));
    for dir in [&read, &write, &outside] {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("file.txt"), format!("contents of {}\n", dir.display())).unwrap();
    }
    Dirs { _root: root, read, write, outside }
}

fn spawner(policy: Policy, dirs: &Dirs) -> Spawner {
    Spawner::new(policy).unwrap().with_sandbox(ChildSandbox::confined().read(&dirs.read).write(&dirs.write))
}

fn run(spawner: &Spawner, program: &str, args: &[&str]) -> Output {
    spawner
        .output(Command::new(program).args(args).stdin(Stdio::Null).stdout(Stdio::Piped).stderr(Stdio::Piped), None)
        .unwrap()
}

fn sh(spawner: &Spawner, script: &str) -> Output {
    run(spawner, "sh", &["-c", script])
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn an_allowed_cat_reads_the_given_directories_and_nothing_else() {
    let _lock = lock();
    let d = dirs();
    let spawner = spawner(Policy::deny_all().allow_program("cat"), &d)
        .with_sandbox(ChildSandbox::confined().view(true).read(&d.read).write(&d.write));
    for dir in [&d.read, &d.write] {
        let out = run(&spawner, "cat", &[path(&dir.join("file.txt"))]);
        assert!(out.outcome.success(), "{}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    }
    // In the view, a directory beside the grants under the host's `/tmp` does not exist (the
    // children's own directory covers `/tmp`); without it, Landlock refuses it.
    let view_off = Spawner::new(Policy::deny_all().allow_program("cat"))
        .unwrap()
        .with_sandbox(ChildSandbox::confined().view(false).read(&d.read).write(&d.write));
    for (spawner, refusal) in [(&spawner, "No such file or directory"), (&view_off, "Permission denied")] {
        let out = run(spawner, "cat", &[path(&d.outside.join("file.txt"))]);
        assert!(!out.outcome.success() && out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains(refusal), "{out:?}");
        let out = run(spawner, "cat", &["/etc/shadow"]);
        assert!(!out.outcome.success() && out.stdout.is_empty(), "{out:?}");
    }
}

#[test]
fn a_symlink_planted_in_a_writable_directory_gives_nothing_outside() {
    let _lock = lock();
    let d = dirs();
    symlink(d.outside.join("file.txt"), d.write.join("link")).unwrap();
    symlink(&d.outside, d.write.join("dirlink")).unwrap();
    let spawner = spawner(Policy::deny_all().allow_program("cat"), &d);
    for link in ["link", "dirlink/file.txt"] {
        let out = run(&spawner, "cat", &[path(&d.write.join(link))]);
        assert!(!out.outcome.success() && out.stdout.is_empty(), "{link}: {out:?}");
    }
}

#[test]
fn an_allowed_shell_writes_only_in_the_writable_directory() {
    let _lock = lock();
    let d = dirs();
    let spawner = spawner(Policy::deny_all().allow_program("sh"), &d);
    let out = sh(&spawner, &format!("echo new > {}/new.txt && cat {}/new.txt", path(&d.write), path(&d.write)));
    assert!(out.outcome.success(), "{out:?}");
    assert_eq!(out.stdout, b"new\n");
    for target in [d.read.join("new.txt"), d.read.join("file.txt"), d.outside.join("new.txt"), "/etc/wrt-test".into()] {
        let out = sh(&spawner, &format!("echo x > {}", path(&target)));
        assert!(!out.outcome.success(), "{}: {out:?}", target.display());
        assert!(!target.exists() || fs::read_to_string(&target).unwrap().starts_with("contents"));
    }
    // Truncation, removal and renaming out are writes too.
    let out = sh(&spawner, &format!(": > {}", path(&d.read.join("file.txt"))));
    assert!(!out.outcome.success());
    let out = sh(&spawner, &format!("rm -f {}", path(&d.read.join("file.txt"))));
    assert!(!out.outcome.success());
    let out = sh(&spawner, &format!("mv {} {}", path(&d.write.join("file.txt")), path(&d.outside.join("moved"))));
    assert!(!out.outcome.success());
    assert!(!d.outside.join("moved").exists());
    let out = sh(&spawner, "cat /etc/shadow");
    assert!(!out.outcome.success() && out.stdout.is_empty(), "{out:?}");
    // No device nodes, even where writing is allowed.
    let out = sh(&spawner, &format!("mknod {}/null c 1 3", path(&d.write)));
    assert!(!out.outcome.success(), "{out:?}");
}

/// Perl is in /usr/bin on every system this runs on; its `socket` is the system call itself.
const PERL_CONNECT: &str = r#"use Socket; socket(S, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n"; connect(S, pack_sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "connect: $!\n"; print "connected\n";"#;
const PERL_UDP: &str = r#"use Socket; socket(S, PF_INET, SOCK_DGRAM, 0) or die "socket: $!\n"; print "udp\n";"#;
const PERL_UNIX: &str = r#"use Socket; socket(S, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n"; print "unix\n";"#;

#[test]
fn a_child_has_no_network_unless_its_rule_allows_it() {
    let _lock = lock();
    let d = dirs();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let spawner = spawner(Policy::deny_all().allow_program("perl"), &d);
    for script in [PERL_CONNECT, PERL_UDP, PERL_UNIX] {
        let out = run(&spawner, "perl", &["-e", script, &port]);
        assert!(!out.outcome.success(), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("socket: Operation not permitted"), "{out:?}");
    }

    let spawner = spawner_with_network(&d);
    let out = run(&spawner, "perl", &["-e", PERL_CONNECT, &port]);
    assert_eq!(out.stdout, b"connected\n", "{out:?}");
    let out = run(&spawner, "perl", &["-e", PERL_UDP]);
    assert_eq!(out.stdout, b"udp\n", "{out:?}");
}

fn spawner_with_network(d: &Dirs) -> Spawner {
    spawner(Policy::deny_all().allow(ProgramRule::new("perl").network(true)), d)
}

#[test]
fn a_set_user_id_program_gains_nothing_and_no_capability_is_left() {
    let _lock = lock();
    let d = dirs();
    // A set-user-ID copy of `id` owned by nobody: unconfined, it runs with euid 65534.
    let id = d.read.join("id-setuid");
    fs::copy("/usr/bin/id", &id).unwrap();
    nix::unistd::chown(&id, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    fs::set_permissions(&id, fs::Permissions::from_mode(0o4755)).unwrap();
    let policy = Policy::deny_all().allow_program(path(&id)).allow_program("sleep");

    let off = Spawner::new(policy.clone()).unwrap().with_sandbox(ChildSandbox::off());
    let before = run(&off, path(&id), &["-u"]);
    let confined = spawner(policy, &d);
    let after = run(&confined, path(&id), &["-u"]);
    assert_eq!(String::from_utf8_lossy(&after.stdout).trim(), nix::unistd::getuid().to_string(), "{after:?}");
    if nix::unistd::getuid().is_root() {
        assert_eq!(String::from_utf8_lossy(&before.stdout).trim(), "65534", "{before:?}");
    }

    let mut child = confined.spawn(Command::new("sleep").arg("5")).unwrap();
    let pid = child.pid();
    assert_eq!(status_field(pid, "NoNewPrivs"), "1");
    assert_eq!(status_field(pid, "Seccomp"), "2");
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert_eq!(status_field(pid, set), "0000000000000000", "{set}");
    }
    child.kill(wrt_host_spawn::Signal::SIGKILL).unwrap();
    child.wait().unwrap();
}

#[test]
fn a_child_cannot_signal_the_host_where_landlock_scopes_signals() {
    if wrt_host_spawn::landlock_abi() < 6 {
        eprintln!("skipped: Landlock ABI {} has no signal scoping", wrt_host_spawn::landlock_abi());
        return;
    }
    let _lock = lock();
    let d = dirs();
    let spawner = spawner(Policy::deny_all().allow_program("sh"), &d);
    let host = std::process::id().to_string();
    let out = sh(&spawner, &format!("kill -0 {host} && echo reached"));
    assert!(!out.outcome.success() && out.stdout.is_empty(), "{out:?}");
    // Its own children it may signal.
    let out = sh(&spawner, "sleep 5 & kill $! && echo killed-own");
    assert_eq!(out.stdout, b"killed-own\n", "{out:?}");

    let off = Spawner::new(Policy::deny_all().allow_program("sh")).unwrap().with_sandbox(ChildSandbox::off());
    let out = sh(&off, &format!("kill -0 {host} && echo reached"));
    assert_eq!(out.stdout, b"reached\n", "{out:?}");
}

#[test]
fn the_sandbox_off_restores_the_hosts_authority_and_the_audit_log_says_so() {
    let _lock = lock();
    let d = dirs();
    let log = LogBuffer::default();
    let off = Spawner::new(Policy::deny_all().allow_program("cat"))
        .unwrap()
        .with_sandbox(ChildSandbox::off())
        .with_audit_log(AuditLog::new(log.clone()));
    let out = run(&off, "cat", &[path(&d.outside.join("file.txt"))]);
    assert!(out.outcome.success(), "{out:?}");
    let record = &log.records()[0];
    assert_eq!(record["sandbox"]["enabled"], false, "{record}");
    assert_eq!(record["strategy"], "posix_spawn");

    // The policy can turn it off too, whatever the spawner says.
    let policy_off = Spawner::new(Policy::deny_all().allow_program("cat").child_sandbox(false))
        .unwrap()
        .with_sandbox(ChildSandbox::confined());
    assert!(!policy_off.is_confined());
    let out = run(&policy_off, "cat", &[path(&d.outside.join("file.txt"))]);
    assert!(out.outcome.success(), "{out:?}");

    let log = LogBuffer::default();
    let on = spawner(Policy::deny_all().allow_program("cat"), &d).with_audit_log(AuditLog::new(log.clone()));
    run(&on, "cat", &[path(&d.read.join("file.txt"))]);
    let record = &log.records()[0];
    assert_eq!(record["sandbox"]["enabled"], true, "{record}");
    assert_eq!(record["sandbox"]["network"], false, "{record}");
    assert_eq!(record["sandbox"]["read"][0], path(&d.read), "{record}");
    assert_eq!(record["sandbox"]["write"][0], path(&d.write), "{record}");
    assert_eq!(record["strategy"], "vfork-exec");
}

#[test]
fn a_confined_child_runs_under_every_strategy_that_can_confine() {
    let _lock = lock();
    let d = dirs();
    for strategy in [Strategy::VforkExec, Strategy::ForkExec] {
        let sandbox = ChildSandbox::confined().view(strategy == Strategy::VforkExec).read(&d.read).write(&d.write);
        let spawner = Spawner::new(Policy::deny_all().allow_program("cat"))
            .unwrap()
            .with_sandbox(sandbox)
            .with_strategy(strategy)
            .strict(true);
        let out = run(&spawner, "cat", &[path(&d.outside.join("file.txt"))]);
        assert!(!out.outcome.success(), "{strategy}: {out:?}");
        let out = run(&spawner, "cat", &[path(&d.read.join("file.txt"))]);
        assert!(out.outcome.success(), "{strategy}: {out:?}");
    }
    // posix_spawn cannot: in strict mode that is an error naming the sandbox.
    let strict = spawner(Policy::deny_all().allow_program("cat"), &d).with_strategy(Strategy::PosixSpawn).strict(true);
    let err = strict.spawn(&Command::new("cat")).unwrap_err();
    assert!(wrt_text::error_chain(&err).contains("cannot confine"), "{err}");
    // Only vfork-exec starts a child in the view: fork-exec in strict mode says so.
    let strict = spawner(Policy::deny_all().allow_program("cat"), &d)
        .with_sandbox(ChildSandbox::confined().view(true))
        .with_strategy(Strategy::ForkExec)
        .strict(true);
    let err = strict.spawn(&Command::new("cat")).unwrap_err();
    assert!(wrt_text::error_chain(&err).contains("cannot start a child in the child view"), "{err}");
}

#[test]
fn a_policys_sandbox_table_adds_locations_and_rejects_relative_ones() {
    let _lock = lock();
    let d = dirs();
    let text = format!("[[allow]]\nprogram = \"cat\"\n[sandbox]\nread = [\"{}\"]\n", path(&d.outside));
    let policy = Policy::from_toml_str(&text).unwrap();
    let spawner = Spawner::new(policy).unwrap().with_sandbox(ChildSandbox::confined());
    let out = run(&spawner, "cat", &[path(&d.outside.join("file.txt"))]);
    assert!(out.outcome.success(), "{out:?}");

    let err = Policy::from_toml_str("[sandbox]\nwrite = [\"relative\"]\n").unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
    let err = Policy::from_toml_str("[sandbox]\nnetwork = true\n").unwrap_err();
    assert!(err.to_string().contains("sandbox.network"), "{err}");
}

/// A flood of processes from one child (a bounded stand-in for a fork bomb: 300 sleepers, so
/// that the test harms no machine where the budget is missing or broken) stops at the budget,
/// the host keeps starting processes, and dropping the spawner ends everything left.
#[test]
fn a_flood_of_processes_in_a_child_stops_at_the_budget_and_ends_with_the_spawner() {
    let _lock = lock();
    let d = dirs();
    let policy = Policy::deny_all().allow_program("perl").sandbox_max_processes(64);
    let spawner = spawner(policy, &d);
    let Some(max) = spawner.confinement(false).max_processes else {
        eprintln!("skipped: no pids control group can be made here (the tree is unbounded, and said so)");
        return;
    };
    assert_eq!(max, 64);
    let marker = format!("wrt-flood-{}", wrt_test_support::token());
    // `fork` that fails returns undef: the parent counts the children it got and keeps going.
    let script = r#"$| = 1; my $n = 0; for (1..300) { my $p = fork; next unless defined $p; if ($p == 0) { sleep 30; exit 0 } $n++ } print "started $n\n"; sleep 30"#;
    let mut flood = Command::new("perl");
    flood.args(["-e", script, &marker]).stdin(Stdio::Null).stdout(Stdio::Piped).stderr(Stdio::Null);
    let mut child = spawner.spawn(&flood).unwrap();
    let line = crate::read_line(&mut child);
    let started: usize = line.strip_prefix("started ").unwrap().parse().unwrap();
    assert!((32..64).contains(&started), "{started} of 300 children started under a budget of 64");
    let running = crate::live_members_with(&marker).len();
    assert!(running <= 64, "{running} flood processes for a budget of 64");
    // The host still starts processes.
    assert!(std::process::Command::new("true").status().unwrap().success());
    drop(child);
    drop(spawner);
    // Dropping the spawner killed whatever the flood left, in any group or session.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !crate::live_members_with(&marker).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(crate::live_members_with(&marker), Vec::<u32>::new());
}

#[test]
fn a_child_makes_no_namespace_and_still_forks_and_runs_threads() {
    let _lock = lock();
    let d = dirs();
    let spawner = spawner(Policy::deny_all().allow_program("sh").allow_program("unshare").allow_program("perl"), &d);
    for flags in [["-U", "-r"], ["-n", "-r"]] {
        let out = run(&spawner, "unshare", &[flags[0], flags[1], "true"]);
        assert!(!out.outcome.success(), "unshare {flags:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Operation not permitted"), "{out:?}");
    }
    // fork (clone without namespace flags), a pipeline, and threads (clone3 refused, libc
    // falls back to clone) all work.
    let out = sh(&spawner, "echo a | cat; (echo sub) & wait");
    assert_eq!(out.stdout, b"a\nsub\n", "{out:?}");
    let out = run(&spawner, "perl", &["-e", "my $p = fork; if ($p == 0) { exit 7 } waitpid($p, 0); print $? >> 8"]);
    assert_eq!(out.stdout, b"7", "{out:?}");
    let python = self::spawner(Policy::deny_all().allow_program("/usr/bin/python3"), &d);
    let threads = "import threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()";
    let out = run(&python, "/usr/bin/python3", &["-c", threads]);
    assert_eq!(out.stdout, b"thread\n", "{out:?}");
    let off = Spawner::new(Policy::deny_all().allow_program("unshare")).unwrap();
    let out = run(&off, "unshare", &["-U", "-r", "true"]);
    assert!(out.outcome.success(), "unconfined, the kernel allows it here: {out:?}");
}

/// Runs this test binary's test `name` again, with `WRT_TEST_UNDER_TERMINAL` set, in a session
/// of its own whose controlling terminal is a new pseudo-terminal, also its stdin. Returns what
/// it printed and whether it passed.
fn rerun_under_a_terminal(name: &str) -> (String, bool) {
    let python = "import fcntl, os, sys, termios
master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    os.dup2(slave, 0)
    os.execv(sys.argv[1], sys.argv[1:])
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))";
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", python])
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("WRT_TEST_UNDER_TERMINAL", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (text, out.status.success())
}

/// Before, a confined child gave up wrt's controlling terminal by starting a session of its own
/// (`setsid`); now it gives it up with `TIOCNOTTY` and stays in wrt's session. Either way it
/// must not keep the terminal: with it, it could take the terminal's foreground from wrt or
/// the shell (`tcsetpgrp`). An unconfined child keeps it, which shows the probe can tell.
#[test]
fn a_confined_child_has_no_controlling_terminal() {
    const PROBE: &str = "import os
try:
    os.tcgetpgrp(0)
    print('terminal')
except OSError:
    print('none')";
    if std::env::var_os("WRT_TEST_UNDER_TERMINAL").is_none() {
        let (text, passed) = rerun_under_a_terminal("sandbox::a_confined_child_has_no_controlling_terminal");
        assert!(passed && text.contains("probed: confined none, unconfined terminal"), "{text}");
        return;
    }
    let _lock = lock();
    let d = dirs();
    let probe = |spawner: &Spawner| {
        let out = spawner
            .output(
                Command::new("/usr/bin/python3").args(["-c", PROBE]).stdin(Stdio::Inherit).stdout(Stdio::Piped),
                None,
            )
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let policy = Policy::deny_all().allow_program("/usr/bin/python3");
    let confined = probe(&spawner(policy.clone(), &d));
    let unconfined = probe(&Spawner::new(policy).unwrap());
    println!("probed: confined {confined}, unconfined {unconfined}");
}

/// The number of seccomp filters `pid`'s thread `tid` runs under.
fn filters_of(pid: u32, tid: &str) -> String {
    let status = fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Seccomp_filters:")).unwrap().trim().to_owned()
}

/// The filters a sleeping child of `spawner` runs under: inherited and its own.
fn child_filters(spawner: &Spawner) -> String {
    let mut child = spawner.spawn(Command::new("sleep").arg("30").stdin(Stdio::Null)).unwrap();
    let pid = child.pid();
    let filters = filters_of(pid, &pid.to_string());
    child.kill(wrt_host_spawn::Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    filters
}

/// With `filter_on_spawning_thread`, the thread that starts a confined child installs the
/// children's filter on itself once, and its children inherit it instead of installing one:
/// they are refused the network and namespaces as other confined children are, the thread
/// cannot open a socket either, and a thread that holds the no-network filter refuses a child
/// whose rule allows the network. A policy with a network rule makes the thread hold the filter
/// that allows it, and a child of another rule then adds the no-network filter on top.
#[test]
fn a_thread_holding_the_childrens_filter_confines_its_children_alike() {
    let _lock = lock();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let d = dirs();
                let me = (std::process::id(), nix::unistd::gettid().to_string());
                let offline = spawner(Policy::deny_all().allow_program("perl").allow_program("sleep"), &d)
                    .filter_on_spawning_thread(true);
                assert_eq!(filters_of(me.0, &me.1), "0");
                assert_eq!(child_filters(&offline), "1", "the child inherits the thread's filter only");
                assert_eq!(filters_of(me.0, &me.1), "1");
                assert_eq!(child_filters(&offline), "1");
                for script in [PERL_CONNECT, PERL_UDP, PERL_UNIX] {
                    let out = run(&offline, "perl", &["-e", script, &port]);
                    assert!(
                        String::from_utf8_lossy(&out.stderr).contains("socket: Operation not permitted"),
                        "{out:?}"
                    );
                }
                let err = std::net::UdpSocket::bind("127.0.0.1:0").unwrap_err();
                assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
                // A child in a view inherits the view's filter, not the thread's: its rule's
                // network holds. Without a view, the thread's stricter filter refuses it.
                let in_view = spawner_with_network(&d).with_sandbox(ChildSandbox::confined().view(true));
                let out = run(&in_view, "perl", &["-e", PERL_CONNECT, &port]);
                assert_eq!(out.stdout, b"connected\n", "{out:?}");
                let no_view = spawner_with_network(&d).with_sandbox(ChildSandbox::confined().view(false));
                let err = no_view.spawn(Command::new("perl").arg("-e1")).unwrap_err();
                let reason = std::error::Error::source(&err).map(ToString::to_string).unwrap_or_default();
                assert!(reason.contains("cannot start a child whose rule allows the network"), "{err}: {reason}");
            })
            .join()
            .unwrap();
        scope
            .spawn(|| {
                let d = dirs();
                let me = (std::process::id(), nix::unistd::gettid().to_string());
                let policy = Policy::deny_all().allow(ProgramRule::new("perl").network(true)).allow_program("sleep");
                let mixed = spawner(policy, &d).filter_on_spawning_thread(true);
                assert_eq!(child_filters(&mixed), "2", "the thread allows the network, `sleep` may not have it");
                assert_eq!(filters_of(me.0, &me.1), "1");
                let out = run(&mixed, "perl", &["-e", PERL_CONNECT, &port]);
                assert_eq!(out.stdout, b"connected\n", "{out:?}");
                let out = run(&mixed, "perl", &["-e", PERL_UDP]);
                assert_eq!(out.stdout, b"udp\n", "{out:?}");
            })
            .join()
            .unwrap();
    });
    // This thread, which started no confined child itself, holds no filter.
    assert_eq!(filters_of(std::process::id(), &nix::unistd::gettid().to_string()), "0");
}

//! The child sandbox through `wrt run`, for a core module and a component alike: a shell the
//! policy allows reaches the guest's `--ro-dir` read-only, its `--dir` read-write, and nothing
//! else; `--child-sandbox off` gives it wrt's authority back, and the audit log says so.

use std::fs;

use wrt_test_guests::{COMPONENT_RUN_ENDS_AT_DEADLINE, CONTAIN_RUN_ENDS_AT_DEADLINE};

use crate::util::{assert_code, run, stdout};

struct Tree {
    _root: tempfile::TempDir,
    rw: String,
    ro: String,
    outside: String,
}

fn tree() -> Tree {
    let root = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(root.path()).unwrap();
    let [rw, ro, outside] = ["rw", "ro", "outside"].map(|name| {
        let dir = base.join(name);
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("file"), format!("{name}-contents\n")).unwrap();
        dir.into_os_string().into_string().unwrap()
    });
    Tree { _root: root, rw, ro, outside }
}

/// A script that tries every kind of reach and says which worked.
fn probe(t: &Tree) -> String {
    let (rw, ro, outside) = (&t.rw, &t.ro, &t.outside);
    format!(
        "echo made > {rw}/new && echo rw-written; cat {ro}/file; \
         (echo x > {ro}/new) 2>/dev/null || echo ro-write-refused; \
         cat {outside}/file 2>/dev/null || echo outside-read-refused; \
         (echo x > {outside}/new) 2>/dev/null || echo outside-write-refused; \
         cat /etc/shadow 2>/dev/null || echo shadow-refused; \
         ln -s {outside}/file {rw}/link && (cat {rw}/link 2>/dev/null || echo link-refused)"
    )
}

#[test]
fn children_of_core_and_component_guests_reach_only_the_given_directories() {
    for guest in [CONTAIN_RUN_ENDS_AT_DEADLINE, COMPONENT_RUN_ENDS_AT_DEADLINE] {
        let t = tree();
        let script = probe(&t);
        let out = run(["run", "--allow-run", "sh", "--dir", &t.rw, "--ro-dir", &t.ro, guest, &script, "own"]);
        assert_code(&out, 0);
        let text = stdout(&out);
        for seen in [
            "rw-written",
            "ro-contents",
            "ro-write-refused",
            "outside-read-refused",
            "outside-write-refused",
            "shadow-refused",
            "link-refused",
        ] {
            assert!(text.contains(seen), "{guest}: no `{seen}` in {text}");
        }
        assert!(!text.contains("outside-contents"), "{guest}: {text}");
        assert_eq!(fs::read_to_string(format!("{}/new", t.rw)).unwrap(), "made\n");
        assert!(!std::path::Path::new(&format!("{}/new", t.outside)).exists());
        assert!(!std::path::Path::new(&format!("{}/new", t.ro)).exists());
    }
}

#[test]
fn child_sandbox_off_gives_the_child_wrts_authority_and_the_audit_log_says_so() {
    for guest in [CONTAIN_RUN_ENDS_AT_DEADLINE, COMPONENT_RUN_ENDS_AT_DEADLINE] {
        let t = tree();
        let audit = format!("{}/audit.jsonl", t.outside);
        let script = format!("cat {}/file", t.outside);
        let out =
            run(["run", "--child-sandbox", "off", "--audit-log", &audit, "--allow-run", "sh", guest, &script, "own"]);
        assert_code(&out, 0);
        assert!(stdout(&out).contains("outside-contents"), "{guest}: {}", stdout(&out));
        let log = fs::read_to_string(&audit).unwrap();
        assert!(log.contains("\"sandbox\":{\"enabled\":false"), "{log}");

        let audit = format!("{}/audit-on.jsonl", t.outside);
        let out = run(["run", "--audit-log", &audit, "--allow-run", "sh", guest, &script, "own"]);
        assert_code(&out, 0);
        let log = fs::read_to_string(&audit).unwrap();
        assert!(log.contains("\"sandbox\":{\"enabled\":true"), "{log}");
        assert!(log.contains("\"strategy\":\"vfork-exec\""), "{log}");
    }
}

/// Perl's `socket` is the system call itself; each script prints what it reached.
const PERL_TCP: &str = r#"use Socket; socket(S, PF_INET, SOCK_STREAM, 0) or die "tcp-refused\n"; connect(S, pack_sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "connect: $!\n"; print "tcp-connected\n";"#;
const PERL_UDP: &str = r#"use Socket; socket(S, PF_INET, SOCK_DGRAM, 0) or die "udp-refused\n"; print "udp-opened\n";"#;

/// The children of a guest run by `wrt run` (whose guest thread keeps the children's seccomp
/// filter, so that no child compiles it) have no network: neither a TCP connection to a
/// listener on 127.0.0.1 nor a UDP socket, for a core module and a component alike. A policy
/// rule with `network = true` gives its program the network (the guest thread then keeps the
/// filter that allows it; a child of a rule without the network adds its own, which the
/// host-spawn tests check).
#[test]
fn children_of_wrt_run_have_the_network_only_where_their_rule_allows_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let script = format!("perl -e '{PERL_TCP}' {port} 2>&1; perl -e '{PERL_UDP}' 2>&1");
    let t = tree();
    let policy = format!("{}/policy.toml", t.outside);
    fs::write(&policy, "[[allow]]\nprogram = \"sh\"\nnetwork = true\n").unwrap();
    for guest in [CONTAIN_RUN_ENDS_AT_DEADLINE, COMPONENT_RUN_ENDS_AT_DEADLINE] {
        let out = run(["run", "--allow-run", "sh", guest, &script, "own"]);
        assert_code(&out, 0);
        let text = stdout(&out);
        assert!(text.contains("tcp-refused") && text.contains("udp-refused"), "{guest}: {text}");
        assert!(!text.contains("connected") && !text.contains("opened"), "{guest}: {text}");

        let out = run(["run", "--policy", &policy, guest, &script, "own"]);
        assert_code(&out, 0);
        let text = stdout(&out);
        assert!(text.contains("tcp-connected") && text.contains("udp-opened"), "{guest}: {text}");
    }
}

/// What the shell printed, through the guest's `run returned: exit status: 0, OUTPUT` (the
/// shell must have exited 0).
fn shell_output(out: &std::process::Output) -> String {
    let text = stdout(out);
    match text.strip_prefix("run returned: exit status: 0, ") {
        Some(output) => output.trim_end().to_owned(),
        None => panic!("the shell failed: {text}"),
    }
}

/// What the victim process's `/proc` says of its limits, priority and affinity.
fn victim_state(pid: u32) -> (String, String, String) {
    let limits = fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let cpu = limits.lines().find(|l| l.starts_with("Max cpu time")).unwrap().to_owned();
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let nice = stat.rsplit(") ").next().unwrap().split(' ').nth(16).unwrap().to_owned();
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let cpus = status.lines().find(|l| l.starts_with("Cpus_allowed_list")).unwrap().to_owned();
    (cpu, nice, cpus)
}

/// A confined child changes no process outside its tree, where Landlock does not hold it (it
/// holds signals and `ptrace`): `prlimit --cpu=1:2` of another program killed it with `SIGXCPU`,
/// and `prlimit --fsize=0` of wrt made wrt die of `SIGXFSZ` without its cleanup; nor their
/// priority, I/O priority or affinity; and it reaches no kernel keyring: it read a secret from
/// wrt's session keyring and added a key to it. Its own limits and priority stay its own.
#[test]
fn a_confined_child_changes_no_other_process_and_reaches_no_keyring() {
    let token = crate::util::token();
    let mut victim = crate::util::command("sleep").arg(format!("1000.{token}")).spawn().unwrap();
    let before = victim_state(victim.id());
    let (add_key, request_key, keyctl) = (libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl);
    let keys = format!(
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n\
         found = libc.syscall({request_key}, b'user', b'wrt-secret-{token}', None, 0)\n\
         print('secret-found' if found > 0 else 'secret-refused')\n\
         added = libc.syscall({add_key}, b'user', b'wrt-planted-{token}', b'x', 1, -3)\n\
         print('key-added' if added > 0 else 'key-refused')"
    );
    let v = victim.id();
    // In the child view, wrt lies outside the child's PID namespace (`$PPID` is 0) and the
    // victim's pid names no process; with the view off, the filter refuses both.
    let script = format!(
        "prlimit --pid {v} --cpu=1:2 2>/dev/null && echo victim-limited; \
         [ \"$PPID\" -gt 0 ] && prlimit --pid $PPID --fsize=0 2>/dev/null && echo wrt-limited; \
         renice -n 5 -p {v} >/dev/null 2>&1 && echo victim-reniced; \
         ionice -c 3 -p {v} 2>/dev/null && echo victim-ioniced; \
         taskset -p 1 {v} >/dev/null 2>&1 && echo victim-pinned; \
         prlimit --pid {v} --cpu >/dev/null && echo victim-limits-read; \
         ulimit -n 64 && echo own-limit-set; \
         nice -n 1 true && echo own-niced; \
         /usr/bin/python3 -c \"{keys}\""
    );
    // wrt in a session keyring of its own that holds the secret.
    let setup = format!(
        "import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True)\n\
         assert libc.syscall({keyctl}, 1, None) > 0\n\
         assert libc.syscall({add_key}, b'user', b'wrt-secret-{token}', b's3cret', 6, -3) > 0\n\
         os.execv(sys.argv[1], sys.argv[1:])"
    );
    let guest = CONTAIN_RUN_ENDS_AT_DEADLINE;
    for view in ["on", "off"] {
        let out = crate::util::command("/usr/bin/python3")
            .args(["-c", &setup, env!("CARGO_BIN_EXE_wrt"), "run", "--child-view", view, "--allow-run", "sh"])
            .args([guest, &script, "sandbox"])
            .output()
            .unwrap();
        assert_code(&out, 0);
        let text = shell_output(&out);
        for refused in ["victim-limited", "wrt-limited", "victim-reniced", "victim-ioniced", "victim-pinned"] {
            assert!(!text.contains(refused), "view {view}: `{refused}` in {text}");
        }
        // In the view the victim is not there to be read.
        let seen = ["own-limit-set", "own-niced", "secret-refused", "key-refused"];
        for seen in seen.into_iter().chain((view == "off").then_some("victim-limits-read")) {
            assert!(text.contains(seen), "view {view}: no `{seen}` in {text}");
        }
    }
    let after = victim_state(victim.id());
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert_eq!(after, before, "the victim's limits, nice value and affinity");
}

/// A child whose rule sets no `PATH` gets the policy's search path: `make` runs a recipe free
/// of shell syntax by looking its program up there, and failed with "echo: No such file or
/// directory" when the child's environment had no `PATH`.
#[test]
fn a_child_finds_programs_through_the_search_path() {
    let t = tree();
    fs::write(format!("{}/Makefile", t.rw), "all:\n\techo built by make\n").unwrap();
    let script = format!("cd {} && make --no-print-directory; echo \"PATH=$PATH\"", t.rw);
    let out = run(["run", "--allow-run", "sh", "--dir", &t.rw, CONTAIN_RUN_ENDS_AT_DEADLINE, &script, "sandbox"]);
    assert_code(&out, 0);
    let text = shell_output(&out);
    assert!(text.lines().any(|l| l == "PATH=/usr/local/bin:/usr/bin:/bin"), "{text}");
    if std::path::Path::new("/usr/bin/make").exists() {
        assert!(text.lines().any(|l| l == "built by make"), "{text}");
    }
}

/// Everyday programs write temporary files where `TMPDIR` says: `gcc` ("Cannot create temporary
/// file in /tmp/"), `mktemp`, Python's `tempfile` and Node's `os.tmpdir()` all failed when a
/// confined child had no writable temporary directory. The directory is the guest's
/// children's own, `0700`, and gone, with what they left in it (a locked directory, a symlink
/// to outside), when the guest ends; an unconfined child gets none.
#[test]
fn a_childs_temporary_directory_works_for_everyday_programs_and_goes_with_the_guest() {
    let t = tree();
    let script = format!(
        "cd {rw} && printf 'int main(void) {{ return 0; }}\\n' > t.c && gcc t.c -o t 2>&1 && ./t && echo gcc-ok; \
         f=$(mktemp) && echo x > \"$f\" && echo mktemp-ok; \
         python3 -c 'import tempfile; tempfile.TemporaryFile().write(b\"x\"); print(\"python-ok\")'; \
         command -v node >/dev/null && node -e 'require(\"fs\").writeFileSync(require(\"os\").tmpdir() + \"/n\", \"x\"); console.log(\"node-ok\")'; \
         mkdir -p \"$TMPDIR/a/locked\" && chmod 0 \"$TMPDIR/a/locked\" && ln -s {outside} \"$TMPDIR/out\"; \
         echo \"TMPDIR=$TMPDIR\"; stat -c 'mode=%a' \"$TMPDIR\"",
        rw = t.rw,
        outside = t.outside,
    );
    let node = std::process::Command::new("sh").args(["-c", "command -v node"]).output().unwrap().status.success();
    // In the child view the directory is the children's `/tmp`; without it, a directory of the
    // host's temporary directory that `TMPDIR` names.
    for view in ["on", "off"] {
        let args = ["run", "--child-view", view, "--allow-run", "sh", "--dir", &t.rw];
        let out = run(args.iter().copied().chain([CONTAIN_RUN_ENDS_AT_DEADLINE, script.as_str(), "sandbox"]));
        assert_code(&out, 0);
        let text = shell_output(&out);
        for seen in ["gcc-ok", "mktemp-ok", "python-ok", "mode=700"].into_iter().chain(node.then_some("node-ok")) {
            assert!(text.lines().any(|l| l == seen), "view {view}: no `{seen}` in {text}");
        }
        let tmp = text.lines().find_map(|l| l.strip_prefix("TMPDIR=")).unwrap();
        if view == "on" {
            assert_eq!(tmp, "/tmp");
        } else {
            assert!(tmp.starts_with(&std::env::temp_dir().join("wrt-tmp-").display().to_string()), "{tmp}");
            assert!(!std::path::Path::new(tmp).exists(), "{tmp} outlived the guest");
        }
    }
    assert!(std::path::Path::new(&t.outside).join("file").exists(), "the symlink's target is untouched");

    // Where the host's temporary directory cannot hold one, children run without it, and the
    // audit record says so.
    let audit = format!("{}/audit.jsonl", t.outside);
    let script = "echo \"TMPDIR=$TMPDIR\"";
    let out = crate::util::wrt()
        .env("TMPDIR", format!("{}/absent", t.outside))
        .args(["run", "--audit-log", &audit, "--allow-run", "sh", CONTAIN_RUN_ENDS_AT_DEADLINE, script, "sandbox"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(shell_output(&out), "TMPDIR=");
    assert!(fs::read_to_string(&audit).unwrap().contains("\"private_tmp\":false"));

    let out =
        run(["run", "--child-sandbox", "off", "--allow-run", "sh", CONTAIN_RUN_ENDS_AT_DEADLINE, script, "sandbox"]);
    assert_code(&out, 0);
    assert_eq!(shell_output(&out), "TMPDIR=", "an unconfined child gets no directory of wrt's");
}

/// As root, `git` was refused before the guest started whenever a `--dir` lay on its file
/// system: its file has a hard link for each of its helper programs (143 here), any of which
/// might have been inside the `--dir`. Now the `--dir` is searched for them: none is there, and
/// git runs.
#[test]
fn git_with_its_many_hard_links_runs_beside_a_writable_dir() {
    if !std::path::Path::new("/usr/bin/git").exists() {
        eprintln!("SKIPPED: git is not installed");
        return;
    }
    let t = tree();
    let script = format!("cd {} && git init -q . && git --version", t.rw);
    let args = ["run", "--allow-run", "sh", "--allow-run", "git", "--dir", &t.rw];
    let out = run(args.iter().copied().chain([CONTAIN_RUN_ENDS_AT_DEADLINE, &script, "sandbox"]));
    assert_code(&out, 0);
    assert!(shell_output(&out).starts_with("git version "), "{}", stdout(&out));
    assert!(std::path::Path::new(&t.rw).join(".git/HEAD").exists());
}

/// A host that refuses user namespaces (here: a user namespace whose
/// `user.max_user_namespaces` is 0) refuses every confined spawn with a message that names the
/// child view, what is missing and the switch; with the view off, children run as before.
#[test]
fn a_host_without_user_namespaces_refuses_confined_spawns_naming_the_view_and_its_switch() {
    let probe = std::process::Command::new("unshare").args(["-Ur", "true"]).output();
    if !probe.is_ok_and(|out| out.status.success()) {
        eprintln!("SKIPPED: this host makes no user namespace for the test to limit");
        return;
    }
    let inner = "echo 0 > /proc/sys/user/max_user_namespaces && \
                 exec \"$0\" run --child-view \"$1\" --allow-run sh \"$2\" 'echo ran' sandbox";
    let run_with = |view: &str| {
        crate::util::command("unshare")
            .args(["-Ur", "sh", "-c", inner, env!("CARGO_BIN_EXE_wrt"), view, CONTAIN_RUN_ENDS_AT_DEADLINE])
            .output()
            .unwrap()
    };
    let out = run_with("on");
    let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("ran\n"), "{text}");
    for named in ["the child view needs new user, mount, PID and IPC namespaces", "`--child-view off`"] {
        assert!(text.contains(named), "no `{named}` in {text}");
    }
    let out = run_with("off");
    assert_code(&out, 0);
    assert_eq!(shell_output(&out), "ran");
}

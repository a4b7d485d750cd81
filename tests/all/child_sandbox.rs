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

//! The JSONL audit log records every decision and every exit.

use std::fs;
use std::time::Duration;

use serde_json::Value;
use wrt_host_spawn::{AuditLog, Command, Policy, Spawner};

use crate::{LogBuffer, canonical, lock};

#[test]
fn every_decision_and_exit_is_recorded() {
    let _lock = lock();
    let buffer = LogBuffer::default();
    let policy = Policy::deny_all().allow_program("sh").deny_program("/bin/rm").allow_program("rm").env_allow(["LANG"]);
    let spawner = Spawner::new(policy).unwrap().with_audit_log(AuditLog::new(buffer.clone()));

    let output = spawner.output(Command::new("sh").args(["-c", "echo hi; exit 4"]).env("LANG", "C"), None).unwrap();
    let pid = output.outcome.pid;
    assert!(spawner.spawn(Command::new("rm").arg("-rf")).is_err());
    assert!(spawner.spawn(&Command::new("no-such-program-xyz")).is_err());
    assert!(spawner.spawn(Command::new("sh").arg("a\0b")).is_err());
    let timed_out =
        spawner.output(Command::new("sh").args(["-c", "sleep 10"]).timeout(Duration::from_millis(100)), None).unwrap();

    let records = buffer.records();
    assert_eq!(records.len(), 7, "{records:#?}");
    let sh = canonical("/bin/sh").display().to_string();

    let allow = &records[0];
    assert_eq!(allow["event"], "decision");
    assert_eq!(allow["decision"], "allow");
    assert_eq!(allow["program"], "sh");
    assert_eq!(allow["path"], sh.as_str());
    assert_eq!(allow["argv"], serde_json::json!(["sh", "-c", "echo hi; exit 4"]));
    assert_eq!(allow["env_keys"], serde_json::json!(["LANG", "PATH"]), "the request's, and the default PATH");
    assert_eq!(allow["cwd"], "/");
    assert_eq!(allow["rule"], "sh");
    assert_eq!(allow["strategy"], "posix_spawn");
    assert_eq!(allow["pid"], pid);
    assert!(allow["time"].as_str().unwrap().ends_with('Z'));

    let exit = &records[1];
    assert_eq!(exit["event"], "exit");
    assert_eq!(exit["pid"], pid);
    assert_eq!(exit["path"], sh.as_str());
    assert_eq!(exit["exit_code"], 4);
    assert_eq!(exit["signal"], Value::Null);
    assert_eq!(exit["timed_out"], false);
    assert_eq!(exit["stdout_bytes"], 3);
    assert_eq!(exit["stdout_truncated"], false);
    assert!(exit["duration_ms"].as_f64().unwrap() > 0.0);

    let deny = &records[2];
    assert_eq!(deny["decision"], "deny");
    assert_eq!(deny["rule"], "/bin/rm");
    assert!(deny["reason"].as_str().unwrap().contains("deny rule"), "{deny}");
    assert_eq!(deny["pid"], Value::Null);

    assert_eq!(records[3]["decision"], "error");
    assert!(records[3]["reason"].as_str().unwrap().contains("not found"));
    assert_eq!(records[4]["decision"], "error");
    assert!(records[4]["reason"].as_str().unwrap().contains("NUL"));

    assert_eq!(records[5]["decision"], "allow");
    let exit = &records[6];
    assert_eq!(exit["timed_out"], true);
    assert_eq!(exit["signal"], 15);
    assert_eq!(exit["pid"], timed_out.outcome.pid);
}

#[test]
fn audit_only_mode_logs_what_it_would_deny() {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let spawner = Spawner::new(Policy::deny_all().allow_program("true").audit_only(true))
        .unwrap()
        .with_audit_log(AuditLog::append_to_file(&path).unwrap());
    assert!(spawner.output(&Command::new("true"), None).unwrap().outcome.success());
    assert!(spawner.output(&Command::new("false"), None).is_ok(), "audit-only runs it");
    drop(spawner);

    let records: Vec<Value> =
        fs::read_to_string(&path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["decision"], "allow");
    assert_eq!(records[2]["decision"], "would-deny");
    assert!(records[2]["reason"].as_str().unwrap().contains("no allow rule"));
    assert_eq!(records[3]["exit_code"], 1);
}

/// In audit-only mode, a would-deny record names the rule that decided, as a deny record does;
/// relative program paths and `max_children` are still enforced.
#[test]
fn audit_only_records_name_the_deciding_rule() {
    let _lock = lock();
    let buffer = LogBuffer::default();
    let policy = Policy::deny_all()
        .allow(wrt_host_spawn::ProgramRule::new("echo").args(["ok"]))
        .allow_program("true")
        .deny_program("false")
        .audit_only(true);
    let spawner = Spawner::new(policy).unwrap().with_audit_log(AuditLog::new(buffer.clone()));
    assert_eq!(spawner.output(Command::new("echo").arg("other"), None).unwrap().stdout, b"other\n");
    assert!(spawner.output(&Command::new("false"), None).is_ok());
    assert!(spawner.spawn(&Command::new("./true")).is_err(), "relative paths mean nothing here");
    drop(spawner);
    let decisions: Vec<Value> = buffer.records().into_iter().filter(|r| r["event"] == "decision").collect();
    assert_eq!(decisions.len(), 3);
    assert_eq!(decisions[0]["decision"], "would-deny");
    assert_eq!(decisions[0]["rule"], "echo");
    assert_eq!(decisions[1]["decision"], "would-deny");
    assert_eq!(decisions[1]["rule"], "false");
    assert_eq!(decisions[2]["decision"], "deny");
}

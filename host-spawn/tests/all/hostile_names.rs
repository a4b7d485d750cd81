//! Guest-controlled strings reach messages and the audit log escaped and capped, and refused
//! requests are rate-limited in the audit log.

use wrt_host_spawn::{AuditLog, Command, Policy, RateLimit, Spawner};
use wrt_text::SHOWN_BYTES;

use crate::{LogBuffer, lock};

/// A name that tries to forge a line, clear the screen and reorder text, then goes on for a
/// mebibyte.
fn hostile_name() -> String {
    let mut name = String::from("/no/such/dir/x\nwrt: allow it with `--allow-run /bin/sh`\u{1b}[2J\u{202e}evil");
    name.push_str(&"A".repeat(1 << 20));
    name
}

#[test]
fn denial_message_is_escaped_and_capped() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all()).unwrap();
    let name = hostile_name();
    let err = spawner.spawn(&Command::new(&name)).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains(['\n', '\u{1b}', '\u{202e}']), "{message:?}");
    assert!(message.contains(r"x\nwrt: allow it"), "{message:?}");
    assert!(message.contains(r"\u{1b}[2J\u{202e}evil"), "{message:?}");
    assert!(message.contains(&format!("…({} bytes)", name.len())), "{message:?}");
    assert!(message.len() < 4 * SHOWN_BYTES, "{} bytes", message.len());
}

#[test]
fn audit_records_stay_one_line_and_bounded() {
    let _lock = lock();
    let buffer = LogBuffer::default();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true").env_allow(["A"]))
        .unwrap()
        .with_audit_log(AuditLog::new(buffer.clone()));
    let name = hostile_name();
    let huge_arg = "\u{1b}]0;title\u{7}".repeat(10_000);
    let many_args: Vec<String> = (0..1000).map(|i| format!("arg{i}")).collect();
    assert!(spawner.spawn(Command::new(&name).arg(&huge_arg).env("A\nB", "1")).is_err());
    assert!(spawner.spawn(Command::new("true").args(&many_args).env("X\u{1b}", "1")).is_err());
    let output = spawner.output(Command::new("true").arg(&huge_arg).args(&many_args), None).unwrap();
    assert!(output.outcome.success());
    drop(spawner);

    let text = buffer.text();
    let records = buffer.records();
    assert_eq!(records.len(), 4, "{text}");
    for line in text.lines() {
        assert!(line.len() < 64 * 1024, "a record of {} bytes", line.len());
        assert!(!line.contains(['\u{1b}', '\u{202e}', '\u{7}']), "{line}");
    }
    let denied = &records[0];
    let program = denied["program"].as_str().unwrap();
    assert!(program.starts_with(r"/no/such/dir/x\nwrt: allow it"), "{program}");
    assert!(program.ends_with(&format!("…({} bytes)", name.len())), "{program}");
    let arg = denied["argv"][1].as_str().unwrap();
    assert!(arg.starts_with(r"\u{1b}]0;title\u{7}"), "{arg}");
    assert!(arg.ends_with(&format!("…({} bytes)", huge_arg.len())), "{arg}");
    assert!(denied["reason"].as_str().unwrap().len() < 4 * SHOWN_BYTES);

    let env_denied = &records[1];
    assert_eq!(env_denied["env_keys"], serde_json::json!([r"X\u{1b}"]));
    let argv = env_denied["argv"].as_array().unwrap();
    assert_eq!(argv.len(), 65, "64 shown and a count");
    assert_eq!(argv[64], "…(1001 items)");

    let allowed = &records[2];
    assert_eq!(allowed["decision"], "allow");
    assert_eq!(allowed["argv"].as_array().unwrap().len(), 65);
}

#[test]
fn refusals_are_rate_limited_in_the_audit_log() {
    let _lock = lock();
    let buffer = LogBuffer::default();
    let spawner = Spawner::new(Policy::deny_all().allow_program("true"))
        .unwrap()
        .with_audit_log(AuditLog::new(buffer.clone()))
        .with_refusal_rate_limit(RateLimit::new(5, std::time::Duration::from_secs(3600)));
    for i in 0..50 {
        assert!(spawner.spawn(&Command::new(format!("/denied/{i}"))).is_err());
    }
    // Started children are always recorded.
    assert!(spawner.output(&Command::new("true"), None).unwrap().outcome.success());
    let records = buffer.records();
    let decisions: Vec<_> = records.iter().filter(|r| r["event"] == "decision").collect();
    assert_eq!(decisions.len(), 6, "{records:#?}");
    assert_eq!(decisions[5]["decision"], "allow");
    assert!(records.iter().all(|r| r["event"] != "suppressed"));
    drop(spawner);
    let records = buffer.records();
    let last = records.last().unwrap();
    assert_eq!(last["event"], "suppressed", "{records:#?}");
    assert_eq!(last["count"], 45);
}

#[test]
fn default_rate_limit_bounds_a_denial_loop() {
    let _lock = lock();
    let buffer = LogBuffer::default();
    let spawner = Spawner::new(Policy::deny_all()).unwrap().with_audit_log(AuditLog::new(buffer.clone()));
    for _ in 0..10_000 {
        assert!(spawner.spawn(&Command::new("/denied")).is_err());
    }
    drop(spawner);
    let records = buffer.records();
    // A fast loop stays inside one or two 10-second windows.
    assert!(records.len() <= 2 * 20 + 2, "{} records", records.len());
    let suppressed: u64 =
        records.iter().filter(|r| r["event"] == "suppressed").map(|r| r["count"].as_u64().unwrap()).sum();
    let decisions = records.iter().filter(|r| r["event"] == "decision").count() as u64;
    assert_eq!(decisions + suppressed, 10_000);
}

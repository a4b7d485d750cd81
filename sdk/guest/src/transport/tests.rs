use std::ffi::OsStr;

use super::*;

#[test]
fn request_reflects_the_builder() {
    let mut cmd = Command::new("env");
    cmd.arg("-0").args(["a", "b"]).env("B", "2").envs([("A", "1"), ("C", "3")]).env_remove("C");
    cmd.current_dir("/tmp").timeout(Duration::from_micros(1500)).output_limit(4096);
    let request = request(&cmd, Stdio::piped(), Stdio::null(), Stdio::inherit());
    assert_eq!(request.program, "env");
    assert_eq!(request.args, ["-0", "a", "b"]);
    assert_eq!(request.env, [(OsStr::new("A"), OsStr::new("1")), (OsStr::new("B"), OsStr::new("2"))]);
    assert_eq!(request.cwd, "/tmp");
    assert_eq!((request.stdin.mode().raw(), request.stdout.mode().raw(), request.stderr.mode().raw()), (1, 0, 2));
    assert_eq!((request.timeout_ms, request.output_limit), (2, 4096));

    cmd.env("A", "replaced").env_clear().env("D", "4");
    assert_eq!(
        super::request(&cmd, Stdio::null(), Stdio::null(), Stdio::null()).env,
        [(OsStr::new("D"), OsStr::new("4"))]
    );
}

#[test]
fn defaults_are_the_policy_s() {
    let cmd = Command::new("true");
    let request = request(&cmd, Stdio::null(), Stdio::null(), Stdio::null());
    assert!(request.args.is_empty() && request.env.is_empty());
    assert_eq!(request.cwd, "");
    assert_eq!((request.timeout_ms, request.output_limit, request.pty_size), (0, 0, (0, 0)));
}

#[test]
fn timeouts_in_milliseconds() {
    assert_eq!(timeout_ms(None), -1);
    assert_eq!(timeout_ms(Some(Duration::ZERO)), 0);
    assert_eq!(timeout_ms(Some(Duration::from_micros(1))), 1);
    assert_eq!(timeout_ms(Some(Duration::from_millis(1500))), 1500);
    assert_eq!(timeout_ms(Some(Duration::MAX)), i64::MAX);
}

fn record(how: u32, value: i32, flags: u32) -> [u8; RUN_STATUS_LEN] {
    let mut record = [0; RUN_STATUS_LEN];
    record[0..4].copy_from_slice(&how.to_le_bytes());
    record[4..8].copy_from_slice(&value.to_le_bytes());
    record[8..12].copy_from_slice(&flags.to_le_bytes());
    record[16..24].copy_from_slice(&1_500_000_000u64.to_le_bytes());
    record[24..32].copy_from_slice(&(3u64 << 20).to_le_bytes());
    record[32..40].copy_from_slice(&7_000u64.to_le_bytes());
    record[40..48].copy_from_slice(&9_000u64.to_le_bytes());
    record
}

#[test]
fn decodes_an_exit() {
    let status = from_record(&record(1, 3, 0));
    assert_eq!((status.code(), status.signal()), (Some(3), None));
    assert!(!status.success() && !status.timed_out());
    assert_eq!(status.duration(), Duration::from_millis(1500));
    assert_eq!(status.peak_rss(), 3 << 20);
    assert_eq!(status.user_time(), Duration::from_micros(7));
    assert_eq!(status.system_time(), Duration::from_micros(9));
    assert_eq!(status.to_string(), "exit status: 3");
    assert!(from_record(&record(1, 0, 0)).success());
}

#[test]
fn decodes_a_signal_and_flags() {
    let status = from_record(&record(2, 15, 0b111));
    assert_eq!((status.code(), status.signal()), (None, Some(15)));
    assert!(status.timed_out() && status.stdout_truncated() && status.stderr_truncated());
    assert_eq!(status.to_string(), "signal: 15 (SIGTERM), timed out");
    let status = from_record(&record(2, 9, 0b100));
    assert!(!status.timed_out() && !status.stdout_truncated() && status.stderr_truncated());
    assert_eq!(status.to_string(), "signal: 9 (SIGKILL)");
    assert_eq!(from_record(&record(2, 64, 0)).to_string(), "signal: 64");
}

#[test]
fn a_timed_out_exit_zero_is_not_success() {
    let status = from_record(&record(1, 0, 1));
    assert!(!status.success());
    assert_eq!(status.to_string(), "exit status: 0, timed out");
}

#[test]
fn unknown_endings_are_neither_code_nor_signal() {
    let status = from_record(&record(7, 1, 0));
    assert_eq!((status.code(), status.signal(), status.success()), (None, None, false));
}

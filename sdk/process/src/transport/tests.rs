use super::*;

#[test]
fn the_record_reflects_the_builder() {
    let mut cmd = Command::new("env");
    cmd.arg("-0").args(["a", "b"]).env("B", "2").envs([("A", "1"), ("C", "3")]).env_remove("C");
    cmd.current_dir("/tmp").timeout(Duration::from_micros(1500)).output_limit(4096).pty_size(30, 100);
    let wit = to_wit(&cmd, &Stdio::piped(), &Stdio::null(), &Stdio::merge_with_stdout()).unwrap();
    assert_eq!(wit.program, "env");
    assert_eq!(wit.args, ["-0", "a", "b"]);
    assert_eq!(wit.env, [("A".to_owned(), "1".to_owned()), ("B".to_owned(), "2".to_owned())]);
    assert_eq!(wit.cwd.as_deref(), Some("/tmp"));
    assert_eq!((wit.stdin, wit.stdout, wit.stderr), (sys::Stdio::Piped, sys::Stdio::Null, sys::Stdio::MergeWithStdout));
    assert_eq!((wit.timeout_ms, wit.output_limit, wit.pty_size), (Some(2), Some(4096), Some((30, 100))));
}

#[test]
fn defaults_are_the_policy_s() {
    let wit = to_wit(Command::new("true").output_limit(0), &Stdio::null(), &Stdio::null(), &Stdio::null()).unwrap();
    assert!(wit.args.is_empty() && wit.env.is_empty());
    assert_eq!((wit.cwd, wit.timeout_ms, wit.output_limit, wit.pty_size), (None, None, None, None));
}

#[test]
#[cfg(unix)]
fn strings_that_are_not_utf8_fail_before_the_host() {
    use std::os::unix::ffi::OsStrExt;
    let err =
        to_wit(Command::new("ls").arg(OsStr::from_bytes(b"\xff")), &Stdio::null(), &Stdio::null(), &Stdio::null())
            .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert_eq!(ErrorCode::of(&err), Some(ErrorCode::BadUtf8));
    assert!(err.to_string().starts_with("cannot spawn `ls`: an argument"), "{err}");
}

#[test]
fn timeouts_in_milliseconds() {
    assert_eq!(timeout_ms(None), None);
    assert_eq!(timeout_ms(Some(Duration::ZERO)), Some(0));
    assert_eq!(timeout_ms(Some(Duration::from_micros(1))), Some(1));
    assert_eq!(timeout_ms(Some(Duration::from_millis(1500))), Some(1500));
    assert_eq!(timeout_ms(Some(Duration::MAX)), Some(u64::MAX));
}

fn status(termination: sys::Termination, timed_out: bool, truncated: (bool, bool)) -> ExitStatus {
    from_wit_status(&sys::Status {
        termination,
        timed_out,
        stdout_truncated: truncated.0,
        stderr_truncated: truncated.1,
        duration_ns: 1_500_000_000,
        peak_rss: 3 << 20,
        user_ns: 7_000,
        system_ns: 9_000,
    })
}

#[test]
fn an_exit() {
    let exit = status(sys::Termination::Exited(3), false, (false, false));
    assert_eq!((exit.code(), exit.signal()), (Some(3), None));
    assert!(!exit.success() && !exit.timed_out() && !exit.stdout_truncated() && !exit.stderr_truncated());
    assert_eq!(exit.duration(), Duration::from_millis(1500));
    assert_eq!(exit.peak_rss(), 3 << 20);
    assert_eq!((exit.user_time(), exit.system_time()), (Duration::from_micros(7), Duration::from_micros(9)));
    assert_eq!(exit.to_string(), "exit status: 3");
    assert!(status(sys::Termination::Exited(0), false, (false, false)).success());
}

#[test]
fn a_signal_and_the_flags() {
    let killed = status(sys::Termination::Signaled(15), true, (true, false));
    assert_eq!((killed.code(), killed.signal()), (None, Some(15)));
    assert!(killed.timed_out() && killed.stdout_truncated() && !killed.stderr_truncated());
    assert_eq!(killed.to_string(), "signal: 15 (SIGTERM), timed out");
    assert!(status(sys::Termination::Exited(0), false, (false, true)).stderr_truncated());
    assert_eq!(status(sys::Termination::Signaled(64), false, (false, false)).to_string(), "signal: 64");
    let timed_out = status(sys::Termination::Exited(0), true, (false, false));
    assert!(!timed_out.success());
    assert_eq!(timed_out.to_string(), "exit status: 0, timed out");
}

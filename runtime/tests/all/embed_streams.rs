//! Streaming standard streams through the embedder's own `Write` and `Read`
//! (`GuestOutput::Writer`, `GuestStdin::Reader`): the guest's bytes and its children's arrive in
//! the writer, a gibibyte passes without the host keeping it, and a writer that fails is an I/O
//! error for the guest and a truncated stream in the report.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{GuestOutput, GuestStdin, Outcome, RunOptions, Runtime};
use wrt_test_guests::{CLI_HELLO, CLI_STDIN_ECHO, COMPONENT_HELLO, LIMITS_STDOUT_FLOOD, SPAWN_INHERIT};

use crate::util::Collected;

#[test]
fn guest_output_goes_to_the_embedders_writer_for_modules_and_components() {
    let runtime = Runtime::new().unwrap();
    for guest in [CLI_HELLO, COMPONENT_HELLO] {
        let (out, err) = (Collected::default(), Collected::default());
        let options = RunOptions::new()
            .arg("a")
            .stdout(GuestOutput::writer(out.clone()))
            .stderr(GuestOutput::writer(err.clone()));
        let report = runtime.load_file(guest).unwrap().run(&options).unwrap();
        assert_eq!(report.outcome, Outcome::Exited(0), "{guest}");
        assert!(out.text().starts_with("hello"), "{guest}: {:?}", out.text());
        assert!(report.stdout.is_empty() && !report.stdout_truncated, "{guest}: nothing is kept");
    }
}

/// A child with an inherited stdout and stderr writes into the guest's writers, in order with the
/// guest's own lines.
#[test]
fn children_inheriting_the_stream_write_into_the_same_writer() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = Runtime::new().unwrap();
    let (out, err) = (Collected::default(), Collected::default());
    let options = RunOptions::new()
        .spawn_policy(&Policy::deny_all().allow_program("sh"))
        .unwrap()
        .stdout(GuestOutput::writer(out.clone()))
        .stderr(GuestOutput::writer(err.clone()));
    let report = runtime.load_file(SPAWN_INHERIT).unwrap().run(&options).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(3));
    assert_eq!(out.text(), "guest before\nchild out\nguest after\n");
    assert_eq!(err.text(), "child err\n");
}

/// Counts what it is given, and fails once it has been given `fail_after` bytes; records the
/// process's resident set size every 64 MiB.
struct Counting {
    count: u64,
    fail_after: u64,
    peak_rss: Arc<Mutex<u64>>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.count >= self.fail_after {
            return Err(std::io::Error::other("enough"));
        }
        if self.count % (64 << 20) + buf.len() as u64 >= 64 << 20 {
            let mut peak = self.peak_rss.lock().unwrap();
            *peak = (*peak).max(rss());
        }
        self.count += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's resident set size in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() << 10
}

/// 1 GiB of stdout passes through a writer while the resident set stays within 256 MiB of where it
/// began (other tests of this binary run at the same time; a capture would hold the gibibyte).
/// The writer then fails: the guest's next write is an I/O error (the flood guest traps on it),
/// and the report says the stream was truncated.
#[test]
fn a_gibibyte_of_stdout_through_a_writer_keeps_rss_flat() {
    let runtime = Runtime::new().unwrap();
    let flood = runtime.load_file(LIMITS_STDOUT_FLOOD).unwrap();
    let peak_rss = Arc::new(Mutex::new(0));
    let before = rss();
    let writer = Counting { count: 0, fail_after: 1 << 30, peak_rss: Arc::clone(&peak_rss) };
    let report = flood.run(&RunOptions::new().stdout(GuestOutput::writer(writer))).unwrap();
    assert!(matches!(report.outcome, Outcome::Trapped(_)), "{:?}", report.outcome);
    assert!(report.stdout_truncated);
    let peak = *peak_rss.lock().unwrap();
    assert!(peak > 0, "the writer saw less than 64 MiB");
    let grew = peak.saturating_sub(before);
    assert!(grew < 256 << 20, "the resident set grew by {} MiB while 1 GiB streamed", grew >> 20);
}

/// Stdin read from the embedder's reader, as the guest asks, 8 MiB of it, echoed to a writer.
#[test]
fn guest_stdin_comes_from_the_embedders_reader() {
    let runtime = Runtime::new().unwrap();
    let echo = runtime.load_file(CLI_STDIN_ECHO).unwrap();
    let input: Vec<u8> = (0..8u32 << 20).map(|i| (i % 251) as u8).collect();
    let (out, err) = (Collected::default(), Collected::default());
    let options = RunOptions::new()
        .stdin(GuestStdin::reader(std::io::Cursor::new(input.clone())))
        .stdout(GuestOutput::writer(out.clone()))
        .stderr(GuestOutput::writer(err.clone()));
    let report = echo.run(&options).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0), "{}", err.text());
    assert_eq!(err.text(), format!("{} bytes\n", input.len()));
    assert!(*out.0.lock().unwrap() == input, "the echoed bytes differ");
}

/// A reader that fails is a failed read for the guest, not a trap of the host.
#[test]
fn a_failing_reader_is_an_io_error_for_the_guest() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("the client went away"))
        }
    }
    let runtime = Runtime::new().unwrap();
    let echo = runtime.load_file(CLI_STDIN_ECHO).unwrap();
    let err = Collected::default();
    let options = RunOptions::new().stdin(GuestStdin::reader(Failing)).stderr(GuestOutput::writer(err.clone()));
    let report = echo.run(&options).unwrap();
    // The guest's `expect("read stdin")` panics on the error: a trap of the guest, with its message.
    assert!(matches!(report.outcome, Outcome::Trapped(_)), "{:?}", report.outcome);
    assert!(err.text().contains("read stdin"), "{}", err.text());
}

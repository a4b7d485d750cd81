//! The JSONL audit log: one line per spawn decision, one line per exit.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::decide::Decision;

/// Where audit records go: one JSON object per line.
///
/// Every spawn request produces one `"decision"` record, written before the request's result
/// is returned; every child that ran produces one `"exit"` record when it is reaped. The
/// format is documented in `docs/policy.md`. A decision to allow is written after the child
/// has started (so it carries the pid); if that write fails the child is killed and the
/// spawn fails: no child runs unrecorded. Failures to write an exit record are ignored.
///
/// Strings that are not valid UTF-8 are written lossily (U+FFFD).
///
/// # Examples
///
/// ```
/// use wrt_host_spawn::AuditLog;
///
/// let log = AuditLog::new(std::io::sink());
/// # drop(log);
/// ```
pub struct AuditLog {
    out: Box<dyn Write + Send>,
    /// Written into every record: who the log is for.
    labels: Labels,
}

/// What an [`AuditLog`] writes into every record, besides the record itself
/// ([`AuditLog::labelled`]).
#[derive(Debug, Default, Serialize)]
struct Labels {
    #[serde(skip_serializing_if = "Option::is_none")]
    guest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<String>,
}

/// A record and the labels of its log, written as one JSON object.
#[derive(Serialize)]
struct Labelled<'a, R> {
    #[serde(flatten)]
    record: &'a R,
    #[serde(flatten)]
    labels: &'a Labels,
}

/// A writer that the audit logs of many spawners share (a server's one log for every run):
/// each record reaches it whole, in one `write_all` under its lock, so records of concurrent
/// spawners never interleave. Cheap to clone; clones share the writer.
///
/// # Examples
///
/// ```
/// use wrt_host_spawn::{AuditLog, AuditSink};
///
/// let sink = AuditSink::new(std::io::sink());
/// let (first, second) = (AuditLog::shared(&sink), AuditLog::shared(&sink));
/// # drop((first, second));
/// ```
#[derive(Clone)]
pub struct AuditSink(Arc<Mutex<Box<dyn Write + Send>>>);

impl fmt::Debug for AuditSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuditSink")
    }
}

impl AuditSink {
    /// Wraps `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Box::new(out))))
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One [`AuditLog`]'s handle on an [`AuditSink`].
struct SinkHandle(AuditSink);

impl Write for SinkHandle {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().flush()
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog").finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Writes records to `out`, flushing after each.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        Self { out: Box::new(out), labels: Labels::default() }
    }

    /// Writes records to `sink`, which other logs may share: each record whole.
    pub fn shared(sink: &AuditSink) -> Self {
        Self::new(SinkHandle(sink.clone()))
    }

    /// Writes `"guest": guest` and, if given, `"request": request` into every record, after
    /// its own fields: which guest, and which of the embedder's requests, the record is for.
    #[must_use]
    pub fn labelled(mut self, guest: impl Into<String>, request: Option<String>) -> Self {
        self.labels = Labels { guest: Some(guest.into()), request };
        self
    }

    /// Sets the `"request"` label of the records written from now on (`None`: no label).
    pub(crate) fn set_request(&mut self, request: Option<String>) {
        self.labels.request = request;
    }

    /// Appends records to the file at `path`, creating it if needed.
    ///
    /// # Errors
    ///
    /// Opening the file fails.
    ///
    /// # Ambient authority
    ///
    /// Opens `path` on the host's file system.
    pub fn append_to_file(path: impl AsRef<Path>) -> io::Result<Self> {
        let file: File = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(Self::new(file))
    }

    pub(crate) fn write(&mut self, record: &impl Serialize) -> io::Result<()> {
        let labelled = Labelled { record, labels: &self.labels };
        let json = serde_json::to_string(&labelled).map_err(io::Error::other)?;
        let mut line = wrt_text::json_escaped(json);
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

/// A `"decision"` record.
#[derive(Debug, Serialize)]
pub(crate) struct DecisionRecord {
    pub(crate) time: Timestamp,
    pub(crate) event: &'static str,
    pub(crate) decision: Decision,
    pub(crate) reason: String,
    pub(crate) program: String,
    pub(crate) path: Option<String>,
    pub(crate) argv: Vec<String>,
    pub(crate) env_keys: Vec<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) rule: Option<String>,
    pub(crate) strategy: Option<&'static str>,
    pub(crate) pid: Option<u32>,
    /// The SHA-256 of the file executed, for an allow rule that pins one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sha256: Option<String>,
    /// What the child sandbox lets a started child reach (started children only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox: Option<crate::sandbox::Confinement>,
}

/// An `"exit"` record.
#[derive(Debug, Serialize)]
pub(crate) struct ExitRecord {
    pub(crate) time: Timestamp,
    pub(crate) event: &'static str,
    pub(crate) pid: u32,
    pub(crate) path: String,
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) duration_ms: f64,
    pub(crate) stdout_bytes: u64,
    pub(crate) stderr_bytes: u64,
    pub(crate) stdout_truncated: bool,
    pub(crate) stderr_truncated: bool,
    pub(crate) user_time_ms: f64,
    pub(crate) system_time_ms: f64,
    /// `null` when the child's own peak is not known (`ResourceUsage::max_rss`).
    pub(crate) max_rss_bytes: Option<u64>,
    pub(crate) strategy: &'static str,
}

/// A `"suppressed"` record: how many refusals were not recorded because of the rate limit.
#[derive(Debug, Serialize)]
pub(crate) struct SuppressedRecord {
    pub(crate) time: Timestamp,
    pub(crate) event: &'static str,
    pub(crate) count: u64,
}

/// A UTC time written as RFC 3339 with microseconds: `2026-01-02T03:04:05.678901Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timestamp {
    /// Microseconds since the Unix epoch.
    micros: u64,
}

impl Timestamp {
    pub(crate) fn now() -> Self {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Self { micros: u64::try_from(since.as_micros()).unwrap_or(u64::MAX) }
    }
}

/// Days since 1970-01-01 to a (year, month, day) civil date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.micros / 1_000_000;
        let micros = self.micros % 1_000_000;
        let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
        let rem = secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        write!(f, "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z", rem / 3600, rem / 60 % 60, rem % 60)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, micros: u64) -> String {
        Timestamp { micros: secs * 1_000_000 + micros }.to_string()
    }

    #[test]
    fn rfc3339() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(at(1_700_000_000, 123_456), "2023-11-14T22:13:20.123456Z");
        assert_eq!(at(4_107_542_399, 0), "2100-02-28T23:59:59.000000Z");
    }

    #[test]
    fn one_line_per_record() {
        #[derive(Serialize)]
        struct R {
            a: &'static str,
        }
        let buf = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().write(b)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut log = AuditLog::new(Shared(buf.clone()));
        log.write(&R { a: "x\ny" }).unwrap();
        log.write(&R { a: "z" }).unwrap();
        assert_eq!(String::from_utf8(buf.lock().unwrap().clone()).unwrap(), "{\"a\":\"x\\ny\"}\n{\"a\":\"z\"}\n");
    }

    /// Logs sharing one sink from many threads: every line is one whole record, with the labels
    /// of the log that wrote it after the record's own fields.
    #[test]
    fn shared_sinks_keep_records_whole_and_labelled() {
        #[derive(Serialize)]
        struct R {
            n: usize,
            pad: String,
        }
        let buf = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            // A byte at a time: a record written in pieces would interleave with others.
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(&b[..b.len().min(1)]);
                Ok(b.len().min(1))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sink = AuditSink::new(Shared(buf.clone()));
        std::thread::scope(|scope| {
            for t in 0..4usize {
                let sink = sink.clone();
                scope.spawn(move || {
                    let request = t.is_multiple_of(2).then(|| format!("req-{t}"));
                    let mut log = AuditLog::shared(&sink).labelled(format!("guest \"{t}\".wasm"), request);
                    for n in 0..50 {
                        log.write(&R { n, pad: "x".repeat(200) }).unwrap();
                    }
                });
            }
        });
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 200);
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let guest = record["guest"].as_str().unwrap();
            let t: usize = guest[7..8].parse().unwrap();
            assert_eq!(guest, format!("guest \"{t}\".wasm"));
            assert_eq!(
                record.get("request").and_then(|r| r.as_str()),
                t.is_multiple_of(2).then(|| format!("req-{t}")).as_deref()
            );
            assert!(line.starts_with("{\"n\":"), "the record's own fields come first: {line}");
        }
    }
}

//! A running host program: [`Child`].

mod communicate;
mod poll;
mod stream;
mod wait_any;

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, poll};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

pub use self::poll::Interest;
pub(crate) use self::stream::{ReadStep, Reader};
pub use self::wait_any::wait_any;
use crate::audit::{ExitRecord, Timestamp};
use crate::command::{ChildStdout, Stream};
use crate::error::{KillError, ReadError, ResizeError, WaitError, WriteError};
use crate::escalation::{self, SystemClock, Timer, Wait};
use crate::escape::shown;
use crate::outcome::{ChildOutcome, Truncated};
use crate::registry::{ChildId, Exit, Leader, Shared, poll_timeout};
use crate::strategy::Strategy;
use crate::sys::{RawExit, set_window_size, write_no_sigpipe};
use crate::watchdog::{Ticket, Watchdog};

/// A host program started by [`Spawner::spawn`](crate::Spawner::spawn).
///
/// The child is the leader of its own process group; signals from this handle
/// ([`Child::kill`], timeouts, drop) go to the whole group. The group does not outlive its
/// leader: when host-spawn sees the leader exit, it sends `SIGKILL` to the group before
/// reaping, so background processes the child started die with it (a process that moved to
/// another group or session with `setsid` escapes; use cgroups for that).
///
/// Everything works from one thread without async: every blocking call has a non-blocking
/// `try_` twin, and every call also drives the timeout (at the deadline `SIGTERM` goes to the
/// group, after the policy's grace period `SIGKILL`). A blocking call that reaches the
/// deadline finishes the termination before it returns.
///
/// Dropping a `Child` that has not been reaped sends `SIGKILL` to its group and reaps it, so
/// no zombie is left.
///
/// # Examples
///
/// ```no_run
/// use wrt_host_spawn::{Command, Policy, Spawner, Stdio};
///
/// let spawner = Spawner::new(Policy::deny_all().allow_program("cat"))?;
/// let mut child = spawner.spawn(Command::new("cat").stdin(Stdio::Piped))?;
/// child.write_stdin(b"hello")?;
/// child.close_stdin();
/// let mut buf = [0u8; 16];
/// let n = child.read_stdout(&mut buf)?;
/// assert_eq!(&buf[..n], b"hello");
/// assert!(child.wait()?.success());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Child {
    pid: Pid,
    /// The registry's identity of this child (pids are reused once reaped).
    id: ChildId,
    path: PathBuf,
    strategy: Strategy,
    /// The leader's pidfd, opened on first use by [`Child::open_pidfd`]; closed once reaped.
    pidfd: Option<OwnedFd>,
    /// Whether [`Child::open_pidfd`] has run (it may have failed: Linux < 5.3).
    pidfd_tried: bool,
    stdin: Option<OwnedFd>,
    stdout: Reader,
    stderr: Reader,
    /// The pseudo-terminal's master, for resizing.
    pty: Option<OwnedFd>,
    started: Instant,
    spawner_peak_kib: u64,
    timeout: Option<Duration>,
    /// The timeout's progress: a copy of the watchdog's while `watch` is set (refreshed by
    /// [`Child::drive_timer`]), the timer itself otherwise.
    timer: Timer,
    /// The watchdog that carries out the timeout, from the spawn until the child is reaped.
    watch: Option<(&'static Watchdog, Ticket)>,
    /// The leader's exit was seen and its group killed; the pidfd need not be polled again.
    leader_exited: bool,
    outcome: Option<ChildOutcome>,
    shared: Arc<Shared>,
}

/// What the spawner hands over to a new [`Child`].
#[derive(Debug)]
pub(crate) struct ChildParts {
    pub(crate) pid: Pid,
    pub(crate) id: ChildId,
    pub(crate) path: PathBuf,
    pub(crate) strategy: Strategy,
    pub(crate) stdio: [Option<OwnedFd>; 3],
    pub(crate) pty: Option<OwnedFd>,
    pub(crate) output_limit: u64,
    pub(crate) started: Instant,
    /// At most the spawning process's own peak resident set size just after the start, in KiB
    /// (`sys::own_peak_at_least_kib`): [`ChildOutcome`] asks for the peak itself only of a
    /// child whose figure passes this one.
    pub(crate) spawner_peak_kib: u64,
    pub(crate) timeout: Option<Duration>,
    pub(crate) grace: Duration,
    pub(crate) shared: Arc<Shared>,
}

impl Child {
    pub(crate) fn new(parts: ChildParts) -> Self {
        let [stdin, stdout, stderr] = parts.stdio;
        // A timeout too long to represent as an instant is no timeout.
        let timer = Timer::new(parts.timeout.and_then(|t| parts.started.checked_add(t)), parts.grace);
        let watch = match timer.next_due() {
            Some(_) => Watchdog::get().map(|w| (w, w.watch(parts.pid, parts.id, &parts.shared, timer))),
            None => None,
        };
        Self {
            pid: parts.pid,
            id: parts.id,
            path: parts.path,
            strategy: parts.strategy,
            pidfd: None,
            pidfd_tried: false,
            stdin,
            stdout: Reader::new(stdout, parts.output_limit).on_pty(parts.pty.is_some()),
            stderr: Reader::new(stderr, parts.output_limit).on_pty(parts.pty.is_some()),
            pty: parts.pty,
            started: parts.started,
            spawner_peak_kib: parts.spawner_peak_kib,
            timeout: parts.timeout,
            timer,
            watch,
            leader_exited: false,
            outcome: None,
            shared: parts.shared,
        }
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.pid.as_raw().cast_unsigned()
    }

    /// The child's process group: a new group whose id is the child's pid.
    pub fn process_group(&self) -> u32 {
        self.pid()
    }

    /// The canonical path that was executed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the child was created.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The timeout in force (counted from the spawn), if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn parts(&mut self) -> (Leader<'_>, &mut Timer) {
        let leader =
            Leader { pid: self.pid, id: self.id, pidfd: self.pidfd.as_ref().map(AsFd::as_fd), shared: &self.shared };
        (leader, &mut self.timer)
    }

    /// Opens the leader's pidfd if a poll or a wait with a time limit is about to need it, and
    /// it is not open yet.
    ///
    /// Most children never need one: a wait without a time limit blocks in `waitid` instead,
    /// which spares every such spawn a `pidfd_open` (a new pidfs inode on Linux ≥ 6.9), a `poll`
    /// and a `close`: about 10 µs of the host's CPU per spawn of `/bin/true` on the development
    /// VM, an eighth of its own time (docs/benchmarks.md). Opening it late is
    /// as safe as at the spawn: the registry opens it only while the child is not reaped, so the
    /// pid is still this child's (a zombie holds it).
    fn open_pidfd(&mut self) {
        if !self.pidfd_tried && !self.leader_exited && self.outcome.is_none() {
            self.pidfd_tried = true;
            self.pidfd = self.shared.open_pidfd(self.id);
        }
    }

    /// Sends whatever timeout signal is due, without blocking (through the watchdog when it
    /// watches the child), and refreshes [`Child::timer`].
    fn drive_timer(&mut self) -> io::Result<()> {
        if let Some((watchdog, ticket)) = &self.watch {
            // The watchdog takes a step only once it is due, so until then its timer is this
            // copy: no need to ask.
            if self.timer.next_due().is_some_and(|due| due <= Instant::now()) {
                self.timer = watchdog.drive(ticket)?;
            }
            return Ok(());
        }
        let (mut leader, timer) = self.parts();
        timer.poll(&mut leader, Instant::now())
    }

    /// Blocks until the leader exits or `until` passes, the timeout's signals sent on the way;
    /// whether it exited. With the watchdog, the steps are its, taken here when they are due.
    fn wait_leader(&mut self, until: Option<Instant>) -> io::Result<bool> {
        if self.watch.is_none() {
            let (mut leader, timer) = self.parts();
            return escalation::wait_until(&mut leader, timer, &SystemClock, until);
        }
        loop {
            self.drive_timer()?;
            let step = match (self.timer.next_due(), until) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            // No steps of its own: it waits up to the next step or `until`, whichever is first.
            let mut idle = Timer::new(None, Duration::ZERO);
            let (mut leader, _) = self.parts();
            if escalation::wait_until(&mut leader, &mut idle, &SystemClock, step)? {
                return Ok(true);
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return Ok(false);
            }
        }
    }

    /// Finishes a timeout: blocks until the leader has exited (`SIGKILL` after the grace).
    fn finish_termination(&mut self) -> io::Result<()> {
        self.open_pidfd();
        self.wait_leader(None).map(drop)
    }

    /// Ends the watch, if any, and keeps the timer as the watchdog left it.
    fn unwatch(&mut self) {
        if let Some((watchdog, ticket)) = self.watch.take() {
            self.timer = watchdog.unwatch(ticket);
        }
    }

    /// The leader has exited: kill what is left of its group while the zombie pins the pgid.
    fn on_leader_exit(&mut self) {
        if !self.leader_exited {
            self.leader_exited = true;
            let _ = self.shared.signal_group(self.id, Signal::SIGKILL);
        }
    }

    /// Polls `stream`'s pipe for `events` (and the pidfd) until the next timeout step is due.
    fn poll_stream(&mut self, stream: Stream, events: PollFlags) -> io::Result<()> {
        self.open_pidfd();
        let timeout = self.timer.next_due().map(|due| due.saturating_duration_since(Instant::now()));
        let pidfd = if self.leader_exited { None } else { self.pidfd.as_ref().map(AsFd::as_fd) };
        let fd = match stream {
            Stream::Stdin => self.stdin.as_ref().map(AsFd::as_fd),
            Stream::Stdout => self.stdout.fd(),
            Stream::Stderr => self.stderr.fd(),
        };
        let Some(fd) = fd else { return Ok(()) };
        if poll_with_pidfd(fd, events, pidfd, timeout)? {
            self.on_leader_exit();
        }
        Ok(())
    }

    /// Writes some of `buf` to the child's stdin, blocking until at least one byte fits.
    /// Returns how many bytes were written.
    ///
    /// # Errors
    ///
    /// [`WriteError::NotPiped`] if stdin is not an open pipe; [`WriteError::Io`] with
    /// [`io::ErrorKind::BrokenPipe`] once the child has closed its stdin (never `SIGPIPE` in
    /// the host); [`WriteError::TimedOut`] if the deadline passes first (the child is then
    /// terminated), also when the timeout ended the child before the call.
    pub fn write_stdin(&mut self, buf: &[u8]) -> Result<usize, WriteError> {
        self.write_stdin_inner(buf, true).map(|n| n.unwrap_or(0))
    }

    /// Writes what fits into the stdin pipe now; `Ok(None)` if nothing fits.
    ///
    /// # Errors
    ///
    /// As [`Child::write_stdin`], except that it never times out by itself.
    pub fn try_write_stdin(&mut self, buf: &[u8]) -> Result<Option<usize>, WriteError> {
        self.write_stdin_inner(buf, false)
    }

    fn write_stdin_inner(&mut self, buf: &[u8], block: bool) -> Result<Option<usize>, WriteError> {
        let pid = self.pid();
        let io_err = |source| WriteError::Io { pid, source };
        loop {
            self.drive_timer().map_err(io_err)?;
            let Some(fd) = self.stdin.as_ref() else {
                return Err(WriteError::NotPiped { pid });
            };
            match write_no_sigpipe(fd.as_fd(), buf) {
                Ok(n) => return Ok(Some(n)),
                Err(Errno::EAGAIN) if !block => return Ok(None),
                Err(Errno::EAGAIN) => {}
                // The watchdog's timeout ended the child while the write waited (or before it):
                // the timeout, not the broken pipe it caused, is what this write reports.
                Err(Errno::EPIPE) if block && self.timer.timed_out() => {}
                Err(errno) => return Err(io_err(errno.into())),
            }
            if self.timer.timed_out() {
                self.finish_termination().map_err(io_err)?;
                return Err(WriteError::TimedOut { pid, timeout: self.timeout.unwrap_or_default() });
            }
            self.poll_stream(Stream::Stdin, PollFlags::POLLOUT).map_err(io_err)?;
        }
    }

    /// Closes the host's end of stdin, so the child reads end-of-file.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sets the window size of the child's pseudo-terminal (`TIOCSWINSZ`); the terminal's
    /// foreground process group gets `SIGWINCH`.
    ///
    /// # Errors
    ///
    /// [`ResizeError::NotPty`] if no stream of the child is [`Stdio::Pty`](crate::Stdio::Pty);
    /// [`ResizeError::Io`] if the `ioctl` fails.
    #[doc(alias = "TIOCSWINSZ")]
    pub fn pty_resize(&mut self, rows: u16, cols: u16) -> Result<(), ResizeError> {
        let pid = self.pid();
        let Some(pty) = &self.pty else { return Err(ResizeError::NotPty { pid }) };
        set_window_size(pty.as_fd(), rows, cols).map_err(|errno| ResizeError::Io { pid, source: errno.into() })
    }

    /// Whether the child's streams include a pseudo-terminal.
    pub fn has_pty(&self) -> bool {
        self.pty.is_some()
    }

    /// Takes the host's end of the stdout pipe, to connect it to another child's stdin
    /// ([`Stdio::from`](crate::Stdio::from), a pipeline): like `child.stdout.take()` in std.
    /// `Ok(None)` if stdout is not piped, was taken already, or is closed (end of file, or its
    /// output limit passed). From then on reading stdout fails with [`ReadError::NotPiped`].
    ///
    /// The pipe becomes blocking, as a child expects its stdin to be.
    ///
    /// # Errors
    ///
    /// `fcntl` failing to clear `O_NONBLOCK`; stdout then stays with this child.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use wrt_host_spawn::{Command, Policy, Spawner};
    ///
    /// let spawner = Spawner::new(Policy::deny_all().allow_program("printf").allow_program("wc"))?;
    /// let mut first = spawner.spawn(Command::new("printf").arg("abc"))?;
    /// let pipe = first.take_stdout()?.expect("stdout is piped by default");
    /// let output = spawner.output(Command::new("wc").arg("-c").stdin(pipe), None)?;
    /// assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_stdout(&mut self) -> io::Result<Option<ChildStdout>> {
        let Some(fd) = self.stdout.take() else { return Ok(None) };
        if let Err(errno) = set_blocking(&fd, true) {
            self.stdout.put_back(fd);
            return Err(errno.into());
        }
        Ok(Some(ChildStdout(fd)))
    }

    /// Gives back a stdout taken with [`Child::take_stdout`] (for example when the spawn it was
    /// meant for was refused): the host reads it again, without blocking.
    ///
    /// # Errors
    ///
    /// `Err(stdout)` if this child's stdout was not taken (it is open, or was never piped), or
    /// `fcntl` failed to set `O_NONBLOCK` again.
    pub fn put_back_stdout(&mut self, stdout: ChildStdout) -> Result<(), ChildStdout> {
        if !self.stdout.was_taken() {
            return Err(stdout);
        }
        if set_blocking(&stdout.0, false).is_err() {
            return Err(stdout);
        }
        self.stdout.put_back(stdout.0);
        Ok(())
    }

    /// Reads stdout, blocking until some output, end-of-file (`Ok(0)`) or the deadline.
    ///
    /// # Errors
    ///
    /// [`ReadError::NotPiped`]; [`ReadError::OutputLimit`] once the child wrote more than the
    /// limit (the pipe is then closed); [`ReadError::TimedOut`] if the deadline passes first
    /// (the child is then terminated, and later reads return what is still buffered, then
    /// `TimedOut` again instead of blocking), also when the timeout ended the child before the
    /// call; [`ReadError::Io`].
    pub fn read_stdout(&mut self, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.read(Stream::Stdout, buf, true).map(|n| n.unwrap_or(0))
    }

    /// Reads whatever stdout has now; `Ok(None)` if nothing is available, `Ok(Some(0))` at
    /// end-of-file.
    ///
    /// # Errors
    ///
    /// As [`Child::read_stdout`], except that it never times out by itself.
    pub fn try_read_stdout(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        self.read(Stream::Stdout, buf, false)
    }

    /// Reads stderr; see [`Child::read_stdout`].
    ///
    /// # Errors
    ///
    /// As [`Child::read_stdout`].
    pub fn read_stderr(&mut self, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.read(Stream::Stderr, buf, true).map(|n| n.unwrap_or(0))
    }

    /// Reads whatever stderr has now; see [`Child::try_read_stdout`].
    ///
    /// # Errors
    ///
    /// As [`Child::read_stdout`], except that it never times out by itself.
    pub fn try_read_stderr(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        self.read(Stream::Stderr, buf, false)
    }

    fn reader(&mut self, stream: Stream) -> &mut Reader {
        match stream {
            Stream::Stderr => &mut self.stderr,
            _ => &mut self.stdout,
        }
    }

    fn read(&mut self, stream: Stream, buf: &mut [u8], block: bool) -> Result<Option<usize>, ReadError> {
        let pid = self.pid();
        let io_err = |source| ReadError::Io { pid, stream, source };
        loop {
            self.drive_timer().map_err(io_err)?;
            let timed_out = self.timer.timed_out();
            let reader = self.reader(stream);
            match reader.try_read(buf).map_err(io_err)? {
                ReadStep::Data(n) => return Ok(Some(n)),
                // The watchdog's timeout ended the child while the read waited (or before it):
                // the timeout, not the end of file it caused, is what this read reports.
                ReadStep::Eof if block && timed_out => {}
                ReadStep::Eof => return Ok(Some(0)),
                ReadStep::Limit => {
                    return Err(ReadError::OutputLimit { pid, stream, limit: reader.limit() });
                }
                ReadStep::NotPiped => return Err(ReadError::NotPiped { pid, stream }),
                ReadStep::WouldBlock if !block => return Ok(None),
                ReadStep::WouldBlock => {}
            }
            if self.timer.timed_out() {
                self.finish_termination().map_err(io_err)?;
                return Err(ReadError::TimedOut { pid, timeout: self.timeout.unwrap_or_default() });
            }
            self.poll_stream(stream, PollFlags::POLLIN).map_err(io_err)?;
        }
    }

    /// Sends `signal` to the child's process group. Does nothing once the child has been
    /// reaped (its pgid may then belong to someone else).
    ///
    /// # Errors
    ///
    /// [`KillError::Signal`] if `kill` fails for another reason than the group being gone.
    pub fn kill(&mut self, signal: Signal) -> Result<(), KillError> {
        self.shared.signal_group(self.id, signal).map_err(|source| KillError::Signal {
            pgid: self.pid(),
            signal,
            source,
        })
    }

    /// Reaps the child if it has exited, without blocking; sends any timeout signal due.
    ///
    /// # Errors
    ///
    /// [`WaitError::Io`] if `waitid`, `wait4` or `kill` fails (for example because something
    /// else in the host reaped the child).
    pub fn try_wait(&mut self) -> Result<Option<ChildOutcome>, WaitError> {
        if let Some(outcome) = &self.outcome {
            return Ok(Some(outcome.clone()));
        }
        let pid = self.pid();
        self.drive_timer().map_err(|source| WaitError::Io { pid, source })?;
        match self.shared.try_reap(self.id) {
            Ok(Some(raw)) => Ok(Some(self.finish(raw))),
            Ok(None) => Ok(None),
            Err(errno) => Err(WaitError::Io { pid, source: errno.into() }),
        }
    }

    /// Closes stdin and blocks until the child exits (or is terminated at its deadline).
    ///
    /// Output still in the pipes stays readable afterwards. A child that fills a pipe nobody
    /// reads blocks until its deadline; use [`Child::communicate`] to read while waiting.
    ///
    /// # Errors
    ///
    /// As [`Child::try_wait`].
    pub fn wait(&mut self) -> Result<ChildOutcome, WaitError> {
        self.close_stdin();
        self.wait_until(None).map(|o| o.expect("waits without limit"))
    }

    /// Blocks until the child exits or `limit` passes (`Ok(None)`); the deadline still
    /// applies.
    ///
    /// # Errors
    ///
    /// As [`Child::try_wait`].
    pub fn wait_timeout(&mut self, limit: Duration) -> Result<Option<ChildOutcome>, WaitError> {
        // A limit too far away to represent is no limit.
        self.wait_until(Instant::now().checked_add(limit))
    }

    fn wait_until(&mut self, until: Option<Instant>) -> Result<Option<ChildOutcome>, WaitError> {
        if let Some(outcome) = &self.outcome {
            return Ok(Some(outcome.clone()));
        }
        let pid = self.pid();
        let io_err = |source| WaitError::Io { pid, source };
        let exit = match self.wait_blocking(until).map_err(io_err)? {
            Some(exit) => exit,
            None => {
                // A wait with a deadline of its own polls the pidfd with a timeout.
                self.open_pidfd();
                match self.wait_leader(until).map_err(io_err)? {
                    true => Exit::Unknown,
                    false => return Ok(None),
                }
            }
        };
        if exit == Exit::Zombie {
            match self.shared.reap_zombie(self.id) {
                Ok(Some(raw)) => return Ok(Some(self.finish(raw))),
                Ok(None) => {}
                Err(errno) => return Err(io_err(errno.into())),
            }
        }
        // The leader has exited; reaping cannot block. Retry briefly in case the exit was
        // seen a moment before it became waitable.
        for _ in 0..1000 {
            match self.shared.try_reap(self.id) {
                Ok(Some(raw)) => return Ok(Some(self.finish(raw))),
                Ok(None) => thread::sleep(Duration::from_micros(100)),
                Err(errno) => return Err(io_err(errno.into())),
            }
        }
        Err(io_err(io::Error::other("the child exited but could not be reaped")))
    }

    /// Waits for the leader to exit by blocking in `waitid`, without a pidfd, when the wait has
    /// no deadline of its own (`until` is `None`) and the child's timeout, if it has one, is the
    /// [`Watchdog`]'s to carry out: its signals end the `waitid`. `None` when the wait has a
    /// deadline, a pidfd is already open (a poll opened it, so polling it costs nothing more),
    /// or the timeout is this handle's to drive (no watchdog): the caller then polls the pidfd.
    fn wait_blocking(&mut self, until: Option<Instant>) -> io::Result<Option<Exit>> {
        if until.is_some() || self.pidfd.is_some() {
            return Ok(None);
        }
        // A step already due is taken here, before blocking.
        self.drive_timer()?;
        if self.watch.is_none() && self.timer.next_due().is_some() {
            return Ok(None);
        }
        let leader = Leader { pid: self.pid, id: self.id, pidfd: None, shared: &self.shared };
        loop {
            match leader.block_until_exit() {
                Ok(true) => return Ok(Some(Exit::Zombie)),
                Ok(false) => {}
                // Reaped by something else: the reap says so.
                Err(Errno::ECHILD) => return Ok(Some(Exit::Unknown)),
                Err(errno) => return Err(errno.into()),
            }
        }
    }

    /// Records the outcome of the reaped child and writes its audit record.
    fn finish(&mut self, raw: RawExit) -> ChildOutcome {
        self.leader_exited = true;
        // Reaped: the pidfd has nothing more to say, and a handle kept for its output should
        // not hold one more descriptor.
        self.pidfd = None;
        // Whatever step the watchdog took before the reap is in the outcome.
        self.unwatch();
        let mut outcome =
            ChildOutcome::from_raw(self.pid(), raw, self.strategy, self.started.elapsed(), self.spawner_peak_kib);
        outcome.timed_out = self.timer.ended(outcome.status);
        outcome.truncated = Truncated { stdout: self.stdout.truncated(), stderr: self.stderr.truncated() };
        outcome.stdout_bytes = self.stdout.bytes();
        outcome.stderr_bytes = self.stderr.bytes();
        let record = || ExitRecord {
            time: Timestamp::now(),
            event: "exit",
            pid: outcome.pid,
            path: shown(&self.path),
            exit_code: outcome.status.code(),
            signal: outcome.status.signal(),
            timed_out: outcome.timed_out,
            duration_ms: outcome.duration.as_secs_f64() * 1e3,
            stdout_bytes: outcome.stdout_bytes,
            stderr_bytes: outcome.stderr_bytes,
            stdout_truncated: outcome.truncated.stdout,
            stderr_truncated: outcome.truncated.stderr,
            user_time_ms: outcome.rusage.user_time.as_secs_f64() * 1e3,
            system_time_ms: outcome.rusage.system_time.as_secs_f64() * 1e3,
            max_rss_bytes: outcome.rusage.max_rss,
            strategy: self.strategy.as_str(),
        };
        // Best effort: the child is already gone, and its outcome matters more.
        let _ = self.shared.audit(|log| log.write(&record()));
        self.outcome = Some(outcome.clone());
        outcome
    }
}

/// Sets or clears `O_NONBLOCK` on a pipe end (its only file status flag this crate uses).
fn set_blocking(fd: &OwnedFd, blocking: bool) -> Result<(), Errno> {
    let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL)?);
    let flags = if blocking { flags - OFlag::O_NONBLOCK } else { flags | OFlag::O_NONBLOCK };
    fcntl(fd, FcntlArg::F_SETFL(flags))?;
    Ok(())
}

/// Polls `fd` for `events`, and `pidfd` for the leader's exit, up to `timeout`.
/// Returns whether the leader has exited.
fn poll_with_pidfd(
    fd: BorrowedFd<'_>,
    events: PollFlags,
    pidfd: Option<BorrowedFd<'_>>,
    timeout: Option<Duration>,
) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd, events), PollFd::new(fd, PollFlags::empty())];
    let len = match pidfd {
        Some(pidfd) => {
            fds[1] = PollFd::new(pidfd, PollFlags::POLLIN);
            2
        }
        None => 1,
    };
    match poll(&mut fds[..len], poll_timeout(timeout)) {
        Ok(_) | Err(Errno::EINTR) => {}
        Err(errno) => return Err(errno.into()),
    }
    Ok(len == 2 && fds[1].revents().is_some_and(|r| r.contains(PollFlags::POLLIN)))
}

impl Drop for Child {
    fn drop(&mut self) {
        // A child that cannot be signalled (EPERM: it changed its uid) cannot be made to exit:
        // it is left running rather than hanging the host on it.
        if self.outcome.is_none() {
            self.shared.kill_descendants(self.id);
        }
        if self.outcome.is_none() && self.shared.signal_group(self.id, Signal::SIGKILL).is_ok() {
            let mut leader = Leader {
                pid: self.pid,
                id: self.id,
                pidfd: self.pidfd.as_ref().map(AsFd::as_fd),
                shared: &self.shared,
            };
            while let Ok(false) = leader.wait_exit(None) {}
            for _ in 0..1000 {
                match self.shared.try_reap(self.id) {
                    Ok(Some(raw)) => {
                        self.finish(raw);
                        break;
                    }
                    Ok(None) => thread::sleep(Duration::from_micros(100)),
                    Err(_) => break,
                }
            }
        }
        // Never reaped here (it could not be signalled), or reaped by the spawner: no timeout
        // to carry out any more.
        self.unwatch();
        self.shared.release(self.id);
    }
}

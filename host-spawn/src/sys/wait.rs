//! Reaping a child with `wait4`, which also reports its resource usage.

use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::time::Duration;

use nix::errno::Errno;
use nix::unistd::Pid;

/// The raw status and resource usage of a reaped child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawExit {
    /// The `wait` status word.
    pub(crate) status: c_int,
    pub(crate) user_time: Duration,
    pub(crate) system_time: Duration,
    /// `ru_maxrss`, in KiB on Linux.
    pub(crate) max_rss_kib: u64,
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::new(secs, micros.saturating_mul(1000))
}

/// This process's peak resident set size, in KiB (`getrusage(RUSAGE_SELF)`'s `ru_maxrss`): at
/// least the peak of its memory at any moment until now, so at least what a child started
/// from it with `vfork` (or `fork`) carried into its `execve`. A child's `ru_maxrss` is the
/// larger of that and its own peak, so only a figure above this one is the child's own.
pub(crate) fn own_peak_kib() -> u64 {
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid out-parameter for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } == -1 {
        return u64::MAX;
    }
    // SAFETY: zero-initialised, and filled in by the successful call.
    u64::try_from(unsafe { usage.assume_init() }.ru_maxrss).unwrap_or(u64::MAX)
}

/// Reaps `pid` if it has exited: [wait4](https://man7.org/linux/man-pages/man2/wait4.2.html)
/// with `WNOHANG`. `Ok(None)` means it is still running.
#[doc(alias = "wait4")]
pub(crate) fn wait4_nohang(pid: Pid) -> Result<Option<RawExit>, Errno> {
    let mut status: c_int = 0;
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: `status` and `usage` are valid out-parameters for the duration of the call.
        let ret = unsafe { libc::wait4(pid.as_raw(), &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
        match ret {
            -1 if Errno::last() == Errno::EINTR => {}
            -1 => return Err(Errno::last()),
            0 => return Ok(None),
            _ => break,
        }
    }
    // SAFETY: the buffer was zero-initialised and wait4 filled it in on success.
    let usage = unsafe { usage.assume_init() };
    Ok(Some(RawExit {
        status,
        user_time: timeval(usage.ru_utime),
        system_time: timeval(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }))
}

//! Reaping a child with `wait4`, which also reports its resource usage.

use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
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
///
/// Asked with `RUSAGE_THREAD`: Linux reports the same `ru_maxrss` for the calling thread as for
/// the process (the process's recorded peak and its memory's high-water mark, both shared by
/// every thread), without summing every thread's CPU time as `RUSAGE_SELF` does.
pub(crate) fn own_peak_kib() -> u64 {
    let peak = peak_kib(libc::RUSAGE_THREAD);
    if peak != u64::MAX {
        PEAK_SEEN_KIB.fetch_max(peak, Ordering::Relaxed);
    }
    peak
}

/// The largest figure [`own_peak_kib`] has read, in KiB (0 before the first).
static PEAK_SEEN_KIB: AtomicU64 = AtomicU64::new(0);

/// At most this process's own peak now, in KiB, without a system call once [`own_peak_kib`]
/// has run: the largest figure it has read (a peak never falls). 0 if it cannot be read.
pub(crate) fn own_peak_at_least_kib() -> u64 {
    match PEAK_SEEN_KIB.load(Ordering::Relaxed) {
        0 => Some(own_peak_kib()).filter(|&peak| peak != u64::MAX).unwrap_or(0),
        seen => seen,
    }
}

fn peak_kib(who: c_int) -> u64 {
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid out-parameter for the duration of the call.
    if unsafe { libc::getrusage(who, usage.as_mut_ptr()) } == -1 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_peak_is_the_processs_peak_grown_on_another_thread() {
        let before = own_peak_kib();
        // More than the peak so far, touched by another thread, raises the process's peak.
        let size = usize::try_from(before).unwrap() * 1024 + (64 << 20);
        std::thread::spawn(move || {
            let block = vec![1u8; size];
            std::hint::black_box(&block);
        })
        .join()
        .unwrap();
        let seen = own_peak_at_least_kib();
        let (thread, process) = (own_peak_kib(), peak_kib(libc::RUSAGE_SELF));
        assert_eq!(thread, process);
        assert!(thread >= before + (60 << 10), "{before} KiB, then {thread} KiB");
        assert!((before..=thread).contains(&seen), "{seen} KiB seen, between {before} and {thread}");
        assert!(own_peak_at_least_kib() >= thread, "at least the last figure read");
    }
}

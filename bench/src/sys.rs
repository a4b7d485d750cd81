//! The two calls the floors and the child runner make without a wrapper: `wait4` (nix does not
//! wrap it) for a child's peak resident set size and CPU time, and a bare `fork` + `execv`, the
//! baseline the DONTFORK benchmark measures.
#![allow(unsafe_code, reason = "wait4 is not wrapped by nix; fork + execv is the baseline itself")]

use std::ffi::CString;
use std::mem::MaybeUninit;
use std::time::Duration;

/// A reaped child: how it ended and what it used.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reaped {
    /// Its wait status.
    pub(crate) status: libc::c_int,
    /// Its peak resident set size, bytes (`ru_maxrss`).
    pub(crate) peak_rss: u64,
    /// Its CPU time, user and system (`ru_utime` + `ru_stime`): all its threads', and that of
    /// the children it reaped.
    pub(crate) cpu: Duration,
}

fn duration(tv: libc::timeval) -> Duration {
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::new(u64::try_from(tv.tv_sec).unwrap_or(0), micros.saturating_mul(1000))
}

/// Waits for the child `pid` and returns its wait status, peak resident set size and CPU time.
pub(crate) fn wait4(pid: libc::pid_t) -> std::io::Result<Reaped> {
    let mut status = 0;
    let mut usage = MaybeUninit::<libc::rusage>::uninit();
    loop {
        // SAFETY: `pid` is our own child, not yet reaped; `status` and `usage` are valid
        // out-parameters for the call.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, usage.as_mut_ptr()) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if rc != -1 || err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    // SAFETY: wait4 returned the child, so the kernel filled `usage`.
    let usage = unsafe { usage.assume_init() };
    Ok(Reaped {
        status,
        peak_rss: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        cpu: duration(usage.ru_utime) + duration(usage.ru_stime),
    })
}

/// `fork`, `execv(path)` in the child (no arguments), and returns the child's pid.
pub(crate) fn fork_exec(path: &CString) -> std::io::Result<libc::pid_t> {
    let argv = [path.as_ptr(), std::ptr::null()];
    // SAFETY: the child only calls execv and _exit (async-signal-safe) on `argv`, which was
    // prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: `argv` is a NULL-terminated array of valid C strings.
        unsafe { libc::execv(path.as_ptr(), argv.as_ptr()) };
        // SAFETY: exec failed; leave the child without running any of the parent's code.
        unsafe { libc::_exit(127) };
    }
    Ok(pid)
}

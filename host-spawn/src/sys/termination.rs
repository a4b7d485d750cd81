//! The handler of the termination signals of [`crate::containment::end_on_signals`].
//!
//! Until the process starts its first child, a termination signal has nothing to clean up, and
//! the handler ends the process at once (`_exit(128 + signal)`): no thread waits for signals in
//! a process that never spawns. From the first spawn on, the handler forwards the signal
//! through a pipe to a thread that ends every descendant first ([`forward_to`]).
//!
//! The handover has no window in which a child could start unseen: a handler announces itself
//! (`DECIDING`) before it reads the pipe's descriptor, and the first spawn publishes the
//! descriptor and then waits until no handler is deciding. With sequentially consistent
//! atomics, either the handler sees the descriptor and forwards, or the spawn sees the handler
//! and waits for the `_exit` that ends the process before any child exists.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering::SeqCst};

use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal};

/// The write end of the pipe to the cleanup thread; `-1` until the first spawn.
static FORWARD: AtomicI32 = AtomicI32::new(-1);

/// Handlers that have announced themselves and not yet seen [`FORWARD`].
static DECIDING: AtomicUsize = AtomicUsize::new(0);

/// Runs on `SIGTERM`, `SIGINT` or `SIGHUP`, in whichever thread the kernel picked.
/// Async-signal-safe: atomics, `write` and `_exit`.
extern "C" fn on_termination(signal: c_int) {
    DECIDING.fetch_add(1, SeqCst);
    let fd = FORWARD.load(SeqCst);
    if fd < 0 {
        // No child was ever started, and none starts now (the first spawn waits for us).
        // SAFETY: `_exit` is async-signal-safe and ends the process without running anything.
        unsafe { libc::_exit(128 + signal) };
    }
    DECIDING.fetch_sub(1, SeqCst);
    let byte = signal as u8;
    // A full pipe (a flood of signals) loses nothing: the first byte ends the process. The
    // write end is non-blocking, so the handler never waits.
    // SAFETY: `write` is async-signal-safe; `byte` lives across the call.
    let _ = unsafe { libc::write(fd, (&raw const byte).cast::<c_void>(), 1) };
}

/// Handles every signal of `signals` with [`on_termination`] (restarting interrupted system
/// calls, on the alternate stack where a thread has one).
pub(crate) fn install(signals: &SigSet) -> Result<(), Errno> {
    for signal in signals.iter() {
        let action = MaybeUninit::<libc::sigaction>::zeroed();
        // SAFETY: a zeroed `sigaction` is a valid value of the C struct; the fields set below
        // are plain data.
        let mut action = unsafe { action.assume_init() };
        action.sa_sigaction = on_termination as extern "C" fn(c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART | libc::SA_ONSTACK;
        // SAFETY: `sa_mask` is a valid `sigset_t` inside `action`.
        unsafe { libc::sigfillset(&raw mut action.sa_mask) };
        // SAFETY: `action` is a valid, fully initialised `sigaction`; the handler only makes
        // async-signal-safe calls; no old action is asked for.
        let ret = unsafe { libc::sigaction(signal as c_int, &raw const action, ptr::null_mut()) };
        super::cvt(ret)?;
    }
    Ok(())
}

/// A pipe for forwarded signals: `(read end, write end)`, both close-on-exec, the write end
/// non-blocking.
pub(crate) fn signal_pipe() -> Result<(OwnedFd, OwnedFd), Errno> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    nix::fcntl::fcntl(&write, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))?;
    Ok((read, write))
}

/// From now on, handlers write the signal's number to `write` instead of ending the process.
/// Returns once no handler can still be on its way to `_exit`, or never, because one is. The
/// descriptor stays open for the life of the process.
pub(crate) fn forward_to(write: OwnedFd) {
    FORWARD.store(write.as_raw_fd(), SeqCst);
    std::mem::forget(write);
    while DECIDING.load(SeqCst) != 0 {
        std::thread::yield_now();
    }
}

/// The signal a handler forwarded: blocks on `read` until one comes.
pub(crate) fn next_signal(read: &OwnedFd) -> Option<Signal> {
    let mut byte = [0u8; 1];
    loop {
        match nix::unistd::read(read, &mut byte) {
            Ok(1) => return Signal::try_from(c_int::from(byte[0])).ok(),
            Ok(_) => return None,
            Err(Errno::EINTR) => {}
            Err(_) => return None,
        }
    }
}

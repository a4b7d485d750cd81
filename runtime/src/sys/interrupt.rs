//! Interrupting a thread blocked in a system call: a signal whose handler does nothing,
//! installed without `SA_RESTART`, makes the call fail with `EINTR` (signal(7), "Interruption of
//! system calls and library functions by signal handlers").

use std::sync::OnceLock;

use nix::sys::pthread::{Pthread, pthread_kill, pthread_self};
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// The signal: `SIGURG`, whose default action is to ignore it, so one that arrives after its
/// handler is gone (or in a child) harms nothing.
pub(crate) const SIGNAL: Signal = Signal::SIGURG;

extern "C" fn do_nothing(_: nix::libc::c_int) {}

/// Installs the handler, once per process. A handler the process already had is put back and
/// kept: then it decides whether blocked calls are interrupted. Returns whether wrt's handler
/// is in place.
pub(crate) fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let action = SigAction::new(SigHandler::Handler(do_nothing), SaFlags::empty(), SigSet::empty());
        // SAFETY: the handler does nothing, so it is async-signal-safe and touches no state.
        let Ok(previous) = (unsafe { sigaction(SIGNAL, &action) }) else { return false };
        if matches!(previous.handler(), SigHandler::SigDfl | SigHandler::SigIgn) {
            return true;
        }
        // SAFETY: puts back the action the process had installed itself.
        let _ = unsafe { sigaction(SIGNAL, &previous) };
        false
    })
}

/// The calling thread.
pub(crate) fn current() -> Pthread {
    pthread_self()
}

/// Sends the signal to `thread`, which must be running (the caller knows it has not returned
/// from the call it interrupts).
pub(crate) fn interrupt(thread: Pthread) {
    // Fails only for a thread that has ended, which the caller rules out.
    let _ = pthread_kill(thread, SIGNAL);
}

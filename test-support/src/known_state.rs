//! Commands that start in the state a test assumes, whatever state the test runner has.
//!
//! A runner started under `nohup` ignores `SIGHUP`; one started as a background job of a
//! non-interactive shell ignores `SIGINT` and `SIGQUIT`; a CI agent may block signals or lead
//! a process group. Ignored dispositions and the signal mask survive `fork` and `execve`, so a
//! process a test starts inherits them, and a test that sends it `SIGINT` would see nothing
//! happen. The tests say what they assume instead of inheriting it.

#![expect(unsafe_code, reason = "a pre_exec hook resets signal dispositions in the child")]

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Sets `cmd` to start with every signal at its default disposition and none blocked, in a
/// process group of its own (so that a terminal's job-control signals to the test runner's
/// group do not reach it, and a test may signal its group). Returns `cmd`.
pub fn known_state(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0);
    // SAFETY: the hook runs in the child between fork and exec and only makes
    // async-signal-safe calls (sigaction, sigprocmask) on data on its own stack; it allocates
    // nothing and takes no lock.
    unsafe { cmd.pre_exec(reset_signals) }
}

/// Every catchable signal to `SIG_DFL`, and an empty signal mask. Runs in a forked child:
/// async-signal-safe calls only.
fn reset_signals() -> std::io::Result<()> {
    // The kernel's own call, not glibc's `sigaction`, which refuses the two signals glibc
    // reserves (32 and 33) although a runner may have left them ignored too. A `SIG_DFL`
    // action with no flags, restorer or mask is all zero bits, whatever the architecture's
    // layout of `struct sigaction`.
    let default_action = [0u64; 4];
    for signal in 1..=64 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: rt_sigaction reads one action of at most 32 bytes from `default_action`
        // (it lives until the call returns) and writes nothing back (null old action); 8 is
        // the size of the kernel's signal set.
        let done = unsafe {
            libc::syscall(libc::SYS_rt_sigaction, signal, default_action.as_ptr(), std::ptr::null_mut::<u8>(), 8)
        };
        if done == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    let mut empty = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given.
    unsafe { libc::sigemptyset(empty.as_mut_ptr()) };
    // SAFETY: the set was initialised just above; the old mask is not asked for.
    if unsafe { libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut()) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal, pthread_sigmask, signal};

    /// A `/proc/PID/status` mask (`SigIgn`, `SigBlk`) as a number.
    fn mask(pid: u32, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':')).unwrap();
        u64::from_str_radix(line.trim(), 16).unwrap()
    }

    /// The process group of `pid` (the fifth field of its `stat`).
    fn process_group(pid: u32) -> u32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit_once(')').unwrap().1.split_whitespace().nth(2).unwrap().parse().unwrap()
    }

    /// A runner that ignores `SIGINT` and `SIGHUP` (as under `nohup` or in the background) and
    /// blocks `SIGTERM` starts a command in the known state: nothing ignored, nothing blocked,
    /// a group of its own.
    #[test]
    fn a_child_starts_with_default_dispositions_no_blocked_signal_and_its_own_group() {
        // SAFETY: SIG_IGN installs no handler; the test binary has no handler of its own to lose.
        let old_int = unsafe { signal(Signal::SIGINT, SigHandler::SigIgn) }.unwrap();
        // SAFETY: as above.
        let old_hup = unsafe { signal(Signal::SIGHUP, SigHandler::SigIgn) }.unwrap();
        let mut blocked = SigSet::empty();
        blocked.add(Signal::SIGTERM);
        let mut old_mask = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&blocked), Some(&mut old_mask)).unwrap();

        let mut inherited = Command::new("sleep").arg("10").spawn().unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("10");
        let mut known = super::known_state(&mut cmd).spawn().unwrap();

        pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None).unwrap();
        // SAFETY: puts back the dispositions read above.
        unsafe { signal(Signal::SIGINT, old_int) }.unwrap();
        // SAFETY: as above.
        unsafe { signal(Signal::SIGHUP, old_hup) }.unwrap();

        // Both have exec'd `sleep` once /proc names it.
        for pid in [inherited.id(), known.id()] {
            while !std::fs::read(format!("/proc/{pid}/cmdline")).unwrap().starts_with(b"sleep") {
                std::thread::yield_now();
            }
        }
        let bit = |s: Signal| 1u64 << (s as i32 - 1);
        let runner_ignores = mask(inherited.id(), "SigIgn") & (bit(Signal::SIGINT) | bit(Signal::SIGHUP));
        let (ignored, blocked) = (mask(known.id(), "SigIgn"), mask(known.id(), "SigBlk"));
        let group = process_group(known.id());
        let (id, own_pid) = (known.id(), std::process::id());
        for child in [&mut inherited, &mut known] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert_ne!(runner_ignores, 0, "the runner's ignored signals did not reach a plain child");
        assert_eq!(ignored, 0, "ignored in the known state: {ignored:#x}");
        assert_eq!(blocked, 0, "blocked in the known state: {blocked:#x}");
        assert_eq!(group, id, "not in a group of its own (the test runs as {own_pid})");
    }
}

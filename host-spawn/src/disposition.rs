//! Whether `SIGTERM` would kill a child outright: its action is the default and it does not
//! block it, as its signal masks in `/proc/<pid>/status` say.
//!
//! The timeout needs this to tell what ended a child that exited normally after its `SIGTERM`
//! was sent. For a child that would die of `SIGTERM`, a normal exit means the signal never took
//! effect: it arrived while the child was already exiting (the kernel drops signals to a
//! process on its way out), so the child ended on its own. A child that catches, ignores or
//! blocks `SIGTERM` may instead have exited because of it (a handler that cleans up and calls
//! `exit`, or a shell whose foreground job the signal killed).

use nix::unistd::Pid;

/// Whether `SIGTERM` sent to `pid` now would kill it outright; `false` when that is not known
/// (the status file cannot be read or parsed). `pid` must be a child that has not been reaped,
/// so that it names that child.
pub(crate) fn term_kills(pid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| term_kills_in(&status))
}

/// [`term_kills`] for the text of a `/proc/<pid>/status` file: `SIGTERM`'s bit is clear in
/// the blocked (`SigBlk`, of the main thread), ignored (`SigIgn`) and caught (`SigCgt`) masks.
fn term_kills_in(status: &str) -> bool {
    let bit = 1u64 << (libc::SIGTERM - 1);
    ["SigBlk", "SigIgn", "SigCgt"].into_iter().all(|field| mask(status, field).is_some_and(|mask| mask & bit == 0))
}

/// The hexadecimal signal mask on the line `field:` of a status file.
fn mask(status: &str, field: &str) -> Option<u64> {
    let value = status.lines().find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?;
    u64::from_str_radix(value.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status file's signal lines, with `SIGTERM` (bit 15, `0x4000`) where asked.
    fn status(blocked: u64, ignored: u64, caught: u64) -> String {
        format!(
            "Name:\tsh\nSigQ:\t0/15523\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n\
             SigBlk:\t{blocked:016x}\nSigIgn:\t{ignored:016x}\nSigCgt:\t{caught:016x}\n"
        )
    }

    #[test]
    fn sigterm_at_its_default_action_kills() {
        // SIGPIPE ignored and SIGCHLD caught, as many programs do: SIGTERM still kills.
        assert!(term_kills_in(&status(0, 0x1000, 0x10000)));
    }

    #[test]
    fn sigterm_caught_ignored_or_blocked_may_not_kill() {
        assert!(!term_kills_in(&status(0, 0, 0x4000)));
        assert!(!term_kills_in(&status(0, 0x4000, 0)));
        assert!(!term_kills_in(&status(0x4000, 0, 0)));
    }

    #[test]
    fn an_unreadable_status_is_not_known_to_kill() {
        assert!(!term_kills_in("Name:\tsh\n"));
        assert!(!term_kills_in(&status(0, 0, 0).replace("SigCgt:\t0000000000000000", "SigCgt:\tzz")));
        assert!(!term_kills(Pid::from_raw(i32::MAX)));
    }

    #[test]
    fn reads_this_process() {
        // Whatever this test process does with SIGTERM, its status file is read and parsed.
        let text = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(mask(&text, "SigBlk").is_some() && mask(&text, "SigIgn").is_some() && mask(&text, "SigCgt").is_some());
        assert_eq!(term_kills(nix::unistd::getpid()), term_kills_in(&text));
    }
}

//! What the child inherits: only fds 0, 1, 2; an empty signal mask; no ignored signals; its
//! own process group. Checked on a live child through `/proc/<pid>`, for both strategies.

use std::collections::BTreeSet;
use std::os::fd::{AsFd, AsRawFd};

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use nix::sys::stat::Mode;
use wrt_host_spawn::{Command, Policy, Spawner, Stdio, Strategy};

use crate::{lock, open_fds, proc_stat, status_field};

fn check_isolation(strategy: Strategy) {
    let _lock = lock();
    // The host holds a directory opened with cap-std and a descriptor without O_CLOEXEC.
    let dir = cap_std::fs::Dir::open_ambient_dir("/tmp", cap_std::ambient_authority()).unwrap();
    let leaky = nix::fcntl::open("/dev/null", OFlag::O_RDONLY, Mode::empty()).unwrap();
    let flags = FdFlag::from_bits_truncate(fcntl(&leaky, FcntlArg::F_GETFD).unwrap());
    assert!(!flags.contains(FdFlag::FD_CLOEXEC), "the test needs an inheritable fd");
    let host_fds = open_fds("self");
    assert!(host_fds.contains(&leaky.as_raw_fd()));
    assert!(host_fds.contains(&dir.as_fd().as_raw_fd()));

    // The Rust runtime ignores SIGPIPE in the host; block SIGUSR1 in this thread too.
    assert_ne!(status_field(std::process::id(), "SigIgn"), "0000000000000000");
    let usr1 = SigSet::from(Signal::SIGUSR1);
    let mut old = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&usr1), Some(&mut old)).unwrap();

    let spawner = Spawner::new(Policy::deny_all().allow_program("cat")).unwrap().with_strategy(strategy).strict(true);
    let spawned = spawner.spawn(Command::new("cat").stdin(Stdio::Piped));
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None).unwrap();
    let mut child = spawned.unwrap();
    assert_eq!(child.strategy(), strategy);

    // A round trip through `cat` shows it has exec'd and is alive.
    child.write_stdin(b"ping\n").unwrap();
    let mut buf = [0u8; 5];
    let mut got = 0;
    while got < buf.len() {
        got += child.read_stdout(&mut buf[got..]).unwrap();
    }
    assert_eq!(&buf, b"ping\n");
    let pid = child.pid();
    assert_eq!(open_fds(&pid.to_string()), BTreeSet::from([0, 1, 2]));
    assert_eq!(status_field(pid, "SigBlk"), "0000000000000000");
    assert_eq!(status_field(pid, "SigIgn"), "0000000000000000");
    let (_, pgrp) = proc_stat(pid).unwrap();
    assert_eq!(pgrp, pid, "the child leads its own process group");
    assert_eq!(child.process_group(), pid);
    assert_ne!(pgrp, nix::unistd::getpgrp().as_raw().cast_unsigned());

    child.close_stdin();
    assert!(child.wait().unwrap().success());
    drop((dir, leaky));
}

#[test]
fn posix_spawn_child_sees_only_stdio_and_default_signals() {
    check_isolation(Strategy::PosixSpawn);
}

#[test]
fn fork_exec_child_sees_only_stdio_and_default_signals() {
    check_isolation(Strategy::ForkExec);
}

/// A disposition the test gives the host process, restored on drop (dispositions are
/// process-wide: other tests in this binary see them while it lives).
struct HostDisposition {
    signal: libc::c_int,
    old: libc::sigaction,
}

extern "C" fn host_handler(_: libc::c_int) {}

#[allow(unsafe_code, reason = "sigaction on signals nix's Signal cannot name (realtime ones)")]
impl HostDisposition {
    /// `SIG_IGN`, or a do-nothing handler of the host's.
    fn set(signal: libc::c_int, ignore: bool) -> Self {
        let handler = if ignore { libc::SIG_IGN } else { host_handler as extern "C" fn(libc::c_int) as usize };
        // SAFETY: an all-zero `sigaction` is a valid value (empty mask, no flags, SIG_DFL).
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = handler;
        let mut old = std::mem::MaybeUninit::<libc::sigaction>::uninit();
        // SAFETY: both pointers are valid for the call; `host_handler` is async-signal-safe.
        let rc = unsafe { libc::sigaction(signal, &new, old.as_mut_ptr()) };
        assert_eq!(rc, 0, "sigaction({signal})");
        // SAFETY: sigaction returned 0, so it wrote the old action.
        Self { signal, old: unsafe { old.assume_init() } }
    }
}

#[allow(unsafe_code, reason = "sigaction on signals nix's Signal cannot name (realtime ones)")]
impl Drop for HostDisposition {
    fn drop(&mut self) {
        // SAFETY: `self.old` is the action sigaction returned for this signal.
        unsafe { libc::sigaction(self.signal, &self.old, std::ptr::null_mut()) };
    }
}

/// The signal reset must not rely on the dispositions the host had when the spawner was made
/// (reading them once, to spare each spawn the work, would miss later changes). The host
/// ignores SIGUSR1 and a realtime signal and installs a handler for SIGUSR2 *after* creating
/// the spawner; the child still has every signal at its default disposition (no ignored one, no
/// caught one) and an empty mask.
fn check_signals_changed_after_creation(strategy: Strategy) {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("cat")).unwrap().with_strategy(strategy).strict(true);
    check_signals_of(&spawner, &format!("{strategy:?}"));
}

/// A child in the child view inherits its dispositions from the view's starter, which reset
/// them all when the view was made (by the first spawn): a host that changes its own later
/// changes nothing for the children.
#[test]
fn a_child_in_the_view_resets_nothing_and_still_has_every_signal_at_its_default() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("cat"))
        .unwrap()
        .with_sandbox(wrt_host_spawn::ChildSandbox::confined().view(true));
    let mut first = spawner.spawn(Command::new("cat").stdin(Stdio::Null)).unwrap();
    assert!(first.wait().unwrap().success());
    check_signals_of(&spawner, "in the view");
}

fn check_signals_of(spawner: &Spawner, label: &str) {
    let rt = libc::SIGRTMIN() + 3;
    let host = [
        HostDisposition::set(libc::SIGUSR1, true),
        HostDisposition::set(rt, true),
        HostDisposition::set(libc::SIGUSR2, false),
    ];
    let ignored = u64::from_str_radix(&status_field(std::process::id(), "SigIgn"), 16).unwrap();
    let caught = u64::from_str_radix(&status_field(std::process::id(), "SigCgt"), 16).unwrap();
    let bit = |signal: libc::c_int| 1u64 << (signal - 1);
    assert_eq!(ignored & (bit(libc::SIGUSR1) | bit(rt)), bit(libc::SIGUSR1) | bit(rt), "{ignored:x}");
    assert_ne!(caught & bit(libc::SIGUSR2), 0, "{caught:x}");

    let spawned = spawner.spawn(Command::new("cat").stdin(Stdio::Piped));
    drop(host);
    let mut child = spawned.unwrap();
    child.write_stdin(b"ping\n").unwrap();
    let mut buf = [0u8; 5];
    let mut got = 0;
    while got < buf.len() {
        got += child.read_stdout(&mut buf[got..]).unwrap();
    }
    let pid = child.pid();
    for field in ["SigBlk", "SigIgn", "SigCgt"] {
        assert_eq!(status_field(pid, field), "0000000000000000", "{field} of the child ({label})");
    }
    child.close_stdin();
    assert!(child.wait().unwrap().success());
}

#[test]
fn posix_spawn_child_resets_signals_the_host_changed_after_creation() {
    check_signals_changed_after_creation(Strategy::PosixSpawn);
}

#[test]
fn fork_exec_child_resets_signals_the_host_changed_after_creation() {
    check_signals_changed_after_creation(Strategy::ForkExec);
}

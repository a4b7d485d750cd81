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

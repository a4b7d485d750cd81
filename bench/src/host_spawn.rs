//! Ways for the host to spawn `/bin/true` and wait for it, the criterion `spawn` bench's
//! variants: `wrt-host-spawn` (posix_spawn and fork-exec unconfined, vfork-exec confined by the
//! child sandbox), `std::process::Command`, and bare
//! `posix_spawn` calls with and without the attributes host-spawn asks for.

use std::ffi::CStr;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::process;

use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags, posix_spawn};
use nix::sys::signal::SigSet;
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use wrt_runtime::wrt_host_spawn::{ChildSandbox, Command, Policy, Spawner, Stdio, Strategy};

use crate::BenchError;

const TRUE: &str = "/bin/true";
const TRUE_C: &CStr = c"/bin/true";

/// Everything each variant needs, prepared once.
#[derive(Debug)]
pub struct HostSpawn {
    command: Command,
    spawner: Spawner,
    forked: Spawner,
    confined: Spawner,
    bare: (PosixSpawnAttr, PosixSpawnFileActions),
    same_attrs: (PosixSpawnAttr, PosixSpawnFileActions),
    _null: File,
}

fn floor_err(e: impl std::fmt::Display) -> BenchError {
    BenchError::Floor(e.to_string())
}

impl HostSpawn {
    /// Prepares the spawners, attributes and file actions.
    ///
    /// # Errors
    ///
    /// When a spawner, an attribute or `/dev/null` cannot be made.
    pub fn new() -> Result<Self, BenchError> {
        let mut command = Command::new(TRUE);
        command.stdin(Stdio::Null).stdout(Stdio::Null).stderr(Stdio::Null);
        let policy = Policy::deny_all().allow_program(TRUE);
        let unconfined = || Spawner::new(policy.clone()).map(|s| s.with_sandbox(ChildSandbox::off()));
        let spawner = unconfined().map_err(floor_err)?;
        let forked = unconfined().map_err(floor_err)?.with_strategy(Strategy::ForkExec);
        let confined = Spawner::new(policy.clone())
            .map_err(floor_err)?
            .with_strategy(Strategy::VforkExec)
            .with_sandbox(ChildSandbox::confined())
            .strict(true);
        // The bare call: no attributes, no file actions, empty environment.
        let bare = (PosixSpawnAttr::init().map_err(floor_err)?, PosixSpawnFileActions::init().map_err(floor_err)?);
        // What host-spawn asks posix_spawn for (minus closefrom and chdir, which nix does not
        // wrap): stdio from /dev/null, a new process group, an empty mask, default dispositions.
        let null = File::options().read(true).write(true).open("/dev/null").map_err(floor_err)?;
        let mut attr = PosixSpawnAttr::init().map_err(floor_err)?;
        attr.set_flags(
            PosixSpawnFlags::POSIX_SPAWN_SETPGROUP
                | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
                | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
        )
        .map_err(floor_err)?;
        attr.set_pgroup(Pid::from_raw(0)).map_err(floor_err)?;
        attr.set_sigmask(&SigSet::empty()).map_err(floor_err)?;
        attr.set_sigdefault(&SigSet::all()).map_err(floor_err)?;
        let mut actions = PosixSpawnFileActions::init().map_err(floor_err)?;
        for fd in 0..3 {
            actions.add_dup2(null.as_raw_fd(), fd).map_err(floor_err)?;
        }
        Ok(Self { command, spawner, forked, confined, bare, same_attrs: (attr, actions), _null: null })
    }

    /// `wrt-host-spawn` with the child sandbox off and its default strategy (posix_spawn).
    ///
    /// # Panics
    ///
    /// When the spawn or the wait fails (as every variant: they run inside a timing loop).
    pub fn host_spawn(&self) {
        black_box(self.spawner.spawn(&self.command).expect("spawn").wait().expect("wait"));
    }

    /// `wrt-host-spawn` with the fork-exec strategy.
    pub fn host_spawn_fork_exec(&self) {
        black_box(self.forked.spawn(&self.command).expect("spawn").wait().expect("wait"));
    }

    /// `wrt-host-spawn` confining the child (the default sandbox: Landlock, seccomp, no new
    /// privileges, no capabilities) under vfork-exec.
    pub fn host_spawn_confined(&self) {
        black_box(self.confined.spawn(&self.command).expect("spawn").wait().expect("wait"));
    }

    /// `std::process::Command` with stdio from /dev/null.
    pub fn std_command(&self) {
        let status = process::Command::new(TRUE)
            .stdin(process::Stdio::null())
            .stdout(process::Stdio::null())
            .stderr(process::Stdio::null())
            .status()
            .expect("std::process::Command");
        black_box(status);
    }

    /// `posix_spawn` with no attributes or file actions: the floor.
    pub fn posix_spawn_bare(&self) {
        direct(&self.bare.0, &self.bare.1);
    }

    /// `posix_spawn` with the attributes and file actions host-spawn asks for.
    pub fn posix_spawn_same_attrs(&self) {
        direct(&self.same_attrs.0, &self.same_attrs.1);
    }
}

fn direct(attr: &PosixSpawnAttr, actions: &PosixSpawnFileActions) {
    let pid = posix_spawn(TRUE_C, actions, attr, &[TRUE_C], &[] as &[&CStr]).expect("posix_spawn");
    black_box(waitpid(pid, None).expect("waitpid"));
}

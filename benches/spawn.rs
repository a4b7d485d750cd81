//! Spawn + wait of `/bin/true`: wrt-host-spawn against `std::process::Command` and direct
//! `posix_spawn` calls, in one run. docs/benchmarks.md records the ratios.

use std::ffi::CStr;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::process;

use criterion::{Criterion, criterion_group, criterion_main};
use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags, posix_spawn};
use nix::sys::signal::SigSet;
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use wrt_host_spawn::{Command, Policy, Spawner, Stdio, Strategy};

const TRUE: &str = "/bin/true";
const TRUE_C: &CStr = c"/bin/true";

fn direct(attr: &PosixSpawnAttr, actions: &PosixSpawnFileActions) {
    let pid = posix_spawn(TRUE_C, actions, attr, &[TRUE_C], &[] as &[&CStr]).unwrap();
    black_box(waitpid(pid, None).unwrap());
}

fn spawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn");

    let mut command = Command::new(TRUE);
    command.stdin(Stdio::Null).stdout(Stdio::Null).stderr(Stdio::Null);
    let spawner = Spawner::new(Policy::deny_all().allow_program(TRUE)).unwrap();
    group.bench_function("host_spawn", |b| b.iter(|| black_box(spawner.spawn(&command).unwrap().wait().unwrap())));

    group.bench_function("std_command", |b| {
        b.iter(|| {
            let status = process::Command::new(TRUE)
                .stdin(process::Stdio::null())
                .stdout(process::Stdio::null())
                .stderr(process::Stdio::null())
                .status()
                .unwrap();
            black_box(status)
        })
    });

    // The bare call: no attributes, no file actions, empty environment.
    let attr = PosixSpawnAttr::init().unwrap();
    let actions = PosixSpawnFileActions::init().unwrap();
    group.bench_function("posix_spawn", |b| b.iter(|| direct(&attr, &actions)));

    // What host-spawn asks posix_spawn for (minus closefrom and chdir, which nix does not
    // wrap): stdio from /dev/null, a new process group, an empty mask, default dispositions.
    let null = File::options().read(true).write(true).open("/dev/null").unwrap();
    let mut attr = PosixSpawnAttr::init().unwrap();
    attr.set_flags(
        PosixSpawnFlags::POSIX_SPAWN_SETPGROUP
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
    )
    .unwrap();
    attr.set_pgroup(Pid::from_raw(0)).unwrap();
    attr.set_sigmask(&SigSet::empty()).unwrap();
    attr.set_sigdefault(&SigSet::all()).unwrap();
    let mut actions = PosixSpawnFileActions::init().unwrap();
    for fd in 0..3 {
        actions.add_dup2(null.as_raw_fd(), fd).unwrap();
    }
    group.bench_function("posix_spawn_same_attrs", |b| b.iter(|| direct(&attr, &actions)));

    let forked = Spawner::new(Policy::deny_all().allow_program(TRUE)).unwrap().with_strategy(Strategy::ForkExec);
    group.bench_function("host_spawn_fork_exec", |b| {
        b.iter(|| black_box(forked.spawn(&command).unwrap().wait().unwrap()))
    });

    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);

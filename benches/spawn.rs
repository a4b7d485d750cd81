//! Spawn + wait of `/bin/true`: wrt-host-spawn against `std::process::Command` and direct
//! `posix_spawn` calls, in one run (docs/benchmarks.md records the ratios).
//!
//! Each iteration of a variant is paired with an untimed call of the baseline (`posix_spawn`;
//! the baseline itself is paired with `host_spawn`), so drift on a shared machine hits every
//! variant and its baseline alike.

use std::ffi::CStr;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::AsRawFd;
use std::process;
use std::time::{Duration, Instant};

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
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

/// Times `measured`, running `partner` (untimed) before each call.
fn paired(b: &mut Bencher<'_>, measured: &dyn Fn(), partner: &dyn Fn()) {
    b.iter_custom(|iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            partner();
            let start = Instant::now();
            measured();
            total += start.elapsed();
        }
        total
    });
}

fn spawn(c: &mut Criterion) {
    let mut command = Command::new(TRUE);
    command.stdin(Stdio::Null).stdout(Stdio::Null).stderr(Stdio::Null);
    let spawner = Spawner::new(Policy::deny_all().allow_program(TRUE)).unwrap();
    let host_spawn = || {
        black_box(spawner.spawn(&command).unwrap().wait().unwrap());
    };

    let forked = Spawner::new(Policy::deny_all().allow_program(TRUE)).unwrap().with_strategy(Strategy::ForkExec);
    let host_spawn_fork_exec = || {
        black_box(forked.spawn(&command).unwrap().wait().unwrap());
    };

    let std_command = || {
        let status = process::Command::new(TRUE)
            .stdin(process::Stdio::null())
            .stdout(process::Stdio::null())
            .stderr(process::Stdio::null())
            .status()
            .unwrap();
        black_box(status);
    };

    // The bare call: no attributes, no file actions, empty environment.
    let bare_attr = PosixSpawnAttr::init().unwrap();
    let bare_actions = PosixSpawnFileActions::init().unwrap();
    let posix_spawn_bare = || direct(&bare_attr, &bare_actions);

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
    let posix_spawn_same_attrs = || direct(&attr, &actions);

    let mut group = c.benchmark_group("spawn");
    group.bench_function("posix_spawn", |b| paired(b, &posix_spawn_bare, &host_spawn));
    group.bench_function("host_spawn", |b| paired(b, &host_spawn, &posix_spawn_bare));
    group.bench_function("std_command", |b| paired(b, &std_command, &posix_spawn_bare));
    group.bench_function("posix_spawn_same_attrs", |b| paired(b, &posix_spawn_same_attrs, &posix_spawn_bare));
    group.bench_function("host_spawn_fork_exec", |b| paired(b, &host_spawn_fork_exec, &posix_spawn_bare));
    group.finish();
}

criterion_group!(benches, spawn);
criterion_main!(benches);

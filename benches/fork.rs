//! What a fork+exec+wait of `/bin/true` by the host costs while a guest holds 0 / 600 MiB /
//! 2 GiB of touched linear memory, with MADV_DONTFORK on and off, beside posix_spawn (which
//! never copies page tables) as the floor.

use std::ffi::CString;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use wrt_runtime::{Instance, Outcome, RunOptions, Runtime};

const HEAPS_MIB: [i32; 3] = [0, 600, 2048];

/// A guest instance holding `mib` MiB of touched linear memory.
fn guest_holding(mib: i32, dontfork: bool) -> Instance {
    let runtime = Runtime::builder().dontfork(dontfork).build().expect("runtime");
    let guest = runtime.load_file(wrt_test_guests::MEM_TOUCH).expect("mem_touch guest");
    let mut instance = guest.instantiate(&RunOptions::new()).expect("instantiate");
    let outcome = instance.invoke("touch", &[mib.max(1).to_string()]).expect("touch");
    assert!(matches!(outcome, Outcome::Returned(_)), "{outcome:?}");
    instance
}

fn fork_exec(c: &mut Criterion) {
    let mut group = c.benchmark_group("fork_exec_true");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    let true_path = CString::new("/bin/true").unwrap();
    for mib in HEAPS_MIB {
        for dontfork in [true, false] {
            let instance = (mib > 0).then(|| guest_holding(mib, dontfork));
            let id = BenchmarkId::new(if dontfork { "fork/dontfork" } else { "fork/plain" }, format!("{mib}MiB"));
            group.bench_with_input(id, &mib, |b, _| b.iter(|| sys::fork_exec_wait(black_box(&true_path))));
            drop(instance);
        }
        let instance = (mib > 0).then(|| guest_holding(mib, true));
        group.bench_with_input(BenchmarkId::new("posix_spawn", format!("{mib}MiB")), &mib, |b, _| {
            b.iter(|| floor::posix_spawn_wait(black_box(&true_path)))
        });
        drop(instance);
    }
    group.finish();
}

#[path = "common/floor.rs"]
#[allow(dead_code, reason = "shared by several benches, each using a part")]
mod floor;

#[allow(unsafe_code, reason = "fork and exec without any wrapper")]
mod sys {
    use std::ffi::CString;

    /// fork, execv `path` in the child, wait for it.
    pub(crate) fn fork_exec_wait(path: &CString) {
        let argv = [path.as_ptr(), std::ptr::null()];
        // SAFETY: the child only calls execv and _exit (async-signal-safe) on `argv`, which was
        // prepared before the fork.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: `argv` is a NULL-terminated array of valid C strings.
            unsafe { libc::execv(path.as_ptr(), argv.as_ptr()) };
            // SAFETY: exec failed; leave the child without running any of the parent's code.
            unsafe { libc::_exit(127) };
        }
        super::floor::wait(pid);
    }
}

criterion_group!(benches, fork_exec);
criterion_main!(benches);

//! Guest linear memory is marked MADV_DONTFORK: a fork of the host does not carry it.

use std::ops::Range;

use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Pid};
use wrt_runtime::{Outcome, Sandbox, WasmValue};
use wrt_test_guests::*;

use crate::util::SPAWN_LOCK;

foreach_mem!(assert_test_exists);
use crate::assert_test_exists;

const TOUCHED_MIB: i32 = 256;

#[test]
fn mem_touch() {
    for dontfork in [true, false] {
        let _lock = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let sandbox = Sandbox::builder().dontfork(dontfork).build().unwrap();
        let guest = sandbox.load_file(MEM_TOUCH).unwrap();
        let mut instance = sandbox.instantiate(&guest).unwrap();
        let outcome = instance.invoke("touch", &[TOUCHED_MIB.to_string()]).unwrap();
        assert_eq!(outcome, Outcome::Returned(vec![WasmValue::I32(TOUCHED_MIB * 16)]));
        let range = instance.memory_range().unwrap();
        assert_eq!(range.len(), (TOUCHED_MIB as usize) << 20);

        let flags = vm_flags(range.start).expect("the guest memory is mapped in this process");
        assert_eq!(flags.contains(&"dc".to_owned()), dontfork, "VmFlags: {flags:?}");
        let rss = rss_kib(&range);
        assert!(rss >= (TOUCHED_MIB as u64) << 10, "only {rss} KiB of the guest memory is resident");

        let in_child = mapped_in_forked_child(&range);
        assert_eq!(in_child, !dontfork, "dontfork {dontfork}: guest memory present in the child = {in_child}");
    }
}

/// The `VmFlags` of the mapping that contains `addr`, from `/proc/self/smaps`.
fn vm_flags(addr: usize) -> Option<Vec<String>> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some(range) = parse_range(line) {
            inside = range.contains(&addr);
        } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return Some(flags.split_whitespace().map(str::to_owned).collect());
        }
    }
    None
}

/// Resident KiB of the mappings overlapping `range`.
fn rss_kib(range: &Range<usize>) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    let mut total = 0;
    for line in smaps.lines() {
        if let Some(r) = parse_range(line) {
            inside = r.start < range.end && range.start < r.end;
        } else if inside && let Some(kib) = line.strip_prefix("Rss:") {
            total += kib.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap();
        }
    }
    total
}

/// Parses the `lo-hi` address range that starts a maps/smaps mapping line.
fn parse_range(line: &str) -> Option<Range<usize>> {
    let (range, _) = line.split_once(' ')?;
    let (lo, hi) = range.split_once('-')?;
    Some(usize::from_str_radix(lo, 16).ok()?..usize::from_str_radix(hi, 16).ok()?)
}

/// Forks; the child blocks on a pipe while the parent reads `/proc/<child>/maps` and reports
/// whether any mapping overlaps `range`; then the child exits and is reaped.
fn mapped_in_forked_child(range: &Range<usize>) -> bool {
    let (read_end, write_end) = nix::unistd::pipe().unwrap();
    let child = fork_blocked_on(&read_end, &write_end);
    drop(read_end);
    let maps = std::fs::read_to_string(format!("/proc/{child}/maps"));
    drop(write_end); // the child's read returns 0 and it exits
    let status = waitpid(child, None).unwrap();
    assert!(matches!(status, nix::sys::wait::WaitStatus::Exited(_, 0)), "{status:?}");
    let maps = maps.unwrap();
    maps.lines().filter_map(parse_range).any(|r| r.start < range.end && range.start < r.end)
}

#[allow(unsafe_code, reason = "fork() of a multi-threaded test process; the child only reads and _exits")]
fn fork_blocked_on(read_end: &std::os::fd::OwnedFd, write_end: &std::os::fd::OwnedFd) -> Pid {
    use std::os::fd::AsRawFd;
    let (fd, write_fd) = (read_end.as_raw_fd(), write_end.as_raw_fd());
    // SAFETY: the child calls only async-signal-safe functions (close, read, _exit) on values
    // prepared before the fork, and never returns into Rust code that could allocate or lock.
    match unsafe { nix::unistd::fork() }.unwrap() {
        ForkResult::Child => {
            // SAFETY: closes the child's copy of the write end, so the read below ends when the
            // parent closes its own copy.
            unsafe { libc::close(write_fd) };
            let mut byte = 0u8;
            // SAFETY: `fd` is the read end of a pipe owned by this (child) process; `byte` is a
            // valid one-byte buffer.
            unsafe { libc::read(fd, (&raw mut byte).cast(), 1) };
            // SAFETY: `_exit` is async-signal-safe and ends the child without running any
            // destructor or atexit handler of the parent's state.
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => child,
    }
}

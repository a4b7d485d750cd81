//! The direct children of this process, found and ended with nothing taken at that moment: no
//! descriptor, no allocation, no thread. What cleans up after a guest must still work when a
//! guest has filled the descriptor table (a WASI guest opening files until `EMFILE`), and a
//! walk of `/proc` that opens `/proc/<pid>/stat` and a pidfd per process does not.
//!
//! So [`reserve`] opens `/proc` once, up front, and a buffer for its entries is static. A pid
//! listed there is a child of this process if `waitid(P_PID, WNOWAIT)` says so, and then it is
//! signalled by pid: a child's pid cannot be reused until this process reaps it, and its process
//! group cannot either. A child is signalled and reaped only under the gate (held for writing)
//! and the lock of the tracked set, which is also where a [`Spawner`](crate::Spawner) reaps its
//! children ([`reap_tracked`](super::reap_tracked)): the pid it looked at is still the same
//! process when the signal goes out.
//!
//! When this process is the subreaper, ending its direct children is enough to end every
//! descendant: a killed child's children come back to it, and the next round ends them.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::{Pid, Whence, lseek};

use super::TRACKED;
use crate::sys::getdents64;

/// Bytes of `/proc` entries read per `getdents64` call (a few hundred entries).
const LISTING_BYTES: usize = 16 * 1024;

/// `/proc`, opened by [`reserve`], and the buffer its entries are read into.
struct Listing {
    proc: Option<OwnedFd>,
    buf: [u8; LISTING_BYTES],
}

static LISTING: Mutex<Listing> = Mutex::new(Listing { proc: None, buf: [0; LISTING_BYTES] });

fn listing() -> MutexGuard<'static, Listing> {
    LISTING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Opens `/proc` and keeps it for every later cleanup; does nothing if it is open already.
/// Without it (no `/proc`), only the tracked children can be found without a descriptor.
pub(super) fn reserve() {
    let mut listing = listing();
    if listing.proc.is_none() {
        listing.proc = std::fs::File::open("/proc").ok().map(OwnedFd::from);
    }
}

/// Calls `each` with every pid listed in `/proc`; `false` if it could not be listed.
fn for_each_pid(listing: &mut Listing, mut each: impl FnMut(Pid)) -> bool {
    let Listing { proc, buf } = listing;
    let Some(dir) = proc.as_ref() else { return false };
    if lseek(dir.as_fd(), 0, Whence::SeekSet).is_err() {
        return false;
    }
    loop {
        let len = match getdents64(dir.as_fd(), buf) {
            Ok(0) => return true,
            Ok(len) => len.min(buf.len()),
            Err(Errno::EINTR) => continue,
            Err(_) => return false,
        };
        let mut at = 0;
        // struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name.
        while at + 19 <= len {
            let reclen = usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
            if reclen < 19 || at + reclen > len {
                break;
            }
            if let Some(pid) = parse_pid(&buf[at + 19..at + reclen]) {
                each(pid);
            }
            at += reclen;
        }
    }
}

/// The pid a `/proc` entry's NUL-terminated name spells, if it is one.
fn parse_pid(name: &[u8]) -> Option<Pid> {
    let name = name.split(|&b| b == 0).next()?;
    if name.is_empty() || name.len() > 10 {
        return None;
    }
    let mut pid: i64 = 0;
    for &b in name {
        if !b.is_ascii_digit() {
            return None;
        }
        pid = pid * 10 + i64::from(b - b'0');
    }
    i32::try_from(pid).ok().filter(|&pid| pid > 0).map(Pid::from_raw)
}

/// What `waitid(WNOWAIT)` says of a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// Not a child of this process (or already reaped).
    NotMine,
    /// A child that is running (or stopped).
    Running,
    /// A child that has exited and is not reaped: a zombie.
    Exited,
}

fn probe(pid: Pid) -> Probe {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    loop {
        return match waitid(Id::Pid(pid), flags) {
            Ok(WaitStatus::StillAlive) => Probe::Running,
            Ok(_) => Probe::Exited,
            Err(Errno::EINTR) => continue,
            Err(_) => Probe::NotMine,
        };
    }
}

/// Which children [`collapse`] ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// Those no [`Spawner`](crate::Spawner) tracks: adopted orphans ([`sweep`](super::sweep)).
    Untracked,
    /// Every child ([`end_all_descendants`](super::end_all_descendants)); tracked zombies are
    /// left to their spawner.
    All,
}

/// What [`end_child`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Nothing,
    /// A running child was sent `SIGKILL`: it is still to be reaped.
    Killed,
}

/// Kills `pid` (and its process group) if it is a running child within `scope`, or kills the
/// group of a zombie child and reaps it if it is untracked. Under the gate (held for writing by
/// the caller) and the tracked set's lock: nothing reaps it meanwhile, so the pid (and the group
/// it leads) is still this child's when the signal goes out.
fn end_child(pid: Pid, scope: Scope) -> Ended {
    // The common case, a pid that is not a child, takes no lock.
    if probe(pid) == Probe::NotMine {
        return Ended::Nothing;
    }
    let tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
    let is_tracked = tracked.as_ref().is_some_and(|set| set.contains(&pid.as_raw()));
    if is_tracked && scope == Scope::Untracked {
        return Ended::Nothing;
    }
    match probe(pid) {
        Probe::NotMine => Ended::Nothing,
        Probe::Running => {
            let _ = killpg(pid, Signal::SIGKILL);
            match kill(pid, Signal::SIGKILL) {
                Ok(()) => Ended::Killed,
                // EPERM: it changed its uid and cannot be made to exit; not waited for.
                Err(_) => Ended::Nothing,
            }
        }
        Probe::Exited => {
            // The zombie still holds its pgid: this reaches only its own group.
            let _ = killpg(pid, Signal::SIGKILL);
            if !is_tracked {
                let _ = waitpid(pid, Some(WaitPidFlag::WNOHANG));
            }
            Ended::Nothing
        }
    }
}

/// Kills every child of this process within `scope`, and the process group each leads, and
/// reaps the untracked ones, round after round (the children of a killed child come back to a
/// subreaper) until a round finds no running one left or `limit` passes. Takes no descriptor,
/// no memory and no thread: `/proc` and its buffer were reserved by [`reserve`]. The caller
/// holds the gate for writing.
///
/// Returns how many running children it sent `SIGKILL` (one killed in one round and still
/// dying in the next counts twice).
pub(super) fn collapse(scope: Scope, limit: Duration) -> usize {
    let end = Instant::now() + limit;
    let me = Pid::this();
    let mut signalled = 0;
    let mut listing = listing();
    loop {
        let mut running = 0;
        if scope == Scope::All {
            // Found even without `/proc`: the tracked children, and with them their groups.
            let tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
            for &pid in tracked.iter().flatten() {
                let pid = Pid::from_raw(pid);
                let _ = killpg(pid, Signal::SIGKILL);
                if probe(pid) == Probe::Running && kill(pid, Signal::SIGKILL).is_ok() {
                    running += 1;
                }
            }
        }
        for_each_pid(&mut listing, |pid| {
            if pid != me && end_child(pid, scope) == Ended::Killed {
                running += 1;
            }
        });
        signalled += running;
        if running == 0 || Instant::now() >= end {
            return signalled;
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// The tracked zombie that [`reap_adopted`] found first on its last call, if any (0).
static HIDER: AtomicI32 = AtomicI32::new(0);

/// Reaps every untracked child of this process that has exited: the orphans adopted as the
/// subreaper, as they exit, rather than when the guest ends. Children a
/// [`Spawner`](crate::Spawner) tracks are left alone (their exit status is its to collect), and
/// so is every running child. Returns how many it reaped.
///
/// Cheap when there is nothing to do: one `waitid(P_ALL, WNOWAIT)`, which names the first
/// zombie child if there is one, without the gate. When that one is tracked, it may hide others
/// behind it; the children are looked at one by one (a walk of `/proc`) only if it was the
/// first zombie on the previous call too: a child a guest has not waited for yet. A child that
/// has just exited in a spawn loop is gone by the next call, and costs no walk.
pub(super) fn reap_adopted() -> usize {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    let first_zombie = || loop {
        match waitid(Id::All, flags) {
            Ok(status) => return status.pid(),
            Err(Errno::EINTR) => {}
            // ECHILD: no child at all.
            Err(_) => return None,
        }
    };
    if first_zombie().is_none() {
        return 0;
    }
    let _gate = super::GATE.write().unwrap_or_else(PoisonError::into_inner);
    let mut reaped = 0;
    // Bounded, so that a flood of exits cannot keep the gate (and so every spawn) closed.
    for _ in 0..1024 {
        let Some(pid) = first_zombie() else { return reaped };
        let tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
        if tracked.as_ref().is_some_and(|set| set.contains(&pid.as_raw())) {
            break;
        }
        if probe(pid) == Probe::Exited && waitpid(pid, Some(WaitPidFlag::WNOHANG)).is_ok() {
            reaped += 1;
        }
    }
    // The first zombie is tracked (or there were many): look at every child, if it stays.
    if let Some(pid) = first_zombie() {
        let hider = pid.as_raw();
        if HIDER.swap(hider, Ordering::Relaxed) != hider {
            return reaped;
        }
    }
    let mut listing = listing();
    for_each_pid(&mut listing, |pid| {
        if probe(pid) != Probe::Exited {
            return;
        }
        let tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
        if !tracked.as_ref().is_some_and(|set| set.contains(&pid.as_raw()))
            && probe(pid) == Probe::Exited
            && waitpid(pid, Some(WaitPidFlag::WNOHANG)).is_ok()
        {
            reaped += 1;
        }
    });
    reaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_entry_names_are_pids_or_nothing() {
        assert_eq!(parse_pid(b"1\0"), Some(Pid::from_raw(1)));
        assert_eq!(parse_pid(b"4194304\0\0\0"), Some(Pid::from_raw(4_194_304)));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
        assert_eq!(parse_pid(b"0\0"), None);
        assert_eq!(parse_pid(b"12a\0"), None);
        assert_eq!(parse_pid(b"99999999999\0"), None);
    }

    /// Waits (up to 10 s) until `pid` is a zombie child.
    fn wait_exited(pid: Pid) {
        let end = Instant::now() + Duration::from_secs(10);
        while probe(pid) != Probe::Exited {
            assert!(Instant::now() < end, "{pid} never exited");
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// An untracked zombie (an adopted orphan, here a child std started) is reaped; a tracked
    /// one (tracked as a spawner tracks its children: under the gate) is not, whether it comes
    /// first among the children (hiding the other from `waitid(P_ALL)`) or second, and its exit
    /// status is still there for its spawner to collect.
    #[test]
    fn reap_adopted_takes_untracked_zombies_and_leaves_tracked_ones() {
        // As `contain_descendants` does: the look at every child needs `/proc`.
        reserve();
        for tracked_first in [true, false] {
            let spawn_tracked = || {
                let _gate = super::super::spawn_gate().unwrap();
                let child = std::process::Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
                super::super::track(Pid::from_raw(child.id().cast_signed()));
                child
            };
            let spawn_untracked = || std::process::Command::new("sh").args(["-c", "exit 4"]).spawn().unwrap();
            let (tracked, untracked) = if tracked_first {
                let tracked = spawn_tracked();
                (tracked, spawn_untracked())
            } else {
                let untracked = spawn_untracked();
                (spawn_tracked(), untracked)
            };
            let tracked_pid = Pid::from_raw(tracked.id().cast_signed());
            let untracked_pid = Pid::from_raw(untracked.id().cast_signed());
            wait_exited(tracked_pid);
            wait_exited(untracked_pid);
            // A tracked zombie found first is looked past on the second call.
            assert!(reap_adopted() + reap_adopted() >= 1);
            assert_eq!(probe(untracked_pid), Probe::NotMine, "the untracked zombie was not reaped");
            assert_eq!(probe(tracked_pid), Probe::Exited, "the tracked zombie was reaped");
            let raw = super::super::reap_tracked(tracked_pid).unwrap().expect("the tracked zombie's status");
            assert_eq!(WaitStatus::from_raw(tracked_pid, raw.status), Ok(WaitStatus::Exited(tracked_pid, 3)));
        }
    }

    #[test]
    fn the_held_proc_lists_this_process() {
        reserve();
        let me = Pid::this();
        let mut found = false;
        let mut count = 0;
        assert!(for_each_pid(&mut listing(), |pid| {
            found |= pid == me;
            count += 1;
        }));
        assert!(found, "this process is not among {count} pids listed");
        // Listed again from the start.
        let mut again = false;
        assert!(for_each_pid(&mut listing(), |pid| again |= pid == me));
        assert!(again);
    }
}

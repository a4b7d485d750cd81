//! Containment: no descendant of a child outlives the guest that started it.
//!
//! Killing a child's process group misses every process that left the group: a `setsid()`
//! (daemons, `nohup`-style launchers, agents started by git, ssh or gpg), a `setpgid()`, a
//! double fork. This module finds descendants by their parent links in `/proc`, stops them
//! (`SIGSTOP`, so that none can fork while the tree is walked), kills them (`SIGKILL`, which
//! also ends stopped processes and cannot be caught or ignored) and reaps the ones that became
//! children of this process. Every signal goes through a pidfd opened while the process was
//! still a known descendant, so a signal never reaches a process that reused a pid.
//!
//! Three levels, from cheapest to widest:
//!
//! - Always on: before a running child's process group is killed (by
//!   [`Spawner::kill_all`](crate::Spawner::kill_all), a dropped [`Spawner`](crate::Spawner) or
//!   a dropped [`Child`](crate::Child)), every process below the child is killed too, whatever
//!   its session. This needs
//!   no process-wide setting, but only reaches descendants still attached to the child: a
//!   process whose parent already exited was reparented away.
//! - [`contain_descendants`] (process-wide opt-in): makes this process a child subreaper, so
//!   orphans of its descendants are reparented to it instead of to init, and lets [`sweep`]
//!   kill and reap every child of the process that no [`Spawner`](crate::Spawner) tracks. The
//!   `wrt` CLI opts in; a library embedding wrt opts in only if every child of the process is
//!   wrt's to kill.
//! - [`end_all_descendants`]: everything below this process, tracked children included, and
//!   no spawn after it. This is what a termination signal runs ([`end_on_signals`]).
//!
//! The spawn path pays for none of this: it takes a read lock that only a sweep holds for
//! writing, and records the pid. The `/proc` walks run when a guest ends and on signals.
//!
//! Cleanup holds when the process is out of descriptors, as when a guest has opened files
//! until `EMFILE`: the walk above needs a descriptor per process, but what it cannot reach is
//! ended by rounds that need none: `/proc` is opened once, up front, the buffer
//! for its entries is static, and each direct child of the process is signalled by pid, which
//! it holds until it is reaped. As the subreaper, the process gets back the children of each
//! child it kills, so round after round ends every descendant. With [`contain_descendants`],
//! a thread started with the first spawn also reaps adopted orphans as they exit (every
//! [`REAP_EVERY`]), so that a guest's children cannot pile up zombies holding pids.
//!
//! # Platform-specific behavior
//!
//! Linux only: `PR_SET_CHILD_SUBREAPER` (Linux ≥ 3.4), pidfds (Linux ≥ 5.3) and `/proc`.
//! Without pidfds, descendants are found but not signalled: their pids could have been reused.

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::Pid;

use crate::sys::{RawExit, is_ignored, pidfd_open, pidfd_send_signal, termination, wait4_nohang};

mod direct;

use self::direct::Scope;

/// Held for reading from just before a child is created until its pid is tracked; held for
/// writing by a sweep, which therefore never mistakes a child being spawned for an orphan.
static GATE: RwLock<()> = RwLock::new(());

/// Pids of the children every spawner of this process tracks, until they are reaped.
static TRACKED: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// Pids of child views' processes (their init and starter): tracked, so never swept or
/// reaped as orphans, but not kept with what lies below them, as tracked children are: the
/// orphans reparented to a view's init are ended like any other.
static THROUGH: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// Whether [`contain_descendants`] ran: every untracked child of the process is an orphan to
/// sweep.
static CONTAINED: Mutex<bool> = Mutex::new(false);

/// How long a sweep waits for killed processes to be reaped before it gives up on them (a
/// process stuck in uninterruptible sleep dies only when the kernel lets it).
const REAP_LIMIT: Duration = Duration::from_secs(2);

/// How many times a sweep walks the process tree before it kills what it has found.
const MAX_ROUNDS: usize = 64;

/// How long a sweep waits for a process it sent `SIGSTOP` to stop.
const STOP_LIMIT: Duration = Duration::from_millis(200);

/// How often the reaper thread of [`contain_descendants`] reaps the orphans that have exited.
pub const REAP_EVERY: Duration = Duration::from_millis(50);

/// Taken by a spawn around the creation of the child. The first spawn of the process first
/// starts what the process-wide settings need once children exist ([`arm`]); if that fails,
/// nothing may be spawned.
pub(crate) fn spawn_gate() -> Result<RwLockReadGuard<'static, ()>, Errno> {
    arm()?;
    Ok(GATE.read().unwrap_or_else(PoisonError::into_inner))
}

/// The process-wide settings asked for, started by the first spawn.
#[derive(Debug, Default)]
struct Wanted {
    /// [`contain_descendants`] ran: the reaper thread.
    reaper: bool,
    /// [`end_on_signals`] ran: the thread that ends every descendant on a termination signal.
    signals: bool,
    /// The first spawn has started what was asked for; later settings start at once.
    armed: bool,
}

static WANTED: Mutex<Wanted> = Mutex::new(Wanted { reaper: false, signals: false, armed: false });

/// Starts the threads that the process-wide settings need once a child exists: the reaper of
/// [`contain_descendants`] and the signal thread of [`end_on_signals`]. A process that never
/// spawns never starts them (a `wrt run` of a guest that runs no program pays for neither).
fn arm() -> Result<(), Errno> {
    let mut wanted = WANTED.lock().unwrap_or_else(PoisonError::into_inner);
    if wanted.armed {
        return Ok(());
    }
    let started = |result: io::Result<()>| result.map_err(|e| e.raw_os_error().map_or(Errno::EAGAIN, Errno::from_raw));
    if wanted.reaper {
        started(start_reaper())?;
    }
    if wanted.signals {
        started(start_signal_thread())?;
    }
    wanted.armed = true;
    Ok(())
}

/// Starts now what [`contain_descendants`] and [`end_on_signals`] would start with the first
/// spawn: for a process that also starts children of its own, without a
/// [`Spawner`](crate::Spawner), which a termination signal must end too.
///
/// # Errors
///
/// A thread or the signal pipe could not be made.
pub fn expect_children() -> io::Result<()> {
    arm().map_err(io::Error::from)
}

/// Records that `setting` is wanted, and starts it now if the first spawn has happened.
fn want(setting: impl FnOnce(&mut Wanted) -> &mut bool, start: fn() -> io::Result<()>) -> io::Result<()> {
    let mut wanted = WANTED.lock().unwrap_or_else(PoisonError::into_inner);
    let armed = wanted.armed;
    let flag = setting(&mut wanted);
    if *flag {
        return Ok(());
    }
    if armed {
        start()?;
    }
    *flag = true;
    Ok(())
}

/// Records a new child (called with the gate held).
pub(crate) fn track(pid: Pid) {
    TRACKED.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashSet::new).insert(pid.as_raw());
}

/// Records a process of a child view (see [`THROUGH`]), with the gate held.
pub(crate) fn track_view(pid: Pid) {
    track(pid);
    THROUGH.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(HashSet::new).insert(pid.as_raw());
}

/// Takes a process of a child view out of the pass-through set (before it is ended; it stays
/// tracked until [`untrack`]).
pub(crate) fn untrack_view(pid: Pid) {
    if let Some(set) = THROUGH.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
        set.remove(&pid.as_raw());
    }
}

fn through() -> HashSet<i32> {
    THROUGH.lock().unwrap_or_else(PoisonError::into_inner).clone().unwrap_or_default()
}

/// Reaps the tracked child `pid` if it has exited (`wait4` with `WNOHANG`), and forgets it once
/// reaped. Under the tracked set's lock, where [`direct`] looks at a child before it signals it
/// by pid: the pid it saw is not reaped (and reused) in between.
pub(crate) fn reap_tracked(pid: Pid) -> Result<Option<RawExit>, Errno> {
    let mut tracked = TRACKED.lock().unwrap_or_else(PoisonError::into_inner);
    let raw = wait4_nohang(pid)?;
    if raw.is_some()
        && let Some(set) = tracked.as_mut()
    {
        set.remove(&pid.as_raw());
    }
    Ok(raw)
}

/// Forgets a child that is not reaped (its handle is gone).
pub(crate) fn untrack(pid: Pid) {
    if let Some(set) = TRACKED.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
        set.remove(&pid.as_raw());
    }
}

fn tracked() -> HashSet<i32> {
    TRACKED.lock().unwrap_or_else(PoisonError::into_inner).clone().unwrap_or_default()
}

/// Makes this process the child subreaper of all its descendants
/// ([`PR_SET_CHILD_SUBREAPER`](https://man7.org/linux/man-pages/man2/PR_SET_CHILD_SUBREAPER.2const.html)),
/// and lets [`sweep`] kill and reap every child of the process that no
/// [`Spawner`](crate::Spawner) started.
///
/// With the first spawn of the process, a thread starts that reaps, every [`REAP_EVERY`], the
/// adopted orphans that have exited (children a [`Spawner`](crate::Spawner) tracks are its own
/// to reap). `/proc` is opened now, once, for cleanups that must work when the process has no
/// descriptor left.
///
/// This is a setting of the whole process, and it stays on. Call it only if every child the
/// process has is wrt's to kill and reap: the `wrt` CLI does; a program embedding wrt that
/// starts children of its own must not, or a sweep ends them too and the reaper takes their
/// exit status. Without it, the descendants of a child that exited are reparented to init (or
/// the nearest subreaper above this process) and escape.
///
/// # Errors
///
/// The `prctl` error (none is expected on Linux ≥ 3.4), or, when a child was spawned already,
/// the reaper thread could not start.
#[doc(alias = "PR_SET_CHILD_SUBREAPER")]
pub fn contain_descendants() -> io::Result<()> {
    let mut contained = CONTAINED.lock().unwrap_or_else(PoisonError::into_inner);
    if *contained {
        return Ok(());
    }
    nix::sys::prctl::set_child_subreaper(true)?;
    direct::reserve();
    want(|w| &mut w.reaper, start_reaper)?;
    *contained = true;
    Ok(())
}

/// Starts the thread that reaps adopted orphans as they exit, with every signal blocked (a
/// termination signal is handled by whichever other thread the kernel picks).
fn start_reaper() -> io::Result<()> {
    let mask = SigSet::thread_get_mask()?;
    SigSet::all().thread_block()?;
    let started = thread::Builder::new().name("wrt-reaper".into()).spawn(|| {
        loop {
            thread::sleep(REAP_EVERY);
            direct::reap_adopted();
        }
    });
    mask.thread_set_mask()?;
    started.map(drop)
}

/// Whether [`contain_descendants`] ran in this process.
pub fn is_containing() -> bool {
    *CONTAINED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills and reaps every descendant of this process that is not a child a
/// [`Spawner`](crate::Spawner) tracks or below one: the orphans that guests' children left
/// behind (a `setsid` daemon, a double fork). Does nothing unless [`contain_descendants`] ran.
///
/// The runtime calls it whenever a guest ends. Orphans cannot be told apart by guest: with
/// several guests in one process, the end of any guest ends them all.
///
/// Works without a free descriptor, as [`end_all_descendants`] does.
///
/// Returns how many times it sent `SIGKILL` (a process still dying in a later round of the
/// cleanup counts again).
pub fn sweep() -> usize {
    // Before the first spawn, the process has no child to look for (the walk of `/proc` costs
    // a read of every process's `stat`).
    if !is_containing() || !WANTED.lock().unwrap_or_else(PoisonError::into_inner).armed {
        return 0;
    }
    let _gate = GATE.write().unwrap_or_else(PoisonError::into_inner);
    let keep = tracked();
    let me = Pid::this();
    // The walk stops each subtree before it kills it; what it could not reach (no descriptor
    // left), the rounds of `direct` end, and they reap every orphan.
    let killed = kill_below(me, &keep);
    killed + direct::collapse(Scope::Untracked, REAP_LIMIT)
}

/// Kills every descendant of this process, tracked children included, reaps those that are not
/// tracked, and stops any further spawn: the calling thread returns, but every later spawn and
/// [`sweep`] of the process blocks forever (a guest that ends meanwhile waits there instead of
/// reporting how it ended). For a process about to exit (a termination signal).
///
/// With [`contain_descendants`] (or [`end_on_signals`]) called before, it works without a free
/// descriptor: every child is killed by pid, its process group too, and as the subreaper the
/// process gets back and kills their children in turn. Without the subreaper, a descendant
/// whose parent is killed before it is reached escapes when no descriptor is left.
///
/// Returns how many times it sent `SIGKILL` (a process still dying in a later round of the
/// cleanup counts again).
pub fn end_all_descendants() -> usize {
    let gate = GATE.write().unwrap_or_else(PoisonError::into_inner);
    // Never released: nothing may start after the last sweep.
    std::mem::forget(gate);
    let killed = kill_below(Pid::this(), &HashSet::new());
    killed + direct::collapse(Scope::All, REAP_LIMIT)
}

/// Returns at once, unless a termination signal is ending the process (the thread of
/// [`end_on_signals`] has begun [`end_all_descendants`]); then blocks forever, while that
/// thread exits with 128 + the signal. For the last step of a process before it exits: a guest
/// whose children died of that cleanup ends with a status of its own (a trap, a failure), which
/// must not win the race against the signal's.
pub fn hold_exit_while_ending() {
    // The cleanup takes the gate and never gives it back; a sweep holds it for a moment.
    drop(GATE.read().unwrap_or_else(PoisonError::into_inner));
}

/// Kills every process below `root` (not `root` itself), in any session or group. Used before
/// a running child's group is killed.
pub(crate) fn kill_tree(root: Pid) -> usize {
    kill_below(root, &HashSet::new())
}

/// The signals [`end_on_signals`] handles.
const TERMINATION: [Signal; 3] = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP];

/// Makes `SIGTERM`, `SIGINT` and `SIGHUP` end the process cleanly, with 128 + the signal
/// number as its exit status: from the first spawn of the process on, a thread runs
/// [`end_all_descendants`] first; before it, there is nothing to end and the process exits at
/// once, without a thread waiting for signals.
///
/// A signal that is ignored when this is called (`SIG_IGN` inherited, as under `nohup` or for
/// a background job of a non-interactive shell) stays ignored. The others get a handler
/// (`sigaction`, restarting interrupted system calls), which replaces any the process had.
/// Children never see it: every spawn resets every disposition.
///
/// What the cleanup needs is taken up front: `/proc` is opened now, and the thread and its pipe
/// are made by the first spawn (which fails if they cannot be), so that the cleanup works when
/// the signal finds the descriptor table full.
///
/// This is a setting of the whole process; the `wrt` CLI opts in, a library should not.
///
/// # Errors
///
/// Reading or setting a disposition failed, or, when a child was spawned already, the thread
/// could not start.
pub fn end_on_signals() -> io::Result<()> {
    let mut set = SigSet::empty();
    for signal in TERMINATION {
        if !is_ignored(signal)? {
            set.add(signal);
        }
    }
    if set.iter().next().is_none() {
        return Ok(());
    }
    // Taken now: when the signal comes, the descriptor table may be full.
    direct::reserve();
    // The thread first, where a child exists already: from the handler on, signals go to it.
    want(|w| &mut w.signals, start_signal_thread)?;
    termination::install(&set)?;
    Ok(())
}

/// Starts the thread that, on the first termination signal forwarded to it, ends every
/// descendant and exits with 128 + the signal number; then points the handler at it.
fn start_signal_thread() -> io::Result<()> {
    let (read, write) = termination::signal_pipe()?;
    let mask = SigSet::thread_get_mask()?;
    SigSet::all().thread_block()?;
    let started = thread::Builder::new().name("wrt-signals".into()).spawn(move || {
        loop {
            if let Some(signal) = termination::next_signal(&read) {
                end_all_descendants();
                // No destructor runs past `exit`: the process budget of every spawner (what is
                // in each group is killed, the group removed) and the children's temporary
                // directories go now.
                crate::process_budget::end_all();
                crate::private_tmp::end_all();
                std::process::exit(128 + signal as i32);
            }
        }
    });
    mask.thread_set_mask()?;
    started?;
    termination::forward_to(write);
    Ok(())
}

/// Parent links of every process, from `/proc/<pid>/stat`.
fn parents() -> HashMap<i32, i32> {
    let mut links = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return links };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Some(ppid) = parent_of(pid) {
            links.insert(pid, ppid);
        }
    }
    links
}

/// The parent of `pid`, or `None` if it is gone.
fn parent_of(pid: i32) -> Option<i32> {
    stat_fields(pid).map(|(_, ppid)| ppid)
}

/// The state letter and parent pid from `/proc/<pid>/stat`. The command name may contain
/// spaces and parentheses, so the fields are read after its last `)`.
fn stat_fields(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Every process below `root` in `links`, parents before children; the subtrees of `keep`
/// are left out.
fn descendants(links: &HashMap<i32, i32>, root: i32, keep: &HashSet<i32>, through: &HashSet<i32>) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &ppid) in links {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut seen = HashSet::from([root]);
    // Parents before their children.
    let mut parents = std::collections::VecDeque::from([root]);
    while let Some(parent) = parents.pop_front() {
        for &child in children.get(&parent).map_or(&[][..], Vec::as_slice) {
            if !seen.insert(child) {
                continue;
            }
            if through.contains(&child) {
                parents.push_back(child);
            } else if !keep.contains(&child) {
                found.push(child);
                parents.push_back(child);
            }
        }
    }
    found
}

/// Stops every process below `root` (except the subtrees of `keep`, and the processes of child
/// views, though not what lies below them) until a walk finds no new one, then kills them all.
/// Returns how many it killed.
fn kill_below(root: Pid, keep: &HashSet<i32>) -> usize {
    let root = root.as_raw();
    let through = through();
    // A process is taken only if, once its pidfd is open, its parent is still `root` or one
    // already taken: the pidfd then names that very process, never a reuse of its pid.
    let mut taken: HashMap<i32, OwnedFd> = HashMap::new();
    // Bounded: a process that keeps failing the parent check (it is being reparented) must
    // not keep the walk going forever.
    for _ in 0..MAX_ROUNDS {
        let fresh: Vec<i32> =
            descendants(&parents(), root, keep, &through).into_iter().filter(|pid| !taken.contains_key(pid)).collect();
        if fresh.is_empty() {
            break;
        }
        let mut stopped = Vec::new();
        for pid in fresh {
            let Ok(pidfd) = pidfd_open(Pid::from_raw(pid)) else { continue };
            match parent_of(pid) {
                Some(ppid) if ppid == root || taken.contains_key(&ppid) || through.contains(&ppid) => {}
                _ => continue,
            }
            if pidfd_send_signal(pidfd.as_fd(), Signal::SIGSTOP).is_ok() {
                stopped.push(pid);
            }
            taken.insert(pid, pidfd);
        }
        // A stopped process cannot fork: once all are stopped, the next walk is complete.
        wait_stopped(&stopped);
    }
    for pidfd in taken.values() {
        let _ = pidfd_send_signal(pidfd.as_fd(), Signal::SIGKILL);
    }
    taken.len()
}

/// Waits (briefly) until each of `pids` is stopped, dead or gone.
fn wait_stopped(pids: &[i32]) {
    let end = Instant::now() + STOP_LIMIT;
    for &pid in pids {
        while Instant::now() < end {
            match stat_fields(pid) {
                Some(('R' | 'S' | 'D' | 'W' | 'P' | 'I', _)) => thread::sleep(Duration::from_micros(200)),
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(pairs: &[(i32, i32)]) -> HashMap<i32, i32> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn descendants_follow_parent_links_and_skip_kept_subtrees() {
        // 1 ─ 10 ─ 11 ─ 12; 1 ─ 20 ─ 21; 1 ─ 30; 2 ─ 40
        let table = links(&[(10, 1), (11, 10), (12, 11), (20, 1), (21, 20), (30, 1), (40, 2)]);
        let mut all = descendants(&table, 1, &HashSet::new(), &HashSet::new());
        all.sort_unstable();
        assert_eq!(all, [10, 11, 12, 20, 21, 30]);
        let none = HashSet::new();
        let mut kept = descendants(&table, 1, &HashSet::from([20]), &none);
        kept.sort_unstable();
        assert_eq!(kept, [10, 11, 12, 30]);
        assert_eq!(descendants(&table, 11, &none, &none), [12]);
        assert!(descendants(&table, 12, &none, &none).is_empty());
        // A view's process (20) is passed through, kept or not: what lies below it is not.
        let mut through = descendants(&table, 1, &HashSet::from([20]), &HashSet::from([20]));
        through.sort_unstable();
        assert_eq!(through, [10, 11, 12, 21, 30]);
    }

    #[test]
    fn parents_come_before_their_children() {
        let table = links(&[(10, 1), (11, 10), (12, 11)]);
        assert_eq!(descendants(&table, 1, &HashSet::new(), &HashSet::new()), [10, 11, 12]);
    }

    #[test]
    fn stat_fields_are_read_after_the_name() {
        // This process's name is the test binary's; the fields after it are still found.
        let (state, ppid) = stat_fields(std::process::id().cast_signed()).unwrap();
        assert_eq!(ppid, nix::unistd::getppid().as_raw());
        assert!(state.is_ascii_alphabetic(), "{state}");
        assert_eq!(stat_fields(-1), None);
    }
}

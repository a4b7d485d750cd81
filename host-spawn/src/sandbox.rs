//! The child sandbox: what a started program may reach, whatever program it is.
//!
//! The policy decides *which* programs run; the sandbox bounds *what they can do*, because no
//! argument pattern can contain `sh`, `git` or `make`. Every child of a
//! [`Spawner`](crate::Spawner) with the sandbox on (`Spawner::with_sandbox`; wrt's runtime
//! turns it on for every guest) runs, and so does everything it starts in turn:
//!
//! - with **no new privileges** (`PR_SET_NO_NEW_PRIVS`) and **no capabilities** (the effective,
//!   permitted, inheritable and ambient sets emptied; with no-new-privileges `execve` grants
//!   none back, not to root either), so set-user-ID programs and a host running as root give
//!   it nothing;
//! - under a **Landlock** ruleset: read and execute the [system locations](SYSTEM_READ) a
//!   program needs to start, the policy's search path and allowed programs, and the
//!   directories given with [`ChildSandbox::read`]; read and write (but not create devices)
//!   in those given with [`ChildSandbox::write`]; nothing else. Rules hold for the canonical
//!   object, so a symlink inside a given directory that points outside gives nothing;
//! - with **no network** unless its allow rule says `network = true`: a seccomp filter
//!   refuses `socket` (every family: a named unix socket such as a container runtime's is a
//!   way out too) and `io_uring_setup`, and Landlock refuses TCP bind and connect (ABI 4);
//! - **scoped** (Landlock ABI 6, where the kernel has it): it cannot signal wrt or any process
//!   outside its own tree, nor connect to abstract unix sockets made outside it;
//! - with **no controlling terminal** (it gives up wrt's with `TIOCNOTTY`, or starts a session
//!   of its own where it cannot), in a process group of its own, and with `ioctl(TIOCSTI)`
//!   refused by the filter;
//! - with **no new namespaces** (`unshare`, `clone` with `CLONE_NEW*` and `setns` refused,
//!   `clone3` answered `ENOSYS` so that libc falls back to `clone`);
//! - with a **temporary directory of its own**, shared with the other children of the spawner
//!   and removed with everything in it when the spawner is dropped: `TMPDIR` names it, and it
//!   may read and write there (see `private_tmp`);
//! - within a **process budget** shared by every child of the spawner and their descendants:
//!   a pids control group, where the host may create one (see `process_budget`), that the
//!   child joins before `execve`; dropping the spawner kills what is left in it.
//!
//! All of it is prepared once per spawner (the ruleset descriptor, the filter) and applied in
//! the child by a handful of system calls between `clone(CLONE_VM | CLONE_VFORK)` and `execve`
//! ([`Strategy::VforkExec`](crate::Strategy::VforkExec)), which copies no page tables. A
//! thread that does nothing but start children may hold the filter itself
//! ([`Spawner::filter_on_spawning_thread`](crate::Spawner::filter_on_spawning_thread), which
//! `wrt run` uses), so that its children inherit it instead of each installing it: a confined
//! spawn then costs about 1.1× a bare `posix_spawn` in CPU time (docs/benchmarks.md).
//!
//! A kernel that cannot apply it (no Landlock, or a Landlock older than ABI 3, which cannot
//! refuse truncation) makes every spawn fail with [`SpawnError::Sandbox`](crate::SpawnError)
//! naming what is missing; nothing is downgraded silently. Turning the sandbox off is explicit:
//! [`ChildSandbox::off`], or `enabled = false` in the policy's `[sandbox]` table.
//!
//! # What remains
//!
//! A child reads every system location it is given (`/usr`, the libraries, the `/etc` files in
//! [`SYSTEM_READ`]); it sees that other processes exist (their pids, through `kill(pid, 0)`
//! where signals are not scoped) though it cannot read `/proc`; it uses CPU and memory within
//! the policy's limits, and processes within the budget where there is one; without Landlock
//! ABI 6 it can signal processes of the same user outside its tree.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::errno::Errno;
use serde::Serialize;

mod filter;
mod thread_filter;
mod view;

use self::filter::Filter;
use self::view::View;
use crate::error::{SandboxUnavailable, ViewUnavailable};
use crate::escape::shown;
use crate::policy::CompiledPolicy;
use crate::private_tmp::PrivateTmp;
use crate::process_budget::{self, ProcessBudget};
use crate::sys::Confine;
use crate::sys::landlock::{self, MIN_LANDLOCK_ABI, RulesetAttr, fs, net, scope};
use crate::sys::view::ViewProcesses;

/// The system locations every confined child may read and execute (those that exist): the
/// programs, the loader and libraries, and the files in `/etc` that programs read to start
/// (the loader's cache, locale, time zone, users and groups, name service, certificates).
/// `/etc/shadow`, `/root`, `/home`, `/proc`, `/sys` and `/tmp` are not among them.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/terminfo",
    "/etc/inputrc",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/os-release",
];

/// Devices every confined child may open: `(path, writable)`.
const DEVICES: &[(&str, bool)] =
    &[("/dev/null", true), ("/dev/zero", true), ("/dev/full", true), ("/dev/random", false), ("/dev/urandom", false)];

/// Rights on a directory (or file) a child may read and execute.
const READ: u64 = fs::EXECUTE | fs::READ_FILE | fs::READ_DIR;
/// Rights in a directory a child may read and write: every right but making character and
/// block devices and device `ioctl`s.
const WRITE: u64 = fs::known(u32::MAX) & !(fs::MAKE_CHAR | fs::MAKE_BLOCK | fs::IOCTL_DEV);

/// What the children of a [`Spawner`](crate::Spawner) may reach besides the system: the
/// directories its guest was given. On by default, with no directory.
///
/// # Examples
///
/// ```
/// use wrt_host_spawn::ChildSandbox;
///
/// let sandbox = ChildSandbox::confined().read("/srv/data").write("/srv/scratch");
/// assert!(sandbox.is_enabled());
/// assert!(!ChildSandbox::off().is_enabled());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildSandbox {
    enabled: bool,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    private_tmp: bool,
    view: bool,
}

impl Default for ChildSandbox {
    fn default() -> Self {
        Self::confined()
    }
}

impl ChildSandbox {
    /// The sandbox on, with the system locations and a temporary directory of the children's
    /// own.
    pub fn confined() -> Self {
        Self { enabled: true, read: Vec::new(), write: Vec::new(), private_tmp: true, view: true }
    }

    /// No sandbox: children run with the host's authority, limited only by the policy.
    pub fn off() -> Self {
        Self { enabled: false, read: Vec::new(), write: Vec::new(), private_tmp: false, view: false }
    }

    /// Whether confined children get a temporary directory of their own (`TMPDIR`), made on
    /// the first confined spawn and removed when the spawner is dropped (on by default).
    #[must_use]
    pub fn private_tmp(mut self, on: bool) -> Self {
        self.private_tmp = on;
        self
    }

    /// Whether confined children run in a view of their own (on by default; see `view`): the
    /// file system read-only but for the writable grants, their temporary directory at `/tmp`,
    /// a `/proc` of their own processes, System V IPC of their own. Off, they see the host's
    /// mounts (reaching only what Landlock grants), no `/proc`, and may change the metadata of
    /// files they can reach.
    #[must_use]
    pub fn view(mut self, on: bool) -> Self {
        self.view = on;
        self
    }

    /// Lets children read (and execute) beneath `dir`. Give the canonical host path.
    #[must_use]
    pub fn read(mut self, dir: impl Into<PathBuf>) -> Self {
        self.read.push(dir.into());
        self
    }

    /// Lets children read and write beneath `dir`. Give the canonical host path.
    #[must_use]
    pub fn write(mut self, dir: impl Into<PathBuf>) -> Self {
        self.write.push(dir.into());
        self
    }

    /// Whether children are confined.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The directories children may read.
    pub fn read_dirs(&self) -> &[PathBuf] {
        &self.read
    }

    /// The directories children may read and write.
    pub fn write_dirs(&self) -> &[PathBuf] {
        &self.write
    }
}

/// What a confined child gets, as `wrt policy explain` prints it and audit records carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confinement {
    /// Whether the child is confined at all.
    pub enabled: bool,
    /// Directories and files it may read, besides [`SYSTEM_READ`] and the policy's programs.
    pub read: Vec<String>,
    /// Directories it may read and write.
    pub write: Vec<String>,
    /// Whether it may open sockets.
    pub network: bool,
    /// Whether signals and abstract unix sockets are scoped to its own tree (Landlock ABI 6).
    pub scoped: bool,
    /// How many tasks the children of its spawner (and their descendants) may have at once;
    /// `None` where no pids control group can be made (the tree is unbounded).
    pub max_processes: Option<u64>,
    /// Whether it gets a temporary directory of its own (`TMPDIR`), removed with its spawner.
    pub private_tmp: bool,
    /// Whether it runs in the child view: a read-only file system but for its writable
    /// directories, its temporary directory at `/tmp`, a `/proc` of its own processes.
    pub view: bool,
}

impl Confinement {
    /// An unconfined child.
    pub(crate) fn off() -> Self {
        Self {
            enabled: false,
            read: Vec::new(),
            write: Vec::new(),
            network: true,
            scoped: false,
            max_processes: None,
            private_tmp: false,
            view: false,
        }
    }
}

/// The Landlock ABI of the running kernel (0 without Landlock), asked once.
pub fn landlock_abi() -> u32 {
    static ABI: OnceLock<u32> = OnceLock::new();
    *ABI.get_or_init(landlock::abi_version)
}

/// The sandbox a spawner applies, prepared on its first confined spawn: the rulesets (one
/// without network, one with, each built when first needed) and the filters.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// The child view, made on the first confined spawn when the sandbox has one; declared
    /// first of all, so that it ends (and with it every process in it) first.
    view: OnceLock<Option<Result<View, ViewUnavailable>>>,
    offline: OnceLock<Result<Variant, SandboxUnavailable>>,
    online: OnceLock<Result<Variant, SandboxUnavailable>>,
    /// Made on the first confined spawn; `None` where no pids group can be made.
    budget: OnceLock<Option<ProcessBudget>>,
    /// Whether this process may have a controlling terminal, found on the first confined spawn.
    terminal: OnceLock<bool>,
    /// The children's temporary directory, made on the first confined spawn (`None` when the
    /// sandbox has none, or it cannot be made); declared after `budget`, so that it is removed
    /// after the budget's group was ended.
    tmp: OnceLock<Option<PrivateTmp>>,
}

#[derive(Debug)]
struct Variant {
    ruleset: OwnedFd,
    filter: Filter,
}

impl Prepared {
    /// What the child applies, built on first use for this network setting. With
    /// `filter_on_thread`, the calling thread first installs the children's filter on itself
    /// (see `thread_filter`), unless it holds one already; the child then installs none.
    pub(crate) fn confine(
        &self,
        sandbox: &ChildSandbox,
        policy: &CompiledPolicy,
        network: bool,
        filter_on_thread: bool,
    ) -> Result<Confine<'_>, SandboxUnavailable> {
        // Before any filter of ours is on this thread: the view's thread inherits it.
        let view = self.view(sandbox, policy)?;
        let variant = self.variant(sandbox, policy, network)?;
        if filter_on_thread && thread_filter::held().is_none() {
            let thread_network = policy.any_rule_allows_network();
            let held = self.variant(sandbox, policy, thread_network)?;
            thread_filter::hold(&held.filter, thread_network).map_err(SandboxUnavailable::ThreadFilter)?;
        }
        // A child in the view inherits the starter's filter, else its thread's.
        let held = match view {
            Some(view) => Some(view.filter_network()),
            None => thread_filter::held(),
        };
        let installs = thread_filter::child_installs(held, network)
            .map_err(|thread_filter::ThreadTooStrict| SandboxUnavailable::ThreadWithoutNetwork)?;
        let budget = self.budget.get_or_init(|| ProcessBudget::create(policy.sandbox.max_processes));
        Ok(Confine {
            ruleset: std::os::fd::AsRawFd::as_raw_fd(&variant.ruleset),
            filter: installs.then(|| variant.filter.program()),
            budget: budget.as_ref().map(ProcessBudget::join_fd),
            terminal: *self.terminal.get_or_init(may_have_terminal),
        })
    }

    /// The processes of the child view that [`confine`](Self::confine) made, which start the
    /// confined children; `None` without a view.
    pub(crate) fn view_processes(&self) -> Option<&ViewProcesses> {
        match self.view.get() {
            Some(Some(Ok(view))) => view.processes(),
            _ => None,
        }
    }

    /// The child view, made on first use; `None` when the sandbox or the policy turned it off.
    fn view(&self, sandbox: &ChildSandbox, policy: &CompiledPolicy) -> Result<Option<&View>, SandboxUnavailable> {
        let made = self.view.get_or_init(|| {
            wants_view(sandbox, policy).then(|| {
                let read = sandbox.read.iter().chain(&policy.sandbox.read).map(PathBuf::as_path);
                let write = sandbox.write.iter().chain(&policy.sandbox.write).map(PathBuf::as_path);
                View::create(read, write, policy.working_dirs(), self.tmp(sandbox), policy.any_rule_allows_network())
            })
        });
        match made {
            None => Ok(None),
            Some(Ok(view)) => Ok(Some(view)),
            Some(Err(unavailable)) => Err(SandboxUnavailable::View(unavailable.clone())),
        }
    }

    /// The `TMPDIR` of a confined child: `/tmp` where the view mounts the children's
    /// temporary directory there, else its host path.
    pub(crate) fn child_tmp(&self, sandbox: &ChildSandbox) -> Option<&Path> {
        let covered = self.covers_tmp();
        self.tmp(sandbox).map(|tmp| if covered { Path::new("/tmp") } else { tmp })
    }

    /// Whether the view (made already) mounts the children's directory over `/tmp`: a path
    /// under the host's `/tmp` then names something else in the view.
    pub(crate) fn covers_tmp(&self) -> bool {
        matches!(self.view.get(), Some(Some(Ok(view))) if view.tmp_covered())
    }

    /// The children's temporary directory, made on first use; `None` when the sandbox has none,
    /// or when the host's temporary directory cannot hold it (a container image without
    /// `/tmp`): then children run without one, as unconfined ones do, and their records say so
    /// (`private_tmp: false`). Nothing they could reach is given up.
    pub(crate) fn tmp(&self, sandbox: &ChildSandbox) -> Option<&Path> {
        let made = self.tmp.get_or_init(|| sandbox.private_tmp.then(|| PrivateTmp::create().ok()).flatten());
        made.as_ref().map(PrivateTmp::path)
    }

    /// The ruleset and filter for one network setting, built on first use.
    fn variant(
        &self,
        sandbox: &ChildSandbox,
        policy: &CompiledPolicy,
        network: bool,
    ) -> Result<&Variant, SandboxUnavailable> {
        let cell = if network { &self.online } else { &self.offline };
        let tmp = self.tmp(sandbox);
        let proc_dir = match self.view.get() {
            Some(Some(Ok(view))) => view.proc_dir(),
            _ => None,
        };
        cell.get_or_init(|| build(sandbox, policy, network, tmp, proc_dir)).as_ref().map_err(Clone::clone)
    }
}

/// Whether this process may have a controlling terminal, which a confined child gives up:
/// `/dev/tty` opens only for a process that has one, and fails with `ENXIO` for one that has
/// none (wrt under CI, a service, a container). Any other failure (no `/dev/tty` here) counts
/// as "may have one", so that the child finds out for itself.
fn may_have_terminal() -> bool {
    match File::options().read(true).custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC).open("/dev/tty") {
        Ok(_) => true,
        Err(err) => err.raw_os_error() != Some(libc::ENXIO),
    }
}

/// Whether confined children of `sandbox` and `policy` run in the child view.
pub(crate) fn wants_view(sandbox: &ChildSandbox, policy: &CompiledPolicy) -> bool {
    sandbox.view && policy.sandbox.view
}

/// What a child of `sandbox` and `policy` gets, for records and `explain`.
pub(crate) fn describe(sandbox: &ChildSandbox, policy: &CompiledPolicy, network: bool) -> Confinement {
    if !sandbox.enabled || !policy.sandbox.enabled {
        return Confinement::off();
    }
    Confinement {
        enabled: true,
        read: sandbox.read.iter().chain(&policy.sandbox.read).map(shown).collect(),
        write: sandbox.write.iter().chain(&policy.sandbox.write).map(shown).collect(),
        network,
        scoped: landlock_abi() >= 6,
        max_processes: process_budget::available().then_some(policy.sandbox.max_processes),
        private_tmp: sandbox.private_tmp,
        view: wants_view(sandbox, policy),
    }
}

/// Builds the ruleset and filter for one network setting; `tmp` is the children's temporary
/// directory, `proc_dir` the view's `/proc` (which they may read).
fn build(
    sandbox: &ChildSandbox,
    policy: &CompiledPolicy,
    network: bool,
    tmp: Option<&Path>,
    proc_dir: Option<&File>,
) -> Result<Variant, SandboxUnavailable> {
    let abi = landlock_abi();
    if abi == 0 {
        return Err(SandboxUnavailable::NoLandlock);
    }
    if abi < MIN_LANDLOCK_ABI {
        return Err(SandboxUnavailable::OldLandlock { abi });
    }
    let handled = fs::known(abi);
    let attr = RulesetAttr {
        handled_access_fs: handled,
        handled_access_net: if abi >= 4 && !network { net::BIND_TCP | net::CONNECT_TCP } else { 0 },
        scoped: if abi >= 6 { scope::ABSTRACT_UNIX_SOCKET | scope::SIGNAL } else { 0 },
    };
    let ruleset = landlock::create_ruleset(&attr, abi).map_err(SandboxUnavailable::Ruleset)?;

    // The system locations, where they exist, as the objects they lead to.
    let system: Vec<PathBuf> = SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(policy.search_path.iter().cloned())
        .chain(policy.allowed_programs().map(|(_, path)| path.to_owned()))
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .collect();
    let given =
        sandbox.read.iter().chain(&policy.sandbox.read).chain(sandbox.write.iter().chain(&policy.sandbox.write));
    for path in outermost(&system, given) {
        add(&ruleset, path, READ & handled, false)?;
    }
    for &(path, writable) in DEVICES {
        let access = if writable { fs::READ_FILE | fs::WRITE_FILE | fs::TRUNCATE } else { fs::READ_FILE };
        add(&ruleset, Path::new(path), access & handled, false)?;
    }
    for dir in sandbox.read.iter().chain(&policy.sandbox.read) {
        add(&ruleset, dir, READ & handled, true)?;
    }
    for dir in sandbox.write.iter().chain(&policy.sandbox.write).map(PathBuf::as_path).chain(tmp) {
        add(&ruleset, dir, WRITE & handled, true)?;
    }
    if let Some(proc_dir) = proc_dir {
        let fail = |source| SandboxUnavailable::Path { path: PathBuf::from("/proc"), source };
        landlock::add_path_rule(ruleset.as_fd(), proc_dir.as_fd(), READ & handled).map_err(fail)?;
    }
    Ok(Variant { ruleset, filter: Filter::new(network) })
}

/// The system locations (canonical) that no other system location nor given directory (each
/// of which grants at least reading) lies above: only they need a rule. `/usr/bin`, the
/// policy's search path and its programs sit under `/usr` on most systems, and Landlock grants
/// a path what the rules on it and on every directory above it grant, so a rule for them adds
/// nothing but its cost, paid by every child, whose domain gets a copy of each rule.
fn outermost<'a>(system: &'a [PathBuf], given: impl Iterator<Item = &'a PathBuf>) -> Vec<&'a Path> {
    let above: Vec<&Path> = system.iter().chain(given).map(PathBuf::as_path).collect();
    system
        .iter()
        .map(PathBuf::as_path)
        .filter(|path| !above.iter().any(|dir| path != dir && path.starts_with(dir)))
        .collect()
}

/// Adds a rule for `path`; a missing path is skipped unless `required`.
fn add(ruleset: &OwnedFd, path: &Path, access: u64, required: bool) -> Result<(), SandboxUnavailable> {
    let fail = |source: Errno| SandboxUnavailable::Path { path: path.to_owned(), source };
    let file = match File::options().read(true).custom_flags(libc::O_PATH | libc::O_CLOEXEC).open(path) {
        Ok(file) => file,
        Err(err) if !required && err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(fail(Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO)))),
    };
    let is_dir = file.metadata().map_err(|e| fail(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))))?.is_dir();
    let access = if is_dir { access } else { access & fs::FILE };
    landlock::add_path_rule(ruleset.as_fd(), file.as_fd(), access).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_location_under_another_or_under_a_given_directory_gets_no_rule_of_its_own() {
        let system: Vec<PathBuf> =
            ["/usr", "/usr/bin", "/usr/bin/true", "/usr2/bin", "/etc/passwd", "/srv/data/tool", "/usr"]
                .map(PathBuf::from)
                .into();
        let given = [PathBuf::from("/srv/data")];
        let kept = outermost(&system, given.iter());
        assert_eq!(kept, ["/usr", "/usr2/bin", "/etc/passwd", "/usr"].map(Path::new));
    }
}

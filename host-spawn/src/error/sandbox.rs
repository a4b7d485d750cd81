//! Why the child sandbox cannot be applied: the kernel lacks what it needs, a directory given
//! to it cannot be opened, or the child view cannot be made.

use std::path::PathBuf;

use nix::errno::Errno;

use crate::escape::shown;
use crate::sys::landlock::MIN_LANDLOCK_ABI;
use crate::sys::view::{ViewFailure, ViewStep};

/// Why the sandbox cannot be applied; every confined spawn fails with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxUnavailable {
    /// The kernel has no Landlock, or it is disabled.
    #[error(
        "the child sandbox needs Landlock (Linux ≥ 5.19 with Landlock enabled), which this kernel lacks; \
         turn the sandbox off explicitly to run children unconfined (`--child-sandbox off`, \
         `[sandbox] enabled = false`)"
    )]
    NoLandlock,
    /// The kernel's Landlock is older than [`MIN_LANDLOCK_ABI`].
    #[error(
        "the child sandbox needs Landlock ABI {MIN_LANDLOCK_ABI} (refusing truncation), and this kernel has ABI {abi}; \
         turn the sandbox off explicitly to run children unconfined (`--child-sandbox off`, \
         `[sandbox] enabled = false`)"
    )]
    OldLandlock {
        /// The kernel's ABI.
        abi: u32,
    },
    /// A directory given to the sandbox cannot be opened.
    #[error("the child sandbox cannot open `{}`: {source}", shown(.path))]
    Path {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: Errno,
    },
    /// The child view cannot be made.
    #[error(transparent)]
    View(#[from] ViewUnavailable),
    /// Building the Landlock ruleset failed.
    #[error("the child sandbox's Landlock ruleset cannot be built: {0}")]
    Ruleset(Errno),
    /// Installing the children's seccomp filter on the spawning thread failed
    /// ([`Spawner::filter_on_spawning_thread`](crate::Spawner::filter_on_spawning_thread)).
    #[error("the child sandbox cannot install its seccomp filter on the spawning thread: {0}")]
    ThreadFilter(Errno),
    /// The spawning thread holds the children's no-network filter, and the child's rule allows
    /// the network: no filter can be taken back.
    #[error(
        "this thread holds the no-network seccomp filter of the children it started before \
         (`filter_on_spawning_thread`), so it cannot start a child whose rule allows the network; \
         start that child from another thread"
    )]
    ThreadWithoutNetwork,
}

/// Why the child view cannot be made; every confined spawn of the spawner fails with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}; {FALLBACK}", describe(.0))]
pub struct ViewUnavailable(pub(crate) ViewFailure);

/// How to run without the view, said in every [`ViewUnavailable`].
const FALLBACK: &str = "turn the child view off explicitly to run confined children in the host's view of the \
    system (`--child-view off`, `[sandbox] view = false`): they then reach no `/proc`, share the host's `/tmp` \
    only through `TMPDIR`, and can change the metadata of files they can reach";

fn describe(failure: &ViewFailure) -> String {
    let ViewFailure { step, errno, path } = failure;
    let at = path.as_ref().map(|p| format!(" `{}`", shown(p))).unwrap_or_default();
    match step {
        ViewStep::Namespaces => {
            let why = match *errno {
                Errno::ENOSPC => "the limit on user namespaces (`user.max_user_namespaces`) is reached or 0",
                Errno::EPERM => {
                    "unprivileged user namespaces disabled (`kernel.unprivileged_userns_clone`, an AppArmor \
                     restriction), or a container or seccomp profile that forbids them"
                }
                _ => "the kernel lacks one of them",
            };
            format!(
                "the child view needs new user, mount, PID and IPC namespaces, which this host refuses ({errno}: {why})"
            )
        }
        ViewStep::IdMaps => format!("the child view cannot map the host's user into its user namespace ({errno})"),
        ViewStep::Private => format!("the child view cannot make its mounts private ({errno})"),
        ViewStep::Copy => format!("the child view cannot copy the granted tree{at} ({errno})"),
        ViewStep::ReadOnly => format!("the child view cannot make the file system read-only{at} ({errno})"),
        ViewStep::Proc => format!(
            "the child view cannot mount a `/proc` of its own ({errno}: a host whose `/proc` is partly hidden, \
             as in many containers, refuses it)"
        ),
        ViewStep::Attach => format!("the child view cannot mount{at} ({errno})"),
        ViewStep::Starter => format!("the child view's starter cannot join its namespaces ({errno})"),
        ViewStep::Ended => format!("the child view's init ended before the view was made ({errno})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_names_the_fallback() {
        let failure = ViewFailure { step: ViewStep::Namespaces, errno: Errno::EPERM, path: None };
        let message = ViewUnavailable(failure).to_string();
        assert!(message.contains("user, mount, PID and IPC namespaces"), "{message}");
        assert!(message.contains("--child-view off") && message.contains("view = false"), "{message}");
    }
}

//! How a child process is created, and when `posix_spawn` cannot be used.

use std::fmt;

use serde::Serialize;

use crate::sys::PosixSpawnSupport;

/// How a child process is created.
///
/// [`Spawner`](crate::Spawner) prefers one strategy (by default [`Strategy::PosixSpawn`]) and
/// falls back to [`Strategy::ForkExec`] when the request needs something `posix_spawn` cannot
/// express, unless strict mode is on. Every [`Child`](crate::Child) and
/// [`ChildOutcome`](crate::ChildOutcome) says which strategy ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[non_exhaustive]
pub enum Strategy {
    /// `posix_spawn`: glibc ≥ 2.24 uses `clone(CLONE_VM | CLONE_VFORK)`, so no page tables are
    /// copied, however large the host is.
    #[default]
    #[serde(rename = "posix_spawn")]
    PosixSpawn,
    /// `fork` + `execve`, for resource limits on the child. The child makes only
    /// async-signal-safe calls on data prepared before the fork. Costs a copy of the host's
    /// page tables (memory marked `MADV_DONTFORK` excepted).
    #[serde(rename = "fork-exec")]
    ForkExec,
    /// `clone(CLONE_VM | CLONE_VFORK)` + `execve`, as glibc's `posix_spawn` is written, but
    /// running the child sandbox's set-up (and resource limits) before `execve`. No page
    /// tables are copied. The strategy of every confined child unless fork-exec is preferred.
    #[serde(rename = "vfork-exec")]
    VforkExec,
}

impl Strategy {
    /// `"posix_spawn"`, `"fork-exec"` or `"vfork-exec"`, as in audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PosixSpawn => "posix_spawn",
            Self::ForkExec => "fork-exec",
            Self::VforkExec => "vfork-exec",
        }
    }

    /// `"posix-spawn"`, `"fork-exec"` or `"vfork-exec"`, as command lines spell it
    /// (`--spawn-strategy`).
    pub fn flag_value(self) -> &'static str {
        match self {
            Self::PosixSpawn => "posix-spawn",
            Self::ForkExec => "fork-exec",
            Self::VforkExec => "vfork-exec",
        }
    }
}

/// `posix-spawn`, `fork-exec` and `vfork-exec` as command-line values (the `clap` feature). The values carry
/// no help of their own: the flag that takes them explains them.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Strategy {
    fn value_variants<'a>() -> &'a [Self] {
        &[Self::PosixSpawn, Self::ForkExec, Self::VforkExec]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.flag_value()))
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `posix_spawn` cannot do for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unsupported {
    /// Resource limits on the child: `posix_spawn` has no attribute for them.
    Rlimits,
    /// `posix_spawn_file_actions_addchdir_np` is missing (glibc < 2.29).
    Chdir,
    /// `posix_spawn_file_actions_addclosefrom_np` is missing (glibc < 2.34), so descriptors the
    /// host opened without `O_CLOEXEC` would leak into the child.
    CloseFrom,
    /// The child sandbox: `posix_spawn` runs no code of ours before `execve`.
    Sandbox,
    /// The child view: only vfork-exec starts a child in it.
    View,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Rlimits => "resource limits need the fork-exec strategy",
            Self::Chdir => "this libc has no `posix_spawn_file_actions_addchdir_np`",
            Self::CloseFrom => "this libc has no `posix_spawn_file_actions_addclosefrom_np`",
            Self::Sandbox => {
                "posix_spawn cannot confine a child (turn the child sandbox off, or let wrt pick the strategy)"
            }
            Self::View => {
                "fork-exec cannot start a child in the child view (turn the view off, or let wrt pick the strategy)"
            }
        })
    }
}

/// Picks the strategy for one request.
///
/// A confined child runs under fork-exec when that is preferred and it has no view, else under
/// vfork-exec (which also applies resource limits). `Err` only in strict mode: the preferred
/// strategy cannot run the request.
pub(crate) fn choose(
    preferred: Strategy,
    strict: bool,
    needs_rlimits: bool,
    confined: bool,
    in_view: bool,
    support: PosixSpawnSupport,
) -> Result<Strategy, Unsupported> {
    match preferred {
        Strategy::ForkExec if confined && in_view && strict => return Err(Unsupported::View),
        Strategy::ForkExec if confined && in_view => return Ok(Strategy::VforkExec),
        Strategy::ForkExec | Strategy::VforkExec => return Ok(preferred),
        Strategy::PosixSpawn if confined && strict => return Err(Unsupported::Sandbox),
        Strategy::PosixSpawn if confined => return Ok(Strategy::VforkExec),
        Strategy::PosixSpawn => {}
    }
    let missing = if needs_rlimits {
        Some(Unsupported::Rlimits)
    } else if !support.chdir {
        Some(Unsupported::Chdir)
    } else if !support.closefrom {
        Some(Unsupported::CloseFrom)
    } else {
        None
    };
    match missing {
        None => Ok(Strategy::PosixSpawn),
        Some(reason) if strict => Err(reason),
        Some(_) => Ok(Strategy::ForkExec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: PosixSpawnSupport = PosixSpawnSupport { chdir: true, closefrom: true };

    #[test]
    fn posix_spawn_by_default() {
        assert_eq!(choose(Strategy::PosixSpawn, false, false, false, false, FULL), Ok(Strategy::PosixSpawn));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, false, false, FULL), Ok(Strategy::PosixSpawn));
    }

    #[test]
    fn rlimits_fall_back_unless_strict() {
        assert_eq!(choose(Strategy::PosixSpawn, false, true, false, false, FULL), Ok(Strategy::ForkExec));
        assert_eq!(choose(Strategy::PosixSpawn, true, true, false, false, FULL), Err(Unsupported::Rlimits));
    }

    #[test]
    fn old_libc_falls_back_unless_strict() {
        let no_chdir = PosixSpawnSupport { chdir: false, closefrom: true };
        let no_closefrom = PosixSpawnSupport { chdir: true, closefrom: false };
        assert_eq!(choose(Strategy::PosixSpawn, false, false, false, false, no_chdir), Ok(Strategy::ForkExec));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, false, false, no_chdir), Err(Unsupported::Chdir));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, false, false, no_closefrom), Err(Unsupported::CloseFrom));
    }

    #[test]
    fn fork_exec_runs_everything() {
        let none = PosixSpawnSupport { chdir: false, closefrom: false };
        assert_eq!(choose(Strategy::ForkExec, true, true, false, false, none), Ok(Strategy::ForkExec));
        assert_eq!(choose(Strategy::ForkExec, true, true, true, false, none), Ok(Strategy::ForkExec));
    }

    #[test]
    fn confined_children_run_under_vfork_exec_unless_fork_exec_is_preferred() {
        assert_eq!(choose(Strategy::PosixSpawn, false, false, true, false, FULL), Ok(Strategy::VforkExec));
        assert_eq!(choose(Strategy::PosixSpawn, false, true, true, false, FULL), Ok(Strategy::VforkExec));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, true, false, FULL), Err(Unsupported::Sandbox));
        assert_eq!(choose(Strategy::VforkExec, true, true, true, false, FULL), Ok(Strategy::VforkExec));
        assert_eq!(choose(Strategy::ForkExec, true, false, true, false, FULL), Ok(Strategy::ForkExec));
        // Only vfork-exec starts a child in the view.
        assert_eq!(choose(Strategy::ForkExec, false, true, true, true, FULL), Ok(Strategy::VforkExec));
        assert_eq!(choose(Strategy::ForkExec, true, true, true, true, FULL), Err(Unsupported::View));
    }
}

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
}

impl Strategy {
    /// `"posix_spawn"` or `"fork-exec"`, as in audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PosixSpawn => "posix_spawn",
            Self::ForkExec => "fork-exec",
        }
    }

    /// `"posix-spawn"` or `"fork-exec"`, as command lines spell it (`--spawn-strategy`).
    pub fn flag_value(self) -> &'static str {
        match self {
            Self::PosixSpawn => "posix-spawn",
            Self::ForkExec => "fork-exec",
        }
    }
}

/// `posix-spawn` and `fork-exec` as command-line values (the `clap` feature). The values carry
/// no help of their own: the flag that takes them explains them.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Strategy {
    fn value_variants<'a>() -> &'a [Self] {
        &[Self::PosixSpawn, Self::ForkExec]
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
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Rlimits => "resource limits need the fork-exec strategy",
            Self::Chdir => "this libc has no `posix_spawn_file_actions_addchdir_np`",
            Self::CloseFrom => "this libc has no `posix_spawn_file_actions_addclosefrom_np`",
        })
    }
}

/// Picks the strategy for one request.
///
/// `Err` only in strict mode: the preferred strategy cannot run the request.
pub(crate) fn choose(
    preferred: Strategy,
    strict: bool,
    needs_rlimits: bool,
    support: PosixSpawnSupport,
) -> Result<Strategy, Unsupported> {
    if preferred == Strategy::ForkExec {
        return Ok(Strategy::ForkExec);
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
        assert_eq!(choose(Strategy::PosixSpawn, false, false, FULL), Ok(Strategy::PosixSpawn));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, FULL), Ok(Strategy::PosixSpawn));
    }

    #[test]
    fn rlimits_fall_back_unless_strict() {
        assert_eq!(choose(Strategy::PosixSpawn, false, true, FULL), Ok(Strategy::ForkExec));
        assert_eq!(choose(Strategy::PosixSpawn, true, true, FULL), Err(Unsupported::Rlimits));
    }

    #[test]
    fn old_libc_falls_back_unless_strict() {
        let no_chdir = PosixSpawnSupport { chdir: false, closefrom: true };
        let no_closefrom = PosixSpawnSupport { chdir: true, closefrom: false };
        assert_eq!(choose(Strategy::PosixSpawn, false, false, no_chdir), Ok(Strategy::ForkExec));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, no_chdir), Err(Unsupported::Chdir));
        assert_eq!(choose(Strategy::PosixSpawn, true, false, no_closefrom), Err(Unsupported::CloseFrom));
    }

    #[test]
    fn fork_exec_runs_everything() {
        let none = PosixSpawnSupport { chdir: false, closefrom: false };
        assert_eq!(choose(Strategy::ForkExec, true, true, none), Ok(Strategy::ForkExec));
    }
}

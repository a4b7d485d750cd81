//! The step of starting a child that failed, as the child reports it to the parent (a code)
//! and as errors name it.

use std::fmt;

/// The step of starting a child that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpawnStep {
    /// Preparing attributes, file actions or the error pipe in the parent.
    Setup,
    /// `posix_spawn` itself: the failing step in the child is not reported separately.
    Spawn,
    /// `fork`.
    Fork,
    /// `setpgid` in the child.
    ProcessGroup,
    /// Resetting signal dispositions or the mask in the child.
    Signals,
    /// `setrlimit` in the child.
    Rlimit,
    /// Installing stdin, stdout or stderr.
    Stdio,
    /// Changing to the working directory.
    Chdir,
    /// Closing inherited descriptors.
    CloseFds,
    /// `execve`.
    Exec,
    /// `setsid`, or opening the pseudo-terminal as the controlling terminal, in the child.
    Session,
    /// `clone(CLONE_VM | CLONE_VFORK)` (the confined strategy).
    Clone,
    /// Joining the process budget's control group in the child.
    ProcessBudget,
    /// Dropping capabilities or setting no-new-privileges in the child.
    Privileges,
    /// Applying the Landlock ruleset in the child.
    Landlock,
    /// Installing the seccomp filter in the child.
    Seccomp,
}

impl SpawnStep {
    const ALL: [SpawnStep; 16] = [
        Self::Setup,
        Self::Spawn,
        Self::Fork,
        Self::ProcessGroup,
        Self::Signals,
        Self::Rlimit,
        Self::Stdio,
        Self::Chdir,
        Self::CloseFds,
        Self::Exec,
        Self::Session,
        Self::Clone,
        Self::ProcessBudget,
        Self::Privileges,
        Self::Landlock,
        Self::Seccomp,
    ];

    pub(crate) fn code(self) -> u32 {
        Self::ALL.iter().position(|&s| s == self).map_or(0, |i| i as u32)
    }

    pub(crate) fn from_code(code: u32) -> Self {
        usize::try_from(code).ok().and_then(|i| Self::ALL.get(i)).copied().unwrap_or(Self::Exec)
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Setup => "setup",
            Self::Spawn => "posix_spawn",
            Self::Fork => "fork",
            Self::ProcessGroup => "setpgid",
            Self::Signals => "signals",
            Self::Rlimit => "setrlimit",
            Self::Stdio => "stdio",
            Self::Chdir => "chdir",
            Self::CloseFds => "close fds",
            Self::Exec => "execve",
            Self::Session => "setsid",
            Self::Clone => "clone",
            Self::ProcessBudget => "process budget",
            Self::Privileges => "dropping privileges",
            Self::Landlock => "landlock_restrict_self",
            Self::Seccomp => "seccomp",
        }
    }
}

impl fmt::Display for SpawnStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_step_codes_round_trip() {
        for step in SpawnStep::ALL {
            assert_eq!(SpawnStep::from_code(step.code()), step);
        }
    }
}

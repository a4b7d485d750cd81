//! Resource limits (`setrlimit`) applied to a child.

use crate::sys::Rlimit;

/// Resource limits for a child process, applied with `setrlimit` between `fork` and `execve`.
///
/// Each limit sets both the soft and the hard value, so the child cannot raise it again, with
/// one exception: `cpu_seconds` sets the hard limit one second above the soft one, so that the
/// kernel sends `SIGXCPU` at the soft limit (a program may catch it and stop cleanly) and
/// `SIGKILL` one CPU second later. (With equal limits Linux sends `SIGKILL` at once.) A
/// request, its program's rule and the policy each give limits; the child gets the lowest of
/// each. Any limit makes the spawn use [`Strategy::ForkExec`](crate::Strategy::ForkExec),
/// because `posix_spawn` has no attribute for them.
///
/// Default: no limits.
///
/// # Examples
///
/// ```
/// use wrt_host_spawn::Rlimits;
///
/// let limits = Rlimits { cpu_seconds: Some(10), open_files: Some(64), ..Rlimits::default() };
/// assert!(!limits.is_empty());
/// ```
///
/// # Platform-specific behavior
///
/// `processes` is `RLIMIT_NPROC`: Linux counts every process of the child's real user, not
/// only the child's descendants, and does not enforce it for root (`CAP_SYS_RESOURCE` or
/// `CAP_SYS_ADMIN`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Rlimits {
    /// `RLIMIT_CPU`: CPU seconds; the kernel sends `SIGXCPU` after this many and `SIGKILL` one
    /// second later (the hard limit is one more).
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS`: bytes of virtual address space.
    pub address_space: Option<u64>,
    /// `RLIMIT_NOFILE`: one more than the highest file descriptor number.
    pub open_files: Option<u64>,
    /// `RLIMIT_FSIZE`: bytes a file may grow to; writing past it raises `SIGXFSZ`.
    pub file_size: Option<u64>,
    /// `RLIMIT_NPROC`: processes of the real user (see the platform note).
    pub processes: Option<u64>,
    /// `RLIMIT_CORE`: bytes of a core dump; 0 disables core dumps.
    pub core_size: Option<u64>,
}

impl Rlimits {
    /// No limits.
    pub const fn none() -> Self {
        Self {
            cpu_seconds: None,
            address_space: None,
            open_files: None,
            file_size: None,
            processes: None,
            core_size: None,
        }
    }

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::none()
    }

    /// The lower of each pair of limits.
    #[must_use]
    pub fn min(self, other: Self) -> Self {
        fn lower(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        Self {
            cpu_seconds: lower(self.cpu_seconds, other.cpu_seconds),
            address_space: lower(self.address_space, other.address_space),
            open_files: lower(self.open_files, other.open_files),
            file_size: lower(self.file_size, other.file_size),
            processes: lower(self.processes, other.processes),
            core_size: lower(self.core_size, other.core_size),
        }
    }

    /// `(resource, soft, hard)` triples for `setrlimit`, prepared before the fork.
    pub(crate) fn to_sys(self) -> Vec<Rlimit> {
        let cpu = self.cpu_seconds.map(|soft| (libc::RLIMIT_CPU, soft, soft.saturating_add(1)));
        let equal = [
            (libc::RLIMIT_AS, self.address_space),
            (libc::RLIMIT_NOFILE, self.open_files),
            (libc::RLIMIT_FSIZE, self.file_size),
            (libc::RLIMIT_NPROC, self.processes),
            (libc::RLIMIT_CORE, self.core_size),
        ]
        .into_iter()
        .filter_map(|(resource, value)| value.map(|value| (resource, value, value)));
        cpu.into_iter().chain(equal).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_keeps_the_lower_of_each() {
        let a = Rlimits { cpu_seconds: Some(5), open_files: Some(100), ..Rlimits::none() };
        let b = Rlimits { cpu_seconds: Some(10), core_size: Some(0), ..Rlimits::none() };
        let m = a.min(b);
        assert_eq!(m.cpu_seconds, Some(5));
        assert_eq!(m.open_files, Some(100));
        assert_eq!(m.core_size, Some(0));
        assert_eq!(m.address_space, None);
    }

    #[test]
    fn to_sys_lists_only_set_limits() {
        assert!(Rlimits::none().to_sys().is_empty());
        let limits = Rlimits { file_size: Some(4096), ..Rlimits::none() };
        assert_eq!(limits.to_sys(), vec![(libc::RLIMIT_FSIZE, 4096, 4096)]);
        // The CPU hard limit is a second above the soft one: equal limits meant SIGKILL, never
        // SIGXCPU.
        let limits = Rlimits { cpu_seconds: Some(3), ..Rlimits::none() };
        assert_eq!(limits.to_sys(), vec![(libc::RLIMIT_CPU, 3, 4)]);
    }
}

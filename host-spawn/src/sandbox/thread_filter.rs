//! The children's seccomp filter held by the spawning thread itself
//! ([`Spawner::filter_on_spawning_thread`](crate::Spawner::filter_on_spawning_thread)).
//!
//! A child that installs the filter pays for the kernel's compile of it and for its action
//! cache, which runs the program once for every system call number of both x86 ABIs: about
//! half of what confinement adds to a spawn. A filter installed on a thread is inherited, at no
//! cost, by every process that thread creates. So a thread that only runs guests (`wrt run`'s)
//! installs the children's filter on itself once, on its first confined spawn, and its
//! children install nothing. The thread keeps the filter and no-new-privileges for good: the
//! kernel has no way to take a filter back.
//!
//! Which filter the thread holds is recorded per thread. The filter depends only on whether
//! the network is allowed; a thread holds the one with the network allowed when its policy
//! has any rule that allows it, and a child whose rule does not then installs the no-network
//! filter on top (filters stack: the strictest verdict wins). A thread holding the no-network
//! filter cannot start a child whose rule allows the network: that spawn is refused.

use std::cell::Cell;

use nix::errno::Errno;

use super::filter::Filter;
use crate::sys::seccomp;

thread_local! {
    /// The network setting of the filter this thread holds, if it holds one.
    static HELD: Cell<Option<bool>> = const { Cell::new(None) };
}

/// The network setting of the filter the calling thread holds, if any.
pub(super) fn held() -> Option<bool> {
    HELD.get()
}

/// Installs `filter` (built for `network`) on the calling thread, for good.
pub(super) fn hold(filter: &Filter, network: bool) -> Result<(), Errno> {
    // The thread that starts views' threads must be made while this one is still free of it.
    super::view::ensure_clean_thread()?;
    seccomp::install_on_this_thread(filter.program())?;
    HELD.set(Some(network));
    Ok(())
}

/// What a child whose rule says `network` must install itself, given what its spawning thread
/// holds: the whole filter (`Some(true)` is returned as "install"), nothing, or a refusal when
/// the thread's filter is stricter than the child's rule.
pub(super) fn child_installs(held: Option<bool>, network: bool) -> Result<bool, ThreadTooStrict> {
    match held {
        None => Ok(true),
        Some(held) if held == network => Ok(false),
        // The thread allows the network, the child may not have it: the child adds the
        // no-network filter.
        Some(true) => Ok(true),
        Some(false) => Err(ThreadTooStrict),
    }
}

/// The spawning thread holds the no-network filter and the child's rule allows the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ThreadTooStrict;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_installs_the_filter_unless_its_thread_holds_the_same_one() {
        assert_eq!(child_installs(None, false), Ok(true));
        assert_eq!(child_installs(None, true), Ok(true));
        assert_eq!(child_installs(Some(false), false), Ok(false));
        assert_eq!(child_installs(Some(true), true), Ok(false));
        assert_eq!(child_installs(Some(true), false), Ok(true));
        assert_eq!(child_installs(Some(false), true), Err(ThreadTooStrict));
    }
}

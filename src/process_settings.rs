//! The process-wide settings `wrt` opts into as the owner of its process; a library embedding
//! `wrt-runtime` leaves them to its own `main` (see the runtime's crate docs).

use anyhow::Context;
use wrt_runtime::containment;
use wrt_runtime::wrt_host_spawn::raise_open_files_limit;

/// With `contain`, makes wrt the subreaper of every descendant (orphans of children are reaped
/// as they exit and swept when the guest ends); makes `SIGTERM`, `SIGINT` and `SIGHUP` end
/// every descendant and exit with 128 + the signal; raises the soft open-files limit to the hard
/// one. Starts no thread: the threads these settings need start with the first spawn.
///
/// With `own_signals` (`wrt serve`), the command handles those signals itself.
///
/// With `own_children` (`wrt bench`, which starts host programs of its own), the signal thread
/// starts now, so that a termination signal ends those programs too.
pub(crate) fn apply(contain: bool, own_children: bool, own_signals: bool) -> anyhow::Result<()> {
    // Children hold pipes: use all the descriptors the hard limit allows (spawns stay within a
    // budget of what is left).
    let _ = raise_open_files_limit();
    if contain {
        containment::contain_descendants().context("failed to become the subreaper of guests' children")?;
    }
    if !own_signals {
        containment::end_on_signals().context("failed to set up signal handling")?;
    }
    if own_children {
        containment::expect_children().context("failed to start the signal thread")?;
    }
    Ok(())
}

//! Waiting for the first of several children: [`wait_any`].
//!
//! Shared by both SDKs (`sdk/core/`).

use std::borrow::BorrowMut;
use std::io;
use std::time::Duration;

use crate::child::Child;
use crate::status::ExitStatus;
use crate::transport;

/// Waits until any of `children` has ended, up to `timeout` (`None`: no limit besides the
/// sandbox's), and returns its index in `children` and its status; `Ok(None)` if the timeout
/// passed first (no child is touched).
///
/// A child that ended earlier is reported again by every call, so remove a reported child
/// from the slice before waiting for the others (dropping it releases it in the host). Takes
/// `&mut [Child]` or `&mut [&mut Child]` alike. Stdin of the children stays open.
///
/// # Examples
///
/// ```no_run
#[doc = concat!("use ", env!("CARGO_CRATE_NAME"), "::{Command, wait_any};")]
///
/// let mut children = ["1", "3", "2"]
///     .into_iter()
///     .map(|secs| Command::new("sleep").arg(secs).spawn())
///     .collect::<std::io::Result<Vec<_>>>()?;
/// while let Some((index, status)) = wait_any(&mut children, None)? {
///     let child = children.swap_remove(index);
///     println!("child {} ended: {status}", child.id());
///     if children.is_empty() {
///         break;
///     }
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
///
/// `InvalidInput` if `children` is empty (or, on `wasm32-wasip1`, longer than 1024, the
/// `wrt_v1` ABI's limit); another error if the host call fails.
pub fn wait_any<C: BorrowMut<Child>>(
    children: &mut [C],
    timeout: Option<Duration>,
) -> io::Result<Option<(usize, ExitStatus)>> {
    let handles: Vec<&transport::ChildHandle> = children.iter().map(|child| child.borrow().handle()).collect();
    let Some((index, status)) = transport::wait_any(&handles, timeout)? else { return Ok(None) };
    if index >= children.len() {
        let message = format!("wait_any returned index {index} for {} children", children.len());
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    Ok(Some((index, status)))
}

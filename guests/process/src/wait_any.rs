//! Waiting for the first of several children: [`wait_any`].

use std::borrow::BorrowMut;
use std::io;
use std::time::Duration;

use crate::child::{Child, timeout_ms};
use crate::error::{ErrorCode, from_wit, is};
use crate::status::ExitStatus;
use crate::sys;

/// Waits until any of `children` has ended, up to `timeout` (`None`: no limit besides the
/// sandbox's), and returns its index in `children` and its status; `Ok(None)` if the timeout
/// passed first (no child is touched).
///
/// A child that ended earlier is reported again by every call, so remove a reported child
/// from the slice before waiting for the others. Takes `&mut [Child]` or `&mut [&mut Child]`.
///
/// # Examples
///
/// ```no_run
/// use wrt_process::{Command, wait_any};
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
/// `InvalidInput` if `children` is empty; another error if the host call fails.
pub fn wait_any<C: BorrowMut<Child>>(
    children: &mut [C],
    timeout: Option<Duration>,
) -> io::Result<Option<(usize, ExitStatus)>> {
    let resources: Vec<&sys::Child> = children.iter().map(|child| child.borrow().resource()).collect();
    match sys::wrt::process::process::wait_any(&resources, timeout_ms(timeout)) {
        Ok((index, status)) => {
            let index = index as usize;
            if index >= children.len() {
                let message = format!("wait-any returned index {index} for {} children", children.len());
                return Err(io::Error::new(io::ErrorKind::InvalidData, message));
            }
            Ok(Some((index, crate::status::from_wit(&status))))
        }
        Err(err) if is(&err, ErrorCode::Timeout) => Ok(None),
        Err(err) => Err(from_wit(err, || format!("cannot wait for any of {} children", resources.len()))),
    }
}

//! Waiting for the first of several children: [`wait_any`].

use std::borrow::BorrowMut;
use std::io;
use std::time::Duration;

use crate::child::{Child, timeout_ms};
use crate::error::{ErrorCode, check};
use crate::status::{ExitStatus, STATUS_LEN};
use crate::sys;

/// Waits until any of `children` has ended, up to `timeout` (`None`: no limit besides the
/// sandbox's), and returns its index in `children` and its status; `Ok(None)` if the timeout
/// passed first (no child is touched).
///
/// A child that ended earlier is reported again by every call, so remove a reported child
/// from the slice before waiting for the others (dropping it releases its handle). Takes
/// `&mut [Child]` or `&mut [&mut Child]` alike. Stdin of the children stays open.
///
/// # Examples
///
/// ```no_run
/// use wrt_guest::{Command, wait_any};
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
/// `InvalidInput` if `children` is empty or longer than 1024 (the ABI's limit), or a handle is
/// bad; another error if the host call fails.
pub fn wait_any<C: BorrowMut<Child>>(
    children: &mut [C],
    timeout: Option<Duration>,
) -> io::Result<Option<(usize, ExitStatus)>> {
    let handles: Vec<i32> = children.iter().map(|child| child.borrow().raw_handle()).collect();
    let mut record = [0; STATUS_LEN];
    let ret = sys::wait_any(&handles, timeout_ms(timeout), &mut record);
    if ret == -ErrorCode::Timeout.raw() {
        return Ok(None);
    }
    let index = check(ret, || format!("cannot wait for any of {} children", handles.len()))? as usize;
    if index >= children.len() {
        let message = format!("wait_any returned index {index} for {} children", children.len());
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    Ok(Some((index, crate::status::from_record(&record))))
}

//! The events [`Child::poll`] waits for, and `poll` itself (only `wrt-guest` has it: components
//! wait on `wasi:io` pollables instead).

use std::fmt;
use std::io;
use std::ops::{BitOr, BitOrAssign};
use std::time::Duration;

use wrt_abi::consts;

use crate::child::Child;
use crate::error::check;
use crate::sys;
use crate::transport::timeout_ms;

/// A set of child events, as `poll` takes and returns them: stdin writable, stdout or stderr
/// readable (data or end of file), the child ended.
///
/// # Examples
///
/// ```
/// use wrt_guest::Events;
///
/// let interest = Events::STDOUT | Events::STDERR;
/// assert!(interest.contains(Events::STDOUT));
/// assert!(!interest.contains(Events::STDIN));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Events(u32);

impl Events {
    /// The child's stdin accepts a write without blocking.
    pub const STDIN: Self = Self(consts::INTEREST_STDIN);
    /// The child's stdout has data or is at end of file.
    pub const STDOUT: Self = Self(consts::INTEREST_STDOUT);
    /// The child's stderr has data or is at end of file.
    pub const STDERR: Self = Self(consts::INTEREST_STDERR);
    /// The child has ended.
    pub const EXITED: Self = Self(consts::INTEREST_EXITED);
    const ALL: Self = Self(consts::INTEREST_ALL);

    /// No event.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Whether no event is in the set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every event of `other` is in the set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The events in either set.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The events in both sets.
    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// The events in `self` and not in `other`.
    pub const fn difference(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// The bits as the ABI's `poll` uses them.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The set with the ABI's `bits`; bits this version does not know are dropped.
    pub const fn from_bits_truncate(bits: u32) -> Self {
        Self(bits & Self::ALL.0)
    }
}

impl BitOr for Events {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl BitOrAssign for Events {
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(rhs);
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names =
            [(Self::STDIN, "STDIN"), (Self::STDOUT, "STDOUT"), (Self::STDERR, "STDERR"), (Self::EXITED, "EXITED")];
        let mut set = f.debug_set();
        for (event, name) in names {
            if self.contains(event) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

impl Child {
    /// Waits until one of `interest` is ready or `timeout` passes (`None`: no limit besides the
    /// sandbox's), and returns the ready subset: empty after the timeout. Events for streams
    /// that are not piped (or no longer: closed stdin) are ready at once, and
    /// [`EXITED`](Events::EXITED) stays ready once the child has ended.
    ///
    /// Use it with [`ChildStdin::try_write`](crate::ChildStdin::try_write),
    /// [`ChildStdout::try_read`](crate::ChildStdout::try_read) and
    /// [`ChildStderr::try_read`](crate::ChildStderr::try_read) to serve several pipes without blocking on one.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::io::ErrorKind;
    /// use wrt_guest::{Command, Events, Stdio};
    ///
    /// let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    /// let (mut stdin, mut stdout) = (child.stdin.take(), child.stdout.take().unwrap());
    /// let (input, mut written, mut output, mut chunk) = (vec![7u8; 1 << 20], 0, Vec::new(), [0; 4096]);
    /// loop {
    ///     let interest = if stdin.is_some() { Events::STDIN | Events::STDOUT } else { Events::STDOUT };
    ///     let ready = child.poll(interest, None)?;
    ///     if let Some(pipe) = stdin.as_mut().filter(|_| ready.contains(Events::STDIN)) {
    ///         match pipe.try_write(&input[written..]) {
    ///             Ok(n) => written += n,
    ///             Err(e) if e.kind() == ErrorKind::WouldBlock => {}
    ///             Err(e) => return Err(e),
    ///         }
    ///         if written == input.len() {
    ///             stdin = None; // closes cat's stdin
    ///         }
    ///     }
    ///     if ready.contains(Events::STDOUT) {
    ///         match stdout.try_read(&mut chunk) {
    ///             Ok(0) => break,
    ///             Ok(n) => output.extend_from_slice(&chunk[..n]),
    ///             Err(e) if e.kind() == ErrorKind::WouldBlock => {}
    ///             Err(e) => return Err(e),
    ///         }
    ///     }
    /// }
    /// assert_eq!(output, input);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `interest` is empty; otherwise as [`wait`](Self::wait).
    pub fn poll(&self, interest: Events, timeout: Option<Duration>) -> io::Result<Events> {
        let ret = sys::poll(self.handle().raw(), interest.bits(), timeout_ms(timeout));
        let ready = check(ret, || format!("cannot poll child {}", self.id()))?;
        Ok(Events::from_bits_truncate(ready).intersection(interest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let both = Events::STDOUT | Events::STDERR;
        assert_eq!(both.bits(), 6);
        assert!(both.contains(Events::STDERR) && !both.contains(Events::EXITED));
        assert_eq!(both.difference(Events::STDOUT), Events::STDERR);
        assert_eq!(both.intersection(Events::STDERR | Events::STDIN), Events::STDERR);
        assert!(Events::empty().is_empty() && Events::default().is_empty());
        assert_eq!(Events::from_bits_truncate(0xff), Events::STDIN | Events::STDOUT | Events::STDERR | Events::EXITED);
        assert_eq!(format!("{both:?}"), "{STDOUT, STDERR}");
    }
}

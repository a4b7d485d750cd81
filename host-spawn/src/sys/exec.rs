//! What both strategies need to start a program, prepared before any process exists: the
//! argument and environment arrays, the [`Exec`] request and the [`SpawnFailure`] it may end in.

use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::os::fd::BorrowedFd;
use std::ptr;

use nix::errno::Errno;

use crate::spawn_step::SpawnStep;

/// A NULL-terminated array of C strings, as `execve` and `posix_spawn` take them.
///
/// `ptrs` points into the heap buffers of `items`; those buffers never move or change
/// while `self` lives, because `items` is only ever pushed to.
pub(crate) struct CStringArray {
    items: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStringArray {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut ptrs = Vec::with_capacity(capacity + 1);
        ptrs.push(ptr::null());
        Self { items: Vec::with_capacity(capacity), ptrs }
    }

    pub(crate) fn push(&mut self, item: CString) {
        let last = self.ptrs.len() - 1;
        self.ptrs[last] = item.as_ptr();
        self.ptrs.push(ptr::null());
        self.items.push(item);
    }

    /// Replaces the first item (pushes it if there is none).
    pub(crate) fn set_first(&mut self, item: CString) {
        match self.items.first_mut() {
            Some(first) => {
                *first = item;
                self.ptrs[0] = first.as_ptr();
            }
            None => self.push(item),
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &CStr> {
        self.items.iter().map(CString::as_c_str)
    }

    pub(super) fn as_ptr(&self) -> *const *const c_char {
        self.ptrs.as_ptr()
    }
}

impl fmt::Debug for CStringArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Everything both strategies need to start a program, prepared before any process exists.
#[derive(Debug)]
pub(crate) struct Exec<'a> {
    /// The canonical path to execute.
    pub(crate) path: &'a CStr,
    pub(crate) argv: &'a CStringArray,
    pub(crate) envp: &'a CStringArray,
    /// Descriptors to install as the child's 0, 1 and 2; `None` leaves the host's in place.
    /// Each is at least 3, so installing one never overwrites another.
    pub(crate) stdio: [Option<BorrowedFd<'a>>; 3],
    pub(crate) cwd: &'a CStr,
    /// The program's descriptor (close-on-exec, at least 3) when it must run from exactly the
    /// file that was hashed: fork-exec calls `fexecve` on it; `posix_spawn` executes `path`,
    /// which is then `/proc/self/fd/N`, and leaves the descriptor open (close-on-exec) for it.
    pub(crate) fd: Option<BorrowedFd<'a>>,
    /// A pseudo-terminal for some of 0, 1 and 2 (their `stdio` entries are `None`): the child
    /// starts a new session and opens the terminal's slave, which becomes its controlling
    /// terminal. Without one, the child starts a new process group in the host's session.
    pub(crate) pty: Option<PtyExec<'a>>,
}

/// The pseudo-terminal part of an [`Exec`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PtyExec<'a> {
    /// The slave's path, opened in the child after `setsid`.
    pub(crate) path: &'a CStr,
    /// Which of 0, 1 and 2 are the terminal (at least one).
    pub(crate) targets: [bool; 3],
}

impl PtyExec<'_> {
    /// The first of 0, 1, 2 that is the terminal: the descriptor the child opens it on.
    pub(crate) fn first(&self) -> libc::c_int {
        self.targets.iter().position(|&t| t).map_or(0, |i| i as libc::c_int)
    }
}

/// Why starting a child failed, and at which step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpawnFailure {
    pub(crate) step: SpawnStep,
    pub(crate) errno: Errno,
}

impl SpawnFailure {
    pub(super) fn at(step: SpawnStep) -> impl Fn(Errno) -> Self + Copy {
        move |errno| Self { step, errno }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cstring_array_is_null_terminated() {
        let mut array = CStringArray::with_capacity(2);
        array.push(c"a".to_owned());
        array.push(c"bc".to_owned());
        assert_eq!(array.ptrs.len(), 3);
        assert!(array.ptrs[2].is_null());
        // SAFETY: the pointers come from `array`, which is alive.
        let second = unsafe { CStr::from_ptr(array.ptrs[1]) };
        assert_eq!(second, c"bc");
        assert_eq!(array.iter().count(), 2);
    }
}

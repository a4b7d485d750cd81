//! The stack a child made with `clone(CLONE_VM)` runs on until `execve`: a vfork-exec child's,
//! and those of a child view's init, starter and the children the starter starts.

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use nix::errno::Errno;

/// The child's stack: far more than its set-up needs (a few hundred bytes of frames), below a
/// guard page.
const STACK_BYTES: usize = 256 * 1024;
const GUARD_BYTES: usize = 64 * 1024;

/// A private mapping for the child's stack, its lowest [`GUARD_BYTES`] inaccessible.
pub(super) struct Stack {
    base: NonNull<c_void>,
}

impl Stack {
    pub(super) fn new() -> Result<Self, Errno> {
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing; nothing
        // of ours is touched.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                GUARD_BYTES + STACK_BYTES,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let base = NonNull::new(base).ok_or(Errno::ENOMEM)?;
        let stack = Self { base };
        // SAFETY: the range lies inside the mapping just made, above its guard.
        let ret = unsafe {
            libc::mprotect(base.as_ptr().byte_add(GUARD_BYTES), STACK_BYTES, libc::PROT_READ | libc::PROT_WRITE)
        };
        if ret == -1 {
            return Err(Errno::last());
        }
        Ok(stack)
    }

    /// The highest address: stacks grow down.
    pub(super) fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of the mapping, 16-byte aligned (the mapping is page-aligned).
        unsafe { self.base.as_ptr().byte_add(GUARD_BYTES + STACK_BYTES) }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `new` with this size and is unmapped once.
        unsafe { libc::munmap(self.base.as_ptr(), GUARD_BYTES + STACK_BYTES) };
    }
}

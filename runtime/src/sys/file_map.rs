//! A read-only view of a file, mapped rather than copied: how the cache authenticates the sealed
//! copy of an entry (`sys::sealed`) before wasmtime maps it for itself.

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::os::fd::BorrowedFd;
use std::ptr::NonNull;

use nix::errno::Errno;
use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};

/// `len` bytes of a file, mapped private and read-only.
pub(crate) struct FileMap {
    base: NonNull<c_void>,
    len: NonZeroUsize,
}

impl FileMap {
    /// Maps the first `len` bytes (at least one) of the file `fd`.
    pub(crate) fn new(fd: BorrowedFd<'_>, len: usize) -> Result<Self, Errno> {
        let len = NonZeroUsize::new(len).ok_or(Errno::EINVAL)?;
        // SAFETY: a new private read-only mapping at an address of the kernel's choosing;
        // nothing of ours is touched.
        let base = unsafe { mmap(None, len, ProtFlags::PROT_READ, MapFlags::MAP_PRIVATE, fd, 0) }?;
        Ok(Self { base, len })
    }

    /// The mapped bytes.
    ///
    /// What they read is the file's contents at the time of the read: a process that can
    /// write the file can change them, and one that truncates it makes a read past its new end
    /// raise `SIGBUS`. The cache maps only sealed copies, which nobody can write or truncate.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes and lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().cast::<u8>(), self.len.get()) }
    }

    /// What the bytes are, if compiled code: a module or a component (read from the ELF
    /// header and sections, not from every byte).
    pub(crate) fn kind(&self) -> Option<wasmtime::Precompiled> {
        wasmtime::Engine::detect_precompiled(self.bytes())
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `new` with this length and is unmapped once.
        let result = unsafe { munmap(self.base, self.len.get()) };
        debug_assert!(result.is_ok(), "munmap of a file view failed: {result:?}");
    }
}

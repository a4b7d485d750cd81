//! Sealed copies of compiled code: the bytes wrt checks are the bytes wasmtime maps, and nobody
//! can change them until they are dropped.
//!
//! A file on disk can be written in place or truncated by anyone who may write it, at any time
//! after it was checked: a MAC over a mapped cache entry proves nothing a moment later, and a
//! truncation makes a read of the mapping raise `SIGBUS`. So compiled code is copied, in the
//! kernel, from its file into a `memfd` (anonymous shared memory with a descriptor) that is then
//! sealed (`F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`): no descriptor, mapping
//! or process, this one included, can write, shrink or grow it again, even one that reopens it
//! through `/proc/PID/fd`. The cache authenticates the sealed copy, and wasmtime maps that copy.
//! See [`memfd_create(2)`](https://man7.org/linux/man-pages/man2/memfd_create.2.html) and
//! "File Sealing" in [`fcntl(2)`](https://man7.org/linux/man-pages/man2/fcntl.2.html).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;
use nix::libc;

/// A sealed in-memory copy of a file's first bytes.
#[derive(Debug)]
pub(crate) struct SealedCopy {
    file: File,
    len: u64,
    executable: bool,
}

impl SealedCopy {
    /// Copies the first `len` bytes of the regular file `source` (from its start, whatever its
    /// offset) into a new `memfd` and seals it.
    ///
    /// # Errors
    ///
    /// `memfd_create` or the seals are refused (a kernel before 3.17), the copy fails, or the
    /// file holds fewer than `len` bytes (`EIO`, as when it was truncated during the copy).
    pub(crate) fn of(source: BorrowedFd<'_>, len: u64) -> Result<Self, Errno> {
        let (memfd, executable) = memfd()?;
        let file = File::from(memfd);
        let total = usize::try_from(len).map_err(|_| Errno::EFBIG)?;
        let mut offset: libc::off_t = 0;
        let mut copied = 0usize;
        while copied < total {
            // `sendfile` copies from the page cache into the memfd without a user-space buffer;
            // with an explicit offset it leaves `source`'s own offset alone.
            // SAFETY: both descriptors are open for the call; `offset` is a valid, writable
            // `off_t` the kernel advances by the bytes copied.
            let n = unsafe {
                libc::sendfile(file.as_raw_fd(), source.as_raw_fd(), &raw mut offset, (total - copied).min(1 << 30))
            };
            match Errno::result(n) {
                Ok(0) => return Err(Errno::EIO),
                Ok(n) => copied += n.unsigned_abs(),
                Err(Errno::EINTR) => {}
                Err(e) => return Err(e),
            }
        }
        let seals = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // SAFETY: F_ADD_SEALS takes an integer argument and touches no memory of ours.
        Errno::result(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) })?;
        Ok(Self { file, len, executable })
    }

    /// The sealed file.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// The descriptor of the sealed file.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Whether it may be mapped executable: not where the host forbids executable memfds
    /// (`vm.memfd_noexec = 2`), where the code must be read into memory instead.
    pub(crate) fn is_executable(&self) -> bool {
        self.executable
    }
}

/// A new `memfd` that can be sealed, closed on `exec`, and whether it can be mapped executable.
fn memfd() -> Result<(OwnedFd, bool), Errno> {
    let name = c"wrt-compiled-code";
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // `MFD_EXEC` (Linux 6.3) asks for an executable memfd where `vm.memfd_noexec = 1` would
    // make it non-executable by default; older kernels refuse the flag (`EINVAL`) and make every
    // memfd executable. With `vm.memfd_noexec = 2` (`EACCES`) none may be: `MFD_NOEXEC_SEAL`.
    for (extra, executable) in [(libc::MFD_EXEC, true), (0, true), (libc::MFD_NOEXEC_SEAL, false)] {
        // SAFETY: `name` is NUL-terminated; no other memory is passed.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), flags | extra) };
        match Errno::result(fd) {
            // SAFETY: the kernel just returned `fd`; nothing else owns it.
            Ok(fd) => return Ok((unsafe { OwnedFd::from_raw_fd(fd) }, executable)),
            Err(Errno::EINVAL) if extra == libc::MFD_EXEC => {}
            Err(Errno::EACCES) if executable => {}
            Err(e) => return Err(e),
        }
    }
    Err(Errno::EACCES)
}

#[cfg(test)]
mod tests {
    use std::io::{Seek, Write};
    use std::os::unix::fs::FileExt;

    use nix::libc;

    use super::SealedCopy;

    fn source(bytes: &[u8]) -> std::fs::File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn a_sealed_copy_holds_the_files_bytes_whatever_its_offset() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = source(&bytes);
        file.seek(std::io::SeekFrom::Start(17)).unwrap();
        let copy = SealedCopy::of(std::os::fd::AsFd::as_fd(&file), bytes.len() as u64).unwrap();
        let mut read = vec![0; bytes.len()];
        copy.file().read_exact_at(&mut read, 0).unwrap();
        assert_eq!(read, bytes);
        assert_eq!(copy.len(), bytes.len() as u64);
        // The source's own offset is untouched.
        assert_eq!(file.stream_position().unwrap(), 17);
    }

    #[test]
    fn nobody_can_write_truncate_or_grow_a_sealed_copy_even_reopened_for_writing() {
        let file = source(b"compiled code");
        let copy = SealedCopy::of(std::os::fd::AsFd::as_fd(&file), 13).unwrap();
        let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&copy.fd()));
        let reopened = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        assert_eq!(reopened.write_at(b"planted", 0).unwrap_err().raw_os_error(), Some(libc::EPERM));
        assert_eq!(reopened.set_len(1).unwrap_err().raw_os_error(), Some(libc::EPERM));
        assert_eq!(reopened.set_len(1 << 20).unwrap_err().raw_os_error(), Some(libc::EPERM));
        // A shared writable mapping is refused too.
        // SAFETY: a new mapping at an address of the kernel's choosing; it is refused.
        let mapped = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                13,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&reopened),
                0,
            )
        };
        assert_eq!(mapped, libc::MAP_FAILED);
        let mut read = [0; 13];
        copy.file().read_exact_at(&mut read, 0).unwrap();
        assert_eq!(&read, b"compiled code");
    }

    #[test]
    fn a_file_shorter_than_asked_is_refused() {
        let file = source(b"short");
        let err = SealedCopy::of(std::os::fd::AsFd::as_fd(&file), 4096).unwrap_err();
        assert_eq!(err, nix::errno::Errno::EIO);
    }
}

//! Reading a guest's file: a regular file or a pipe, never more than [`MAX_MODULE_BYTES`].
//!
//! Before, any path was read to its end: `/dev/zero` as the module grew wrt's memory until the
//! allocation failed (about 1 GB), and a FIFO without a writer blocked wrt in `open`.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::error::LoadError;

/// The largest guest file wrt reads: 1 GiB. The largest real modules are tens of megabytes
/// (a synthesis tool compiled to WebAssembly is about 70 MB).
pub const MAX_MODULE_BYTES: u64 = 1 << 30;

/// The bytes of the guest file at `path`.
///
/// The file is opened non-blocking (a FIFO without a writer does not hang `open`), then read:
/// a regular file of at most [`MAX_MODULE_BYTES`], or a pipe, FIFO or socket (`wrt run
/// /dev/stdin`) up to that many bytes. Directories and devices are refused.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    let failed = |reason| LoadError::Read { path: path.to_owned(), reason };
    let file = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(failed)?;
    let meta = file.metadata().map_err(failed)?;
    let kind = meta.file_type();
    let not_a_file = |kind| Err(LoadError::NotAFile { path: path.to_owned(), kind });
    if kind.is_dir() {
        return not_a_file("a directory");
    }
    if kind.is_char_device() {
        return not_a_file("a character device");
    }
    if kind.is_block_device() {
        return not_a_file("a block device");
    }
    let too_large = || LoadError::TooLarge { path: path.to_owned(), limit: MAX_MODULE_BYTES };
    let mut bytes = Vec::new();
    if kind.is_file() {
        if meta.len() > MAX_MODULE_BYTES {
            return Err(too_large());
        }
        bytes.reserve_exact(usize::try_from(meta.len()).unwrap_or(0));
    } else {
        // A pipe, FIFO or socket: wait for its writer from now on.
        fcntl(&file, FcntlArg::F_SETFL(OFlag::empty())).map_err(|errno| failed(errno.into()))?;
    }
    // A file that grows while it is read stops at the cap as a pipe does.
    (&file).take(MAX_MODULE_BYTES + 1).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.len() as u64 > MAX_MODULE_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

//! The floors each workload is measured against, in the same process and run: a direct
//! `posix_spawn` + `waitpid` of the program (nothing of wrt in between), the bare `fork` +
//! `execv` it replaces, and plain copies of the burst's chunks.

use std::ffi::CString;
use std::hint::black_box;

use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, posix_spawn};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use crate::{BenchError, sys};

/// `posix_spawn` of one program (no arguments, empty environment, no file actions or
/// attributes) and `waitpid`, prepared once so that each call is the two system calls alone.
#[derive(Debug)]
pub struct PosixSpawnWait {
    program: CString,
    actions: PosixSpawnFileActions,
    attr: PosixSpawnAttr,
}

impl PosixSpawnWait {
    /// Prepares the floor for `path`.
    ///
    /// # Errors
    ///
    /// `path` contains a NUL byte, or the spawn attributes cannot be made.
    pub fn new(path: &str) -> Result<Self, BenchError> {
        let program = CString::new(path).map_err(|_| BenchError::Floor(format!("`{path}` contains NUL")))?;
        let actions = PosixSpawnFileActions::init().map_err(|e| BenchError::Floor(e.to_string()))?;
        let attr = PosixSpawnAttr::init().map_err(|e| BenchError::Floor(e.to_string()))?;
        Ok(Self { program, actions, attr })
    }

    /// Spawns the program and waits for it, `n` times.
    ///
    /// # Errors
    ///
    /// When a spawn fails or the program does not exit with 0.
    pub fn run(&self, n: u32) -> Result<(), BenchError> {
        let argv = [self.program.as_c_str()];
        let envp: [&std::ffi::CStr; 0] = [];
        for _ in 0..n {
            let pid = posix_spawn(self.program.as_c_str(), &self.actions, &self.attr, &argv, &envp)
                .map_err(|e| BenchError::Floor(format!("posix_spawn of `{}`: {e}", self.program.to_string_lossy())))?;
            wait_ok(&self.program, pid)?;
        }
        Ok(())
    }
}

fn wait_ok(program: &CString, pid: Pid) -> Result<(), BenchError> {
    match waitpid(pid, None) {
        Ok(WaitStatus::Exited(_, 0)) => Ok(()),
        other => Err(BenchError::Floor(format!("`{}` ended with {other:?}", program.to_string_lossy()))),
    }
}

/// `posix_spawn` of `path` (no arguments, empty environment, no file actions) and `waitpid`,
/// `n` times.
///
/// # Errors
///
/// When a spawn fails or the program does not exit with 0.
pub fn posix_spawn_wait(path: &str, n: u32) -> Result<(), BenchError> {
    PosixSpawnWait::new(path)?.run(n)
}

/// A bare `fork` + `execv` of `path` (no arguments) and `waitpid`: what `posix_spawn` replaces,
/// and what copies the page tables of every mapping not marked `MADV_DONTFORK`.
///
/// # Errors
///
/// When the fork fails or the program does not exit with 0.
pub fn fork_exec_wait(path: &CString) -> Result<(), BenchError> {
    let pid =
        sys::fork_exec(path).map_err(|e| BenchError::Floor(format!("fork of `{}`: {e}", path.to_string_lossy())))?;
    wait_ok(path, Pid::from_raw(pid))
}

/// The nine chunks of one burst iteration (nodejs/node#63863's
/// readable-push-buffer-burst): HTML pieces around bodies of 1 KiB, 2 KiB, `body_size` and
/// 2 KiB.
pub fn burst_chunks(body_size: usize) -> Vec<Vec<u8>> {
    let fill = |len: usize, byte: u8| vec![byte; len];
    vec![
        b"<!doctype html><html><head><title>burst</title><style>".to_vec(),
        fill(1024, b'a'),
        b"</style></head><body><header>".to_vec(),
        fill(2048, b'b'),
        b"</header><main>".to_vec(),
        fill(body_size, b'c'),
        b"</main><script>".to_vec(),
        fill(2048, b'd'),
        b"</script></body></html>".to_vec(),
    ]
}

/// Bytes that start on a page boundary, for the burst floors' copies.
///
/// `memcpy` of large blocks (`rep movsb`) runs many times slower on some CPUs when the
/// destination lies just past the source modulo the page size: on the AMD EPYC machines the
/// benches run on, a 120 KiB copy with `(dst - src) % 4096` of 8 or 16 took 20× as long as
/// with any other offset. Where `malloc` puts a `Vec` depends on what the process allocated
/// before, so a floor copying between `Vec`s measured that slow path in some runs and not in
/// others. Every buffer of the floors starts on a page, as host buffers' blocks do, so the
/// floor is the fast copy in every run.
struct PageAligned {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageAligned {
    const PAGE: usize = 4096;

    /// `len` zero bytes on a page boundary.
    fn zeroed(len: usize) -> Self {
        let bytes = vec![0; len + Self::PAGE];
        let start = bytes.as_ptr().align_offset(Self::PAGE);
        Self { bytes, start, len }
    }

    /// A copy of `src` on a page boundary.
    fn copy_of(src: &[u8]) -> Self {
        let mut copy = Self::zeroed(src.len());
        copy.bytes_mut().copy_from_slice(src);
        copy
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

/// The burst workload with no sandbox, no host buffers, no allocator and no collector: `n`
/// times, copy the chunks into buffers, concatenate those into another and check its length.
/// Every byte is copied twice, as in the guests; the buffers are reused, so this is `memcpy`
/// alone (an allocation per chunk would measure the host allocator's trimming instead, which
/// varies with what ran before in the process). Every buffer starts on a page
/// (`PageAligned`). Returns the bytes concatenated.
pub fn memcpy_burst(chunks: &[Vec<u8>], n: u32) -> u64 {
    let chunks: Vec<PageAligned> = chunks.iter().map(|c| PageAligned::copy_of(c)).collect();
    let total: usize = chunks.iter().map(|c| c.len).sum();
    let mut copies: Vec<PageAligned> = chunks.iter().map(|c| PageAligned::zeroed(c.len)).collect();
    let mut out = PageAligned::zeroed(total);
    let mut concatenated = 0u64;
    for _ in 0..n {
        for (copy, chunk) in copies.iter_mut().zip(&chunks) {
            copy.bytes_mut().copy_from_slice(black_box(chunk.bytes()));
        }
        let out = black_box(out.bytes_mut());
        let mut at = 0;
        for copy in &copies {
            out[at..at + copy.len].copy_from_slice(copy.bytes());
            at += copy.len;
        }
        assert_eq!(black_box(at), total);
        concatenated += at as u64;
    }
    concatenated
}

/// The burst with one allocation per iteration: each iteration copies the nine chunks into one
/// new buffer (one allocation, one copy of every byte), in this process, the chunks and the
/// buffer starting on a page (`PageAligned`). The floor of the criterion `buffer` bench;
/// returns the bytes copied.
pub fn alloc_concat_burst(chunks: &[Vec<u8>], n: u32) -> u64 {
    let chunks: Vec<PageAligned> = chunks.iter().map(|c| PageAligned::copy_of(c)).collect();
    let len: usize = chunks.iter().map(|c| c.len).sum();
    let mut copied = 0u64;
    for _ in 0..n {
        // Filled with `extend_from_slice`, as a `Vec` would be: only the padding up to the page
        // boundary is written twice.
        let mut page: Vec<u8> = Vec::with_capacity(len + PageAligned::PAGE);
        let pad = page.as_ptr().align_offset(PageAligned::PAGE);
        page.resize(pad, 0);
        for chunk in &chunks {
            page.extend_from_slice(black_box(chunk.bytes()));
        }
        assert_eq!(black_box(&page).len() - pad, len);
        copied += (page.len() - pad) as u64;
    }
    copied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_run() {
        posix_spawn_wait("/bin/true", 3).unwrap();
        assert!(posix_spawn_wait("/bin/false", 1).is_err());
        assert!(posix_spawn_wait("/nonexistent", 1).is_err());
        let chunks = burst_chunks(100);
        assert_eq!(chunks.len(), 9);
        let per_iteration: u64 = chunks.iter().map(|c| c.len() as u64).sum();
        assert_eq!(memcpy_burst(&chunks, 3), 3 * per_iteration);
        assert_eq!(alloc_concat_burst(&chunks, 3), 3 * per_iteration);
        let true_path = CString::new("/bin/true").unwrap();
        fork_exec_wait(&true_path).unwrap();
        assert!(fork_exec_wait(&CString::new("/bin/false").unwrap()).is_err());
        assert!(fork_exec_wait(&CString::new("/nonexistent").unwrap()).is_err());
        let floor = PosixSpawnWait::new("/bin/true").unwrap();
        floor.run(2).unwrap();
    }

    #[test]
    fn the_burst_floors_copy_between_page_aligned_buffers() {
        for len in [0, 1, 4095, 4096, 120 << 10] {
            let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let copy = PageAligned::copy_of(&src);
            assert_eq!(copy.bytes().as_ptr() as usize % PageAligned::PAGE, 0, "{len}");
            assert_eq!(copy.bytes(), &src[..]);
        }
    }
}

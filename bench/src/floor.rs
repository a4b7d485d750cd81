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

/// The burst workload with no sandbox, no host buffers, no allocator and no collector: `n`
/// times, copy the chunks into buffers, concatenate those into another and check its length.
/// Every byte is copied twice, as in the guests; the buffers are reused, so this is `memcpy`
/// alone (an allocation per chunk would measure the host allocator's trimming instead, which
/// varies with what ran before in the process). Returns the bytes concatenated.
pub fn memcpy_burst(chunks: &[Vec<u8>], n: u32) -> u64 {
    let total: usize = chunks.iter().map(Vec::len).sum();
    let mut copies: Vec<Vec<u8>> = chunks.iter().map(|c| Vec::with_capacity(c.len())).collect();
    let mut out = Vec::with_capacity(total);
    let mut concatenated = 0u64;
    for _ in 0..n {
        for (copy, chunk) in copies.iter_mut().zip(chunks) {
            copy.clear();
            copy.extend_from_slice(black_box(chunk));
        }
        out.clear();
        for copy in &copies {
            out.extend_from_slice(copy);
        }
        assert_eq!(black_box(&out).len(), total);
        concatenated += out.len() as u64;
    }
    concatenated
}

/// The burst with one allocation per iteration: each iteration copies the nine chunks into one
/// new `Vec` (one allocation, one copy of every byte), in this process. The floor of the
/// criterion `buffer` bench; returns the bytes copied.
pub fn alloc_concat_burst(chunks: &[Vec<u8>], n: u32) -> u64 {
    let len: usize = chunks.iter().map(Vec::len).sum();
    let mut copied = 0u64;
    for _ in 0..n {
        let mut page = Vec::with_capacity(len);
        for chunk in chunks {
            page.extend_from_slice(black_box(chunk));
        }
        assert_eq!(black_box(&page).len(), len);
        copied += page.len() as u64;
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
}

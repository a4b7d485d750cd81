//! The floors each workload is measured against, in the same process and run: a direct
//! `posix_spawn` + `waitpid` of the program (nothing of wrt in between), and a plain `memcpy`
//! concatenation of the burst's chunks.

use std::ffi::CString;
use std::hint::black_box;

use nix::spawn::{PosixSpawnAttr, PosixSpawnFileActions, posix_spawn};
use nix::sys::wait::{WaitStatus, waitpid};

use crate::BenchError;

/// `posix_spawn` of `path` (no arguments, empty environment, no file actions) and `waitpid`,
/// `n` times.
///
/// # Errors
///
/// When a spawn fails or the program does not exit with 0.
pub fn posix_spawn_wait(path: &str, n: u32) -> Result<(), BenchError> {
    let program = CString::new(path).map_err(|_| BenchError::Floor(format!("`{path}` contains NUL")))?;
    let actions = PosixSpawnFileActions::init().map_err(|e| BenchError::Floor(e.to_string()))?;
    let attr = PosixSpawnAttr::init().map_err(|e| BenchError::Floor(e.to_string()))?;
    let argv = [program.clone()];
    let envp: [CString; 0] = [];
    for _ in 0..n {
        let pid = posix_spawn(program.as_c_str(), &actions, &attr, &argv, &envp)
            .map_err(|e| BenchError::Floor(format!("posix_spawn of `{path}`: {e}")))?;
        match waitpid(pid, None) {
            Ok(WaitStatus::Exited(_, 0)) => {}
            other => return Err(BenchError::Floor(format!("`{path}` ended with {other:?}"))),
        }
    }
    Ok(())
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
    }
}

//! Compiled artifacts a user vouches for (`wrt compile`, `wrt run --allow-precompiled`): the one
//! way compiled code enters wrt without the cache's authentication.

use std::path::{Path, PathBuf};

use super::compiled::Compiled;
use super::sealed::SealedCopy;

/// A file of compiled code ([`Runtime::precompile`](crate::Runtime::precompile), `wrt compile`)
/// that its user vouches for, to load with
/// [`Runtime::load_precompiled`](crate::Runtime::load_precompiled).
#[derive(Debug, Clone)]
pub struct PrecompiledFile {
    path: PathBuf,
}

impl PrecompiledFile {
    /// Vouches for the artifact at `path`.
    ///
    /// # Safety
    ///
    /// The file must hold what [`Runtime::precompile`](crate::Runtime::precompile) wrote (by a
    /// wrt built with the same wasmtime) when it is loaded: wasmtime checks its header, version
    /// and engine settings, never its code, so a crafted or altered file runs any native code in
    /// this process, outside every sandbox. Never vouch for a file a guest, or anyone else,
    /// could have written. Changes after the load do not matter: the load copies the file into
    /// sealed memory that nobody can change, and runs that copy.
    pub unsafe fn trusted(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The artifact's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file at `path` is, or looks like, compiled code (an ELF file) rather than
    /// WebAssembly: what `wrt compile` writes. It says nothing of whether the code can be
    /// trusted, nor whether it loads.
    pub fn detect(path: impl AsRef<Path>) -> bool {
        let path = path.as_ref();
        is_precompiled(path) || looks_compiled(path)
    }
}

/// Whether the file at `path` is compiled code (of either kind) rather than WebAssembly.
pub(crate) fn is_precompiled(path: &Path) -> bool {
    wasmtime::Engine::detect_precompiled_file(path).is_ok_and(|kind| kind.is_some())
}

/// Whether the file starts like an ELF file, as every artifact does.
fn looks_compiled(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == *ELF_MAGIC
}

/// The first bytes of an ELF file, and so of every compiled artifact.
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Loads a vouched-for artifact from a sealed copy of its file ([`SealedCopy`]), mapped: what
/// was vouched for when the load began is what runs, whatever happens to the file afterwards
/// (a guest given a directory that holds it may rewrite or truncate it while it runs).
pub(crate) fn load(engine: &wasmtime::Engine, file: &PrecompiledFile) -> wasmtime::Result<Compiled> {
    let opened = std::fs::File::open(&file.path)?;
    let meta = opened.metadata()?;
    if !meta.is_file() {
        return Err(wasmtime::Error::msg("not a regular file"));
    }
    let copy = SealedCopy::of(std::os::fd::AsFd::as_fd(&opened), meta.len())
        .map_err(|e| wasmtime::Error::new(std::io::Error::from(e)).context("failed to copy the artifact"))?;
    drop(opened);
    // SAFETY: the contract of `PrecompiledFile::trusted`, under which the file was vouched for;
    // the sealed copy cannot change afterwards.
    unsafe { super::compiled::deserialize_vouched(engine, &copy) }
}

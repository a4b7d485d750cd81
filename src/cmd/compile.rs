//! `wrt compile`: a guest compiled ahead of time, as `wasmtime compile` does, for
//! `wrt run --allow-precompiled`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use wrt_runtime::Runtime;

/// Compile a module or component ahead of time, for `wrt run --allow-precompiled`
#[derive(Debug, Args)]
pub(crate) struct CompileArgs {
    /// Where to write the compiled code (default: MODULE with the extension `.cwasm`)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// Compile fuel accounting in, for runs with `--fuel` (code compiled without it does not
    /// load into such a run, nor the other way round)
    #[arg(long)]
    fuel: bool,

    /// The WebAssembly module or component (.wasm or .wat)
    #[arg(value_name = "MODULE")]
    module: PathBuf,
}

impl CompileArgs {
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        let runtime = Runtime::builder().fuel(self.fuel).build()?;
        let bytes =
            std::fs::read(&self.module).with_context(|| format!("failed to read `{}`", self.module.display()))?;
        let name = self
            .module
            .file_name()
            .map_or_else(|| self.module.display().to_string(), |n| n.to_string_lossy().into_owned());
        let compiled = runtime.precompile(&name, &bytes)?;
        let output = self.output.unwrap_or_else(|| self.module.with_extension("cwasm"));
        write_artifact(&output, &compiled).with_context(|| format!("failed to write `{}`", output.display()))?;
        Ok(ExitCode::SUCCESS)
    }
}

/// Writes `bytes` to a new file beside `output`, `0644` less the umask (never writable by
/// anyone but its owner, whatever the umask), and renames it over `output`: a file already
/// there is replaced, not rewritten in place, so neither its mode nor a process that has it
/// open or mapped sees the new bytes.
fn write_artifact(output: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut name = output.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp-{}", std::process::id()));
    let tmp = output.with_file_name(name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, output));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

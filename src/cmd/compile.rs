//! `wrt compile`: a guest compiled ahead of time, as `wasmtime compile` does, for
//! `wrt run --allow-precompiled`.

use std::path::PathBuf;
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
        std::fs::write(&output, compiled).with_context(|| format!("failed to write `{}`", output.display()))?;
        Ok(ExitCode::SUCCESS)
    }
}

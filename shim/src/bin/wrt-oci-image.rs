//! `wrt-oci-image`: builds an OCI image archive whose entrypoint is a wasm guest, for
//! `ctr images import` (see `wrt_shim::image`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Parser;
use wrt_shim::image::{Image, ImageFile};

/// Build an OCI image archive (a tar for `ctr images import`) that runs GUEST under the wrt shim
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The guest: a core module or a component (`.wasm` or `.wat`), at /app.wasm in the image
    guest: PathBuf,
    /// The image's name, such as docker.io/library/hello:latest
    #[arg(long)]
    name: String,
    /// Where to write the archive
    #[arg(short, long)]
    output: PathBuf,
    /// One more file for the image, HOST=PATH (mode 0755 if the host file is executable)
    #[arg(long = "file", value_name = "HOST=PATH")]
    files: Vec<String>,
    /// An environment variable of the image, NAME=value (WRT_POLICY, WRT_TIMEOUT, ...)
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// The guest's arguments
    #[arg(last = true)]
    args: Vec<String>,
}

fn main() -> std::process::ExitCode {
    match build(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("wrt-oci-image: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn build(args: Args) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut files = Vec::new();
    for file in &args.files {
        let Some((source, path)) = file.split_once('=') else { bail!("--file {file:?}: expected HOST=PATH") };
        if !path.starts_with('/') {
            bail!("--file {file:?}: the path in the image must be absolute");
        }
        let mode = std::fs::metadata(source).with_context(|| format!("--file {source}"))?.permissions().mode();
        let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
        files.push(ImageFile { source: source.into(), path: path.to_owned(), mode });
    }
    let image = Image { name: args.name, guest: args.guest, args: args.args, env: args.env, files, entrypoint: None };
    let scratch = tempfile::tempdir()?;
    image.write(scratch.path(), &args.output)
}

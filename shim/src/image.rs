//! OCI images whose entrypoint is a wasm guest, as an image archive (`ctr images import`,
//! `docker load`): one ordinary root-file-system layer holding the guest at `/app.wasm` and
//! any other files the guest's host programs need (busybox, a policy file), and an image
//! configuration whose entrypoint is `/app.wasm`. An ordinary layer, not a wasm OCI artifact:
//! containerd before 1.6.25 does not pass wasm layers to a shim, and host programs need a root
//! file system anyway.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use oci_spec::image::{Arch, ConfigBuilder, ImageConfigurationBuilder, Os, RootFsBuilder};
use sha2::{Digest, Sha256};

/// Where the guest is in the image, and the image's entrypoint.
pub const GUEST_PATH: &str = "/app.wasm";

/// One file of the image: its content on the host, its path in the image, its mode.
#[derive(Debug, Clone)]
pub struct ImageFile {
    pub source: PathBuf,
    pub path: String,
    pub mode: u32,
}

/// An image to build.
#[derive(Debug, Clone, Default)]
pub struct Image {
    /// The image's name, such as `docker.io/library/hello:latest`.
    pub name: String,
    /// The guest's wasm (or `.wat`) file.
    pub guest: PathBuf,
    /// The guest's arguments after the entrypoint (the image's `Cmd`).
    pub args: Vec<String>,
    /// `NAME=value` entries of the image's environment (`WRT_*` settings among them).
    pub env: Vec<String>,
    /// More files for the root file system.
    pub files: Vec<ImageFile>,
}

impl Image {
    /// Writes the image archive to `out`. `scratch` is a directory for the layer's tar file.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, or the archive that cannot be written.
    pub fn write(&self, scratch: &Path, out: &Path) -> Result<()> {
        let layer_path = scratch.join("layer.tar");
        let diff_id = self.write_layer(&layer_path)?;
        let config = ConfigBuilder::default()
            .entrypoint(vec![GUEST_PATH.to_owned()])
            .cmd(self.args.clone())
            .env(self.env.clone())
            .build()?;
        let configuration = ImageConfigurationBuilder::default()
            .architecture(Arch::Amd64)
            .os(Os::Linux)
            .config(config)
            .rootfs(RootFsBuilder::default().typ("layers").diff_ids(vec![diff_id]).build()?)
            .build()?;
        let mut builder = oci_tar_builder::Builder::default();
        builder.add_config(configuration, self.name.clone()).add_layer(&layer_path);
        let file = File::create(out).with_context(|| format!("creating {}", out.display()))?;
        let mut writer = BufWriter::new(file);
        builder.build(&mut writer)?;
        writer.flush()?;
        Ok(())
    }

    /// The root file system as one tar file; returns its digest (`sha256:…`), which is also
    /// its diff id (the layer is not compressed).
    fn write_layer(&self, path: &Path) -> Result<String> {
        let mut tar = tar::Builder::new(BufWriter::new(File::create(path)?));
        let guest = ImageFile { source: self.guest.clone(), path: GUEST_PATH.to_owned(), mode: 0o644 };
        let mut dirs: Vec<String> = Vec::new();
        for file in std::iter::once(&guest).chain(&self.files) {
            let inside = file.path.trim_start_matches('/');
            // Parent directories first, each once, as tar readers expect.
            let mut at = String::new();
            for part in Path::new(inside).parent().into_iter().flat_map(Path::iter) {
                at = if at.is_empty() {
                    part.to_string_lossy().into_owned()
                } else {
                    format!("{at}/{}", part.to_string_lossy())
                };
                if !dirs.contains(&at) {
                    let mut header = tar::Header::new_gnu();
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(0o755);
                    header.set_size(0);
                    tar.append_data(&mut header, format!("{at}/"), std::io::empty())?;
                    dirs.push(at.clone());
                }
            }
            let mut content = File::open(&file.source).with_context(|| format!("reading {}", file.source.display()))?;
            let mut header = tar::Header::new_gnu();
            header.set_mode(file.mode);
            header.set_size(content.metadata()?.len());
            tar.append_data(&mut header, inside, &mut content)?;
        }
        tar.into_inner()?.flush()?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut File::open(path)?, &mut hasher)?;
        Ok(format!("sha256:{:x}", hasher.finalize()))
    }
}

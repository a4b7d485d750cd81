//! OCI images whose entrypoint is a wasm guest, as an image archive (`ctr images import`,
//! `docker load`): one ordinary root-file-system layer holding the guest at `/app.wasm` and
//! any other files the guest's host programs need (busybox, a policy file), and an image
//! configuration whose entrypoint is `/app.wasm`. An ordinary layer, not a wasm OCI artifact:
//! containerd before 1.6.25 does not pass wasm layers to a shim, and host programs need a root
//! file system anyway.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use oci_spec::image::{Arch, ConfigBuilder, ImageConfigurationBuilder, Os, RootFsBuilder};
use sha2::{Digest, Sha256};

/// Where the guest is in the image, and the image's entrypoint unless [`Image::entrypoint`]
/// names another.
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
    /// The entrypoint, when it is not the guest at [`GUEST_PATH`].
    pub entrypoint: Option<String>,
}

impl Image {
    /// Writes the image archive to `out`. `scratch` is a directory for the layer's tar file.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, two files at one path, or the archive that cannot be
    /// written.
    pub fn write(&self, scratch: &Path, out: &Path) -> Result<()> {
        let layer_path = scratch.join("layer.tar");
        let diff_id = self.write_layer(&layer_path)?;
        let config = ConfigBuilder::default()
            .entrypoint(vec![self.entrypoint.clone().unwrap_or_else(|| GUEST_PATH.to_owned())])
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
        let layer = Hashing { inner: BufWriter::new(File::create(path)?), hasher: Sha256::new() };
        let mut tar = tar::Builder::new(layer);
        let guest = ImageFile { source: self.guest.clone(), path: GUEST_PATH.to_owned(), mode: 0o644 };
        let mut dirs: Vec<String> = Vec::new();
        let mut paths: Vec<&str> = Vec::new();
        for file in std::iter::once(&guest).chain(&self.files) {
            let inside = file.path.trim_start_matches('/');
            if paths.contains(&inside) {
                bail!("two files at {:?} in the image (the guest is at {GUEST_PATH})", file.path);
            }
            paths.push(inside);
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
        let mut layer = tar.into_inner()?;
        layer.flush()?;
        Ok(format!("sha256:{:x}", layer.hasher.finalize()))
    }
}

/// A writer that hashes what it writes.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layers_digest_is_its_files_and_a_path_is_used_once() {
        let scratch = tempfile::tempdir().unwrap();
        let guest = scratch.path().join("guest.wat");
        std::fs::write(&guest, "(module)").unwrap();
        let image = Image { name: "example.com/x:1".into(), guest: guest.clone(), ..Image::default() };
        let digest = image.write_layer(&scratch.path().join("layer.tar")).unwrap();
        let bytes = std::fs::read(scratch.path().join("layer.tar")).unwrap();
        assert_eq!(digest, format!("sha256:{:x}", Sha256::digest(&bytes)));

        let twice = ImageFile { source: guest.clone(), path: "/bin/sh".into(), mode: 0o755 };
        let image = Image { files: vec![twice.clone(), twice], ..image };
        let err = image.write(scratch.path(), &scratch.path().join("image.tar")).unwrap_err();
        assert!(err.to_string().contains("two files at \"/bin/sh\""), "{err}");
        let over_the_guest = ImageFile { source: guest, path: "app.wasm".into(), mode: 0o644 };
        let image = Image { files: vec![over_the_guest], ..image };
        assert!(image.write(scratch.path(), &scratch.path().join("image.tar")).is_err());
    }
}

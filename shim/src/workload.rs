//! What a container may run under the runtime `io.containerd.wrt.v1`: a WebAssembly guest (its
//! process's first argument names a module or component in the container's root), or, in a
//! Kubernetes pod, the pod's sandbox container. Anything else is refused by name before it
//! runs: a native executable or a script would otherwise run outside wrt's sandbox.
//!
//! Decided on the host, from the OCI runtime spec and the container's root file system (the
//! bundle's, mounted before the container is created), before the container exists. Every path
//! is resolved inside that root (`openat2` with `RESOLVE_IN_ROOT`: a symbolic link or `..` in
//! the image cannot reach the host's files), and only a regular file is read.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::{Mode, SFlag, fstat};
use runtime_spec::runtime::Spec;
use wrt_runtime::MAX_MODULE_BYTES;

/// The annotation containerd's CRI plugin puts on every container of a Kubernetes pod, and its
/// value on the pod's sandbox (`pause`) container. The sandbox container is the node's own
/// image (containerd's `sandbox_image`), not the workload's: it holds the pod's namespaces and
/// runs natively, as under any other runtime.
pub const CONTAINER_TYPE: &str = "io.kubernetes.cri.container-type";
/// [`CONTAINER_TYPE`]'s value on a pod's sandbox container.
pub const SANDBOX: &str = "sandbox";

/// Where the entrypoint is looked up when it names no directory and the container sets no
/// `PATH`: the OCI image spec's default.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The first bytes of every WebAssembly binary, core module or component.
const WASM_MAGIC: [u8; 4] = *b"\0asm";

/// What one container runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Workload {
    /// A Kubernetes pod's sandbox container, run natively.
    PodSandbox,
    /// A wrt guest.
    Guest(Guest),
}

/// A guest and what the container gives it.
#[derive(PartialEq, Eq)]
pub struct Guest {
    /// The module's or component's path in the container.
    pub module: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The guest's `argv[0]`: the process's first argument, as the image gave it.
    pub argv0: String,
    /// The rest of the process's arguments.
    pub args: Vec<String>,
    /// The process's environment, `NAME=value` (with the `WRT_*` settings still in it).
    pub env: Vec<String>,
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guest")
            .field("module", &self.module)
            .field("bytes", &self.bytes.len())
            .field("argv0", &self.argv0)
            .field("args", &self.args)
            .field("env", &self.env)
            .finish()
    }
}

impl Workload {
    /// Classifies the container `spec` describes, looking its entrypoint up in the root file
    /// system at `root`. The error says why the container cannot run, naming its entrypoint.
    pub fn of(spec: &Spec, root: &Path) -> Result<Workload, String> {
        let annotations = spec.annotations().as_ref();
        if annotations.and_then(|a| a.get(CONTAINER_TYPE)).is_some_and(|t| t == SANDBOX) {
            return Ok(Workload::PodSandbox);
        }
        let process = spec.process().as_ref().ok_or("the container's spec has no process")?;
        let args = process.args().as_deref().unwrap_or_default();
        let Some((arg0, args)) = args.split_first() else {
            return Err("the container has no entrypoint (its process has no arguments)".to_owned());
        };
        let env = process.env().clone().unwrap_or_default();
        let root = File::open(root).map_err(|err| format!("the container's root {root:?}: {err}"))?;
        let (module, file) = resolve(arg0, process.cwd(), &env, &root)
            .map_err(|err| format!("entrypoint {arg0:?}: {err}"))?
            .ok_or_else(|| format!("entrypoint {arg0:?}: no such file in the container"))?;
        let bytes = read(file).map_err(|err| format!("entrypoint {arg0:?}: {err}"))?;
        if !bytes.starts_with(&WASM_MAGIC) {
            return Err(format!("entrypoint {arg0:?} is {}: {}", kind(&bytes), RUNS_ONLY));
        }
        Ok(Workload::Guest(Guest { module, bytes, argv0: arg0.clone(), args: args.to_vec(), env }))
    }
}

/// The end of every refusal of a native entrypoint.
const RUNS_ONLY: &str =
    "the runtime io.containerd.wrt.v1 runs WebAssembly guests only (a module or a component), never native programs";

/// The file `arg0` names, and its path in the container: a path (relative to the process's
/// `cwd`) when it holds a `/`, else the first regular file of that name in the container's
/// `PATH`.
fn resolve(arg0: &str, cwd: &Path, env: &[String], root: &File) -> Result<Option<(PathBuf, OwnedFd)>, String> {
    let candidates: Vec<PathBuf> = if arg0.contains('/') {
        vec![Path::new("/").join(cwd).join(arg0)]
    } else {
        let path_var = env.iter().rev().find_map(|e| e.strip_prefix("PATH=")).unwrap_or(DEFAULT_PATH);
        path_var.split(':').filter(|dir| dir.starts_with('/')).map(|dir| Path::new(dir).join(arg0)).collect()
    };
    for path in candidates {
        if let Some(fd) = open_regular(root, &path)? {
            return Ok(Some((path, fd)));
        }
    }
    Ok(None)
}

/// Opens `path` inside `root` as `O_PATH` (which opens nothing: no device is touched, no FIFO
/// waited on) if it is a regular file; `None` when there is none there. Any other failure
/// (`ENOSYS` on a kernel without `openat2`, before 5.6) is an error, with its reason.
fn open_regular(root: &File, path: &Path) -> Result<Option<OwnedFd>, String> {
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let fd = match openat2(root.as_fd(), path, how) {
        Ok(fd) => fd,
        Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => return Ok(None),
        Err(err) => return Err(format!("{path:?}: {err}")),
    };
    let stat = fstat(&fd).map_err(|err| format!("{path:?}: {err}"))?;
    Ok((SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG).then_some(fd))
}

/// The bytes of the regular file `file` (an `O_PATH` descriptor), reopened for reading through
/// `/proc/self/fd`, so that it is the file checked. At most [`MAX_MODULE_BYTES`].
fn read(file: OwnedFd) -> Result<Vec<u8>, String> {
    use std::os::fd::AsRawFd as _;
    let reopened = nix::fcntl::open(
        format!("/proc/self/fd/{}", file.as_raw_fd()).as_str(),
        OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|err| err.to_string())?;
    let mut bytes = Vec::new();
    File::from(reopened).take(MAX_MODULE_BYTES + 1).read_to_end(&mut bytes).map_err(|err| err.to_string())?;
    if bytes.len() as u64 > MAX_MODULE_BYTES {
        return Err(format!("larger than {MAX_MODULE_BYTES} bytes"));
    }
    Ok(bytes)
}

/// What a file that is not WebAssembly looks like, by its first bytes.
fn kind(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x7fELF") {
        "a native executable (ELF)"
    } else if bytes.starts_with(b"#!") {
        "a script (#!)"
    } else {
        "not a WebAssembly module"
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use runtime_spec::runtime::{ProcessBuilder, SpecBuilder};

    use super::*;

    fn spec(args: &[&str], env: &[&str], annotations: &[(&str, &str)]) -> Spec {
        let process = ProcessBuilder::default()
            .args(args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
            .env(env.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>())
            .cwd("/")
            .build()
            .unwrap();
        let annotations: HashMap<_, _> = annotations.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        SpecBuilder::default().process(process).annotations(annotations).build().unwrap()
    }

    fn root_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let path = root.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        root
    }

    #[test]
    fn a_wasm_entrypoint_is_a_guest_with_the_containers_arguments_and_environment() {
        let root = root_with(&[("/app.wasm", b"\0asm\x01\0\0\0")]);
        let spec = spec(&["/app.wasm", "a", "b"], &["PATH=/bin", "WRT_TIMEOUT=1s"], &[]);
        let Workload::Guest(guest) = Workload::of(&spec, root.path()).unwrap() else { panic!("not a guest") };
        assert_eq!(guest.module, Path::new("/app.wasm"));
        assert_eq!(guest.bytes, b"\0asm\x01\0\0\0");
        assert_eq!(guest.argv0, "/app.wasm");
        assert_eq!(guest.args, ["a", "b"]);
        assert_eq!(guest.env, ["PATH=/bin", "WRT_TIMEOUT=1s"]);
    }

    #[test]
    fn a_bare_name_is_looked_up_in_the_containers_path() {
        let root = root_with(&[("/opt/guests/hello.wasm", b"\0asm\x0d\0\x01\0"), ("/bin/hello.wasm", b"#!/bin/sh\n")]);
        let spec = spec(&["hello.wasm"], &["PATH=/opt/guests:/bin"], &[]);
        let Workload::Guest(guest) = Workload::of(&spec, root.path()).unwrap() else { panic!("not a guest") };
        assert_eq!(guest.module, Path::new("/opt/guests/hello.wasm"));
    }

    #[test]
    fn no_link_or_dot_dot_in_the_image_reaches_the_hosts_files() {
        let host = root_with(&[("/secret.wasm", b"\0asm\x01\0\0\0")]);
        let secret = host.path().join("secret.wasm");
        let root = root_with(&[]);
        std::os::unix::fs::symlink(&secret, root.path().join("absolute.wasm")).unwrap();
        let up = format!("{}{}", "../".repeat(20), secret.display());
        std::os::unix::fs::symlink(&up, root.path().join("relative.wasm")).unwrap();
        for entrypoint in ["/absolute.wasm", "/relative.wasm", up.as_str()] {
            let err = Workload::of(&spec(&[entrypoint], &[], &[]), root.path()).unwrap_err();
            assert!(err.contains("no such file in the container"), "{entrypoint}: {err}");
        }
        // A link that stays inside the root is followed there.
        std::fs::write(root.path().join("real.wasm"), b"\0asm\x01\0\0\0").unwrap();
        std::os::unix::fs::symlink("/real.wasm", root.path().join("app.wasm")).unwrap();
        assert!(matches!(Workload::of(&spec(&["/app.wasm"], &[], &[]), root.path()), Ok(Workload::Guest(_))));
    }

    #[test]
    fn a_fifo_or_a_directory_is_no_module_and_is_never_opened() {
        let root = root_with(&[]);
        nix::unistd::mkfifo(&root.path().join("app.wasm"), Mode::from_bits_truncate(0o644)).unwrap();
        std::fs::create_dir(root.path().join("dir.wasm")).unwrap();
        for entrypoint in ["/app.wasm", "/dir.wasm"] {
            let err = Workload::of(&spec(&[entrypoint], &[], &[]), root.path()).unwrap_err();
            assert!(err.contains("no such file in the container"), "{entrypoint}: {err}");
        }
    }

    #[test]
    fn native_programs_and_scripts_are_refused_by_name() {
        let root =
            root_with(&[("/bin/busybox", b"\x7fELF\x02\x01"), ("/run.sh", b"#!/bin/sh\necho hi\n"), ("/data", b"hi")]);
        for (entrypoint, says) in [
            ("/bin/busybox", "entrypoint \"/bin/busybox\" is a native executable (ELF)"),
            ("busybox", "entrypoint \"busybox\" is a native executable (ELF)"),
            ("/run.sh", "entrypoint \"/run.sh\" is a script (#!)"),
            ("/data", "entrypoint \"/data\" is not a WebAssembly module"),
            ("/missing.wasm", "entrypoint \"/missing.wasm\": no such file"),
            ("/bin", "entrypoint \"/bin\": no such file"),
            ("/bad\u{1b}[2J.wasm", "entrypoint \"/bad\\u{1b}[2J.wasm\""),
        ] {
            let err = Workload::of(&spec(&[entrypoint], &[], &[]), root.path()).unwrap_err();
            assert!(err.contains(says), "{entrypoint}: {err}");
            assert!(!err.contains('\u{1b}'), "{entrypoint}: a control byte reached the message: {err}");
        }
        let err = Workload::of(&spec(&["/bin/busybox"], &[], &[]), root.path()).unwrap_err();
        assert!(err.ends_with(RUNS_ONLY), "{err}");
        let err = Workload::of(&spec(&[], &[], &[]), root.path()).unwrap_err();
        assert!(err.contains("no entrypoint"), "{err}");
    }

    #[test]
    fn only_a_pods_sandbox_container_runs_natively() {
        let root = root_with(&[("/pause", b"\x7fELF\x02\x01")]);
        let sandbox = spec(&["/pause"], &[], &[(CONTAINER_TYPE, SANDBOX)]);
        assert_eq!(Workload::of(&sandbox, root.path()), Ok(Workload::PodSandbox));
        let container = spec(&["/pause"], &[], &[(CONTAINER_TYPE, "container")]);
        assert!(Workload::of(&container, root.path()).unwrap_err().contains("native executable"));
    }
}

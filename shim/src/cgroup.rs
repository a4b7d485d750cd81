//! A container's cgroup: which driver makes it, and where a running container's is.
//!
//! containerd's CRI plugin writes a container's `cgroupsPath` in one of two forms, from the
//! cgroup parent the kubelet gives the pod: a path (`/kubepods/besteffort/pod…/ID`, the
//! kubelet's cgroupfs driver) or systemd's `slice:prefix:name`
//! (`kubepods-besteffort-pod….slice:cri-containerd:ID`, its systemd driver, chosen by the
//! parent's `.slice` suffix). The form decides the driver, as it decides runc's: the systemd
//! form needs systemd, which makes the container's scope inside the pod's slice; made as a path,
//! the cgroup would land at the top of the hierarchy, outside every limit of the pod. Where
//! systemd is not running, a container with the systemd form is refused.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use crate::options::Options;

/// Where systemd, running as the init system, says so (`sd_booted(3)`).
const SYSTEMD_RUNNING: &str = "/run/systemd/system";

/// Whether a container whose spec has `cgroups_path` is made by systemd, as its form says. A
/// `SystemdCgroup` in the runtime's `options` that says otherwise is refused, naming both.
pub fn uses_systemd(cgroups_path: Option<&Path>, options: &Options) -> Result<bool> {
    let path = cgroups_path.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let systemd_form = is_systemd_form(&path);
    if let Some(option) = options.systemd_cgroup
        && option != systemd_form
    {
        bail!(
            "the runtime's options say SystemdCgroup = {option}, but the container's cgroup path {path:?} is in {} form",
            if systemd_form { "systemd's slice:prefix:name" } else { "a cgroupfs path's" }
        );
    }
    if systemd_form && !Path::new(SYSTEMD_RUNNING).exists() {
        bail!(
            "the container's cgroup path {path:?} is systemd's (slice:prefix:name, as the kubelet's systemd cgroup driver makes it), but systemd is not running on this node: set the kubelet's cgroupDriver to cgroupfs"
        );
    }
    Ok(systemd_form)
}

/// `slice:prefix:name`, the slice ending in `.slice` (or empty: systemd's default slice).
fn is_systemd_form(path: &str) -> bool {
    let parts: Vec<&str> = path.split(':').collect();
    parts.len() == 3 && !parts[0].contains('/') && (parts[0].is_empty() || parts[0].ends_with(".slice"))
}

/// The cgroup of a process, as `/proc/PID/cgroup` says, in the shim's cgroup namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cgroup {
    /// cgroup v1 (or hybrid): each controller's directory.
    V1(Vec<(String, PathBuf)>),
    /// cgroup v2 alone: its one directory.
    V2(PathBuf),
}

/// Where the cgroup file systems are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

impl Cgroup {
    /// The cgroup of process `pid`.
    pub fn of_process(pid: u32) -> Result<Cgroup> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .with_context(|| format!("the container's process {pid} has ended"))?;
        Ok(Cgroup::parse(&text, Path::new(CGROUP_ROOT)))
    }

    /// Reads `/proc/PID/cgroup`'s `text` with the cgroup file systems mounted under `root`.
    fn parse(text: &str, root: &Path) -> Cgroup {
        let mut v1 = Vec::new();
        let mut unified = None;
        for line in text.lines() {
            let mut fields = line.splitn(3, ':');
            let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
                continue;
            };
            let relative = path.trim_start_matches('/');
            if controllers.is_empty() {
                unified = Some(root.join(relative));
            }
            for controller in controllers.split(',').filter(|c| !c.is_empty() && !c.starts_with("name=")) {
                v1.push((controller.to_owned(), root.join(controller).join(relative)));
            }
        }
        match (v1.is_empty(), unified) {
            (true, Some(dir)) => Cgroup::V2(dir),
            _ => Cgroup::V1(v1),
        }
    }

    /// The directory of v1 `controller`.
    pub fn v1_dir(&self, controller: &str) -> Option<&Path> {
        match self {
            Cgroup::V1(dirs) => dirs.iter().find(|(c, _)| c == controller).map(|(_, dir)| dir.as_path()),
            Cgroup::V2(_) => None,
        }
    }

    /// The cgroup's path below the hierarchy's root (the memory controller's for v1), as a
    /// cgroup manager takes it.
    pub fn relative_path(&self) -> Option<PathBuf> {
        let dir = match self {
            Cgroup::V1(_) => self.v1_dir("memory")?,
            Cgroup::V2(dir) => dir,
        };
        let root = match self {
            Cgroup::V1(_) => Path::new(CGROUP_ROOT).join("memory"),
            Cgroup::V2(_) => PathBuf::from(CGROUP_ROOT),
        };
        dir.strip_prefix(root).ok().map(|rel| Path::new("/").join(rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup_paths_form_decides_the_driver() {
        let none = Options::default();
        assert!(!uses_systemd(Some(Path::new("/kubepods/besteffort/pod1/abc")), &none).unwrap());
        assert!(!uses_systemd(None, &none).unwrap());
        assert!(is_systemd_form("kubepods-besteffort-pod1.slice:cri-containerd:abc"));
        assert!(is_systemd_form(":cri-containerd:abc"));
        assert!(!is_systemd_form("/a/b:c:d"));
        assert!(!is_systemd_form("a.scope:b:c"));
        let contradicting = Options { systemd_cgroup: Some(true) };
        let err = uses_systemd(Some(Path::new("/kubepods/pod1/abc")), &contradicting).unwrap_err().to_string();
        assert!(err.contains("SystemdCgroup = true") && err.contains("/kubepods/pod1/abc"), "{err}");
    }

    #[test]
    fn without_systemd_the_systemd_form_is_refused_naming_the_kubelets_setting() {
        if Path::new(SYSTEMD_RUNNING).exists() {
            eprintln!("SKIPPED: systemd runs here");
            return;
        }
        let path = Path::new("kubepods-besteffort-pod1.slice:cri-containerd:abc");
        let err = uses_systemd(Some(path), &Options::default()).unwrap_err().to_string();
        assert!(err.contains("systemd is not running") && err.contains("cgroupDriver to cgroupfs"), "{err}");
    }

    #[test]
    fn proc_cgroup_is_read_for_v1_hybrid_and_v2() {
        let root = Path::new("/cg");
        let hybrid = "12:pids:/pod/c1\n4:cpu,cpuacct:/pod/c1\n3:memory:/pod/c1\n1:name=systemd:/x\n0::/y\n";
        let cgroup = Cgroup::parse(hybrid, root);
        assert_eq!(cgroup.v1_dir("cpuacct"), Some(Path::new("/cg/cpuacct/pod/c1")));
        assert_eq!(cgroup.v1_dir("memory"), Some(Path::new("/cg/memory/pod/c1")));
        assert_eq!(cgroup.v1_dir("systemd"), None);
        assert_eq!(Cgroup::parse("0::/kubepods/pod/c1\n", root), Cgroup::V2(PathBuf::from("/cg/kubepods/pod/c1")));
    }
}

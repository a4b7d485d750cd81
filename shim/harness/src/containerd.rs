//! A containerd of a test's (or a bench's) own: a private root, state and socket under a
//! temporary directory, the shim on its PATH, driven with `ctr`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use wrt_shim::image::Image;

/// A containerd of this test's own, ended (and its tasks killed) when dropped.
#[derive(Debug)]
pub struct Containerd {
    dir: tempfile::TempDir,
    daemon: Child,
    namespace: String,
}

impl Containerd {
    /// Starts containerd, or says why it cannot and returns `None` (a failure under CI).
    pub fn start(shim: &str, test: &str) -> Option<Self> {
        Self::start_with(shim, test, &[])
    }

    /// [`Self::start`], with more variables in containerd's environment (and so its shims').
    pub fn start_with(shim: &str, test: &str, env: &[(&str, &str)]) -> Option<Self> {
        if !crate::preconditions::met(test, &["containerd"]) {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        let config = format!(
            r#"version = 2
root = "{root}"
state = "{state}"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "{sock}"
[ttrpc]
  address = "{sock}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{opt}"
"#,
            root = path.join("root").display(),
            state = path.join("state").display(),
            sock = path.join("containerd.sock").display(),
            opt = path.join("opt").display(),
        );
        std::fs::write(path.join("config.toml"), config).unwrap();
        let shim_dir = Path::new(shim).parent().unwrap();
        let search = format!("{}:{}", shim_dir.display(), std::env::var("PATH").unwrap_or_default());
        let log = std::fs::File::create(path.join("containerd.log")).unwrap();
        let mut daemon = Command::new("containerd");
        // containerd, its shims and their containers start with default signal dispositions,
        // whatever the test runner ignores (`nohup`, a background job).
        let daemon = wrt_test_support::known_state(&mut daemon)
            .arg("--config")
            .arg(path.join("config.toml"))
            .env("PATH", search)
            .env(wrt_shim::node::CACHE_VAR, path.join("cache"))
            .envs(env.iter().copied())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let namespace = format!("wrt-test-{}-{}", std::process::id(), test.replace('_', "-"));
        let containerd = Containerd { dir, daemon, namespace };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !containerd.ctr(&["version"]).status.success() {
            assert!(Instant::now() < deadline, "containerd did not start: {}", containerd.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(containerd)
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("containerd.sock")
    }

    /// The shims' cache of compiled guests.
    pub fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("containerd.log")).unwrap_or_default()
    }

    /// `ctr` against this containerd, in this test's namespace.
    pub fn command(&self) -> Command {
        let mut ctr = Command::new("ctr");
        ctr.arg("--address").arg(self.socket()).arg("--namespace").arg(&self.namespace).stdin(Stdio::null());
        ctr
    }

    /// `ctr ARGS`, waited for.
    pub fn ctr(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Builds `image` and imports it; returns its name.
    pub fn import(&self, image: &Image) -> String {
        let archive = self.dir.path().join("image.tar");
        image.write(self.dir.path(), &archive).unwrap();
        let out = self.ctr(&["images", "import", "--all-platforms", archive.to_str().unwrap()]);
        assert!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
        image.name.clone()
    }

    /// `ctr run --rm` of `image` as task `id` under the wrt shim, started and left running,
    /// stdout piped.
    pub fn start_task(&self, image: &str, id: &str) -> Child {
        let mut ctr = self.command();
        ctr.args(["run", "--rm", "--runtime", "io.containerd.wrt.v1", image, id]).stdout(Stdio::piped());
        ctr.spawn().unwrap()
    }

    /// `ctr run --rm` of `image` as task `id` under the wrt shim: its output and status.
    pub fn run(&self, image: &str, id: &str) -> Output {
        self.run_with(&[], image, id)
    }

    /// [`Self::run`] with more options for `ctr run`.
    pub fn run_with(&self, options: &[&str], image: &str, id: &str) -> Output {
        self.command()
            .args(["run", "--rm", "--runtime", "io.containerd.wrt.v1"])
            .args(options)
            .args([image, id])
            .output()
            .unwrap()
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        // Tasks first (their shims outlive containerd otherwise), then containerd.
        let tasks = self.ctr(&["tasks", "list", "--quiet"]);
        for id in String::from_utf8_lossy(&tasks.stdout).lines() {
            let _ = self.ctr(&["tasks", "kill", "--signal", "SIGKILL", id]);
            let _ = self.ctr(&["tasks", "delete", "--force", id]);
        }
        let containers = self.ctr(&["containers", "list", "--quiet"]);
        for id in String::from_utf8_lossy(&containers.stdout).lines() {
            let _ = self.ctr(&["containers", "delete", id]);
        }
        let _ = Command::new("kill").arg(self.daemon.id().to_string()).status();
        let _ = self.daemon.wait();
        // What lives outside the private root: the shim's state directory for the namespace
        // and the namespace's (now empty) cgroups, one per controller.
        let _ = std::fs::remove_dir(Path::new("/run/containerd/wrt").join(&self.namespace));
        for controller in std::fs::read_dir("/sys/fs/cgroup").into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir(controller.path().join(&self.namespace));
        }
    }
}

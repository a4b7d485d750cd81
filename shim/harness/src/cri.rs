//! A containerd of a test's own with its CRI plugin, driven as a kubelet drives it: through the
//! Kubernetes Container Runtime Interface (`runtime.v1`) on containerd's socket. Like
//! [`crate::containerd`], it has a private root, state and socket under a temporary
//! directory and the shim on its PATH; its CRI plugin has the runtimes `runc` (the default) and
//! `wrt` (`io.containerd.wrt.v1`, with the options table cluster installers write), and any a
//! test adds ([`CriBuilder::runtime`]).
//!
//! Pods use the node's network (`NamespaceOption.network = NODE`), so no CNI plugin is called,
//! and their sandbox image is a pause image built here (busybox's `sleep`) and imported, so
//! nothing is pulled. Each pod's cgroups are under a parent unique to the test, which is
//! removed (with the pods) when the harness is dropped.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::security_profile::ProfileType;
use k8s_cri::v1::{
    Capability, ContainerConfig, ContainerMetadata, ContainerState, ContainerStats, ContainerStatsRequest,
    ContainerStatus, ContainerStatusRequest, ContainerStatusResponse, CreateContainerRequest, ExecSyncRequest,
    ExecSyncResponse, ImageSpec, ImageStatusRequest, Int64Value, LinuxContainerConfig, LinuxContainerResources,
    LinuxContainerSecurityContext, LinuxPodSandboxConfig, LinuxSandboxSecurityContext, ListPodSandboxRequest,
    NamespaceMode, NamespaceOption, PodSandboxConfig, PodSandboxMetadata, RemoveContainerRequest,
    RemovePodSandboxRequest, RunPodSandboxRequest, SecurityProfile, StartContainerRequest, StopContainerRequest,
    StopPodSandboxRequest, UpdateContainerResourcesRequest, VersionRequest,
};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Code, Response, Status};
use wrt_shim::image::{Image, ImageFile};

/// The name of the pause image every pod's sandbox container runs.
pub const PAUSE_IMAGE: &str = "docker.io/wrt-test/pause:latest";

/// The CRI's containerd namespace: images must be there for the CRI to see them.
const K8S_NAMESPACE: &str = "k8s.io";

/// How long one CRI call may take before it fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// A pod's security, as a kubelet passes a pod's `securityContext` (and its containers') to the
/// CRI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// Nothing set: root, the runtime's default capabilities, no seccomp filter (the kubelet's
    /// `Unconfined` unless `--seccomp-default`).
    Default,
    /// `runAsUser: 1000`, nothing else.
    NonRoot,
    /// Pod Security Standards' `restricted`: `runAsUser: 1000`, `allowPrivilegeEscalation:
    /// false`, `capabilities.drop: ["ALL"]`, `seccompProfile.type: RuntimeDefault`.
    Restricted,
}

impl Security {
    fn run_as_user(self) -> Option<Int64Value> {
        match self {
            Security::Default => None,
            Security::NonRoot | Security::Restricted => Some(Int64Value { value: 1000 }),
        }
    }

    fn seccomp(self) -> SecurityProfile {
        let profile_type = match self {
            Security::Default | Security::NonRoot => ProfileType::Unconfined,
            Security::Restricted => ProfileType::RuntimeDefault,
        };
        SecurityProfile { profile_type: profile_type.into(), localhost_ref: String::new() }
    }
}

/// The namespaces a kubelet asks for a pod on the node's network: the node's network, a PID
/// namespace per container (`shareProcessNamespace: false`), the pod's IPC namespace.
fn namespaces() -> NamespaceOption {
    NamespaceOption {
        network: NamespaceMode::Node.into(),
        pid: NamespaceMode::Container.into(),
        ipc: NamespaceMode::Pod.into(),
        ..NamespaceOption::default()
    }
}

/// A runtime of the CRI plugin: `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.NAME]`.
#[derive(Debug, Clone)]
struct RuntimeEntry {
    name: String,
    runtime_type: String,
    /// The body of its `options` table (TOML lines), or `None` for no table.
    options: Option<String>,
}

/// What [`Cri`] starts with: the runtimes `runc` (`io.containerd.runc.v2`, no options) and
/// `wrt` (`io.containerd.wrt.v1`, options `SystemdCgroup = false`), and no extra environment.
#[derive(Debug)]
pub struct CriBuilder {
    /// The shim's binary, put on containerd's `PATH`.
    shim: String,
    test: String,
    runtimes: Vec<RuntimeEntry>,
    env: Vec<(String, String)>,
}

impl CriBuilder {
    /// Adds the runtime `name` of type `runtime_type` (or replaces the one of that name);
    /// `options` is the body of its options table (TOML lines), `None` for no table.
    pub fn runtime(mut self, name: &str, runtime_type: &str, options: Option<&str>) -> Self {
        self.runtimes.retain(|runtime| runtime.name != name);
        self.runtimes.push(RuntimeEntry {
            name: name.to_owned(),
            runtime_type: runtime_type.to_owned(),
            options: options.map(str::to_owned),
        });
        self
    }

    /// Sets `name=value` in containerd's environment (and so its shims').
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Starts containerd, or says why it cannot and returns `None` (a failure under CI).
    pub fn start(self) -> Option<Cri> {
        let test = self.test.as_str();
        if !crate::preconditions::met(test, &["containerd", "runc"]) {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        std::fs::write(path.join("config.toml"), self.config(path)).unwrap();
        let shim_dir = Path::new(&self.shim).parent().unwrap();
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
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let socket = path.join("containerd.sock");
        let channel = {
            // The channel's worker task runs on this runtime.
            let _runtime = tokio.enter();
            Endpoint::try_from("http://[::]:50051").unwrap().timeout(CALL_TIMEOUT).connect_with_connector_lazy(
                tower::service_fn(move |_: Uri| {
                    let socket = socket.clone();
                    async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
                }),
            )
        };
        let unique = format!("{}-{}", std::process::id(), test.replace('_', "-"));
        let cri = Cri {
            test: test.to_owned(),
            dir,
            daemon,
            tokio,
            channel,
            cgroup_parent: format!("/wrt-cri-test-{unique}"),
            slice_marker: format!("wrt_cri_{}", unique.replace('-', "_")),
            cgroups: Mutex::new(BTreeSet::new()),
            imports: AtomicU32::new(0),
            pods: AtomicU32::new(0),
        };
        // The CRI answers once its plugin has loaded its state (until then: "server is not
        // initialized yet").
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match cri.call(cri.runtime().version(VersionRequest { version: "v1".into() })) {
                Ok(_) => break,
                Err(err) => {
                    assert!(Instant::now() < deadline, "the CRI did not start: {err}\n{}", cri.log());
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        cri.import(&pause_image());
        Some(cri)
    }

    /// containerd's configuration (version 2), with everything under `dir`. Logged at debug
    /// level: the specs containerd makes and the requests the shims receive (their runtime
    /// options among them) are in the log. The CRI's streaming server (for exec and attach,
    /// unused) listens on a port of its own, so that containerds started side by side do not
    /// collide on the default port.
    fn config(&self, dir: &Path) -> String {
        let cri = r#"[plugins."io.containerd.grpc.v1.cri"#;
        let mut runtimes = String::new();
        for runtime in &self.runtimes {
            let name = &runtime.name;
            runtimes.push_str(&format!(
                "  {cri}\".containerd.runtimes.{name}]\n    runtime_type = \"{}\"\n",
                runtime.runtime_type
            ));
            if let Some(options) = &runtime.options {
                runtimes.push_str(&format!("  {cri}\".containerd.runtimes.{name}.options]\n"));
                for line in options.lines() {
                    runtimes.push_str(&format!("    {line}\n"));
                }
            }
        }
        format!(
            r#"version = 2
root = "{root}"
state = "{state}"
[grpc]
  address = "{sock}"
[ttrpc]
  address = "{sock}.ttrpc"
[debug]
  level = "debug"
[plugins."io.containerd.internal.v1.opt"]
  path = "{opt}"
{cri}"]
  sandbox_image = "{PAUSE_IMAGE}"
  restrict_oom_score_adj = {restrict_oom_score_adj}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  {cri}".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
{runtimes}  {cri}".cni]
    bin_dir = "{cni}/bin"
    conf_dir = "{cni}/net.d"
"#,
            root = dir.join("root").display(),
            state = dir.join("state").display(),
            sock = dir.join("containerd.sock").display(),
            opt = dir.join("opt").display(),
            cni = dir.join("cni").display(),
            restrict_oom_score_adj = !can_lower_oom_score_adj(),
        )
    }
}

/// The pause image: busybox as `/bin/sleep`, sleeping as long as `sleep` can. A sandbox
/// container is ended by `SIGKILL`, so it needs no signal handling. Its `PATH`, as the
/// `registry.k8s.io/pause` images have one: youki's executor (the shim's, for a sandbox) looks
/// the entrypoint up in it and refuses a container with none, even for an absolute path.
fn pause_image() -> Image {
    Image {
        name: PAUSE_IMAGE.into(),
        // The image builder always puts a guest at /app.wasm; the sandbox never runs it.
        guest: wrt_test_guests::CLI_HELLO.into(),
        files: vec![ImageFile { source: "/bin/busybox".into(), path: "/bin/sleep".into(), mode: 0o755 }],
        entrypoint: Some("/bin/sleep".into()),
        args: vec!["2147483647".into()],
        env: vec!["PATH=/bin".into()],
    }
}

/// A containerd with its CRI plugin, of this test's own. Dropping it stops and removes every
/// pod, ends containerd and removes the cgroups of the test's pods.
pub struct Cri {
    test: String,
    dir: tempfile::TempDir,
    daemon: Child,
    tokio: tokio::runtime::Runtime,
    channel: Channel,
    /// The cgroup parent of the test's pods (cgroupfs style).
    cgroup_parent: String,
    /// What the test's systemd-style pod slices are named for (no `-`: systemd reads a dash as
    /// nesting).
    slice_marker: String,
    /// Cgroups (paths relative to each hierarchy's root) to remove when dropped, if empty.
    cgroups: Mutex<BTreeSet<String>>,
    /// Images imported so far (each archive is written to a file of its own).
    imports: AtomicU32,
    /// Pods configured so far (each gets a log directory and a uid of its own).
    pods: AtomicU32,
}

impl std::fmt::Debug for Cri {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cri").field("test", &self.test).field("dir", &self.dir.path()).finish_non_exhaustive()
    }
}

impl Cri {
    /// Starts containerd with the default runtimes ([`CriBuilder`]); `None` when it cannot
    /// (said loudly; a failure under CI).
    pub fn start(shim: &str, test: &str) -> Option<Self> {
        Self::builder(shim, test).start()
    }

    /// A containerd to configure before it starts.
    pub fn builder(shim: &str, test: &str) -> CriBuilder {
        CriBuilder {
            shim: shim.to_owned(),
            test: test.to_owned(),
            runtimes: vec![
                RuntimeEntry { name: "runc".into(), runtime_type: "io.containerd.runc.v2".into(), options: None },
                RuntimeEntry {
                    name: "wrt".into(),
                    runtime_type: "io.containerd.wrt.v1".into(),
                    options: Some("SystemdCgroup = false".into()),
                },
            ],
            env: Vec::new(),
        }
    }

    /// containerd's log (at debug level).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("containerd.log")).unwrap_or_default()
    }

    /// The last `lines` lines of containerd's log, for a failure's message.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Writes `contents` to a new file `name` in the test's directory; returns its path.
    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join("files").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Builds `image`, imports it into the CRI's namespace and waits until the CRI lists it;
    /// returns its name.
    pub fn import(&self, image: &Image) -> String {
        let n = self.imports.fetch_add(1, Ordering::Relaxed) + 1;
        let scratch = self.dir.path().join(format!("image-{n}"));
        std::fs::create_dir_all(&scratch).unwrap();
        let archive = scratch.join("image.tar");
        image.write(&scratch, &archive).unwrap();
        let out = Command::new("ctr")
            .arg("--address")
            .arg(self.dir.path().join("containerd.sock"))
            .args(["--namespace", K8S_NAMESPACE, "images", "import", "--all-platforms"])
            .arg(&archive)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "import of {}: {}", image.name, String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_dir_all(&scratch);
        // The CRI learns of an image from containerd's events, after the import has returned.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let request = ImageStatusRequest { image: Some(image_spec(&image.name)), verbose: false };
            let status = self.call(self.images().image_status(request)).unwrap();
            if status.image.is_some() {
                return image.name.clone();
            }
            assert!(Instant::now() < deadline, "the CRI never listed {}:\n{}", image.name, self.log_tail(30));
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The configuration of a pod named `name` with `security`, as a kubelet sends it: the
    /// node's network, a log directory of its own, the test's cgroup parent.
    pub fn pod(&self, name: &str, security: Security) -> PodSandboxConfig {
        let n = self.pods.fetch_add(1, Ordering::Relaxed) + 1;
        let log_directory = self.dir.path().join("pods").join(format!("{n}-{name}"));
        std::fs::create_dir_all(&log_directory).unwrap();
        self.cgroups.lock().unwrap().insert(self.cgroup_parent.clone());
        PodSandboxConfig {
            metadata: Some(PodSandboxMetadata {
                name: name.to_owned(),
                uid: format!("{}-{n}", self.slice_marker),
                namespace: "default".to_owned(),
                attempt: 0,
            }),
            // A kubelet names no hostname for a pod on the node's network (which has the node's UTS
            // namespace): containerd puts the node's own in the spec.
            hostname: String::new(),
            log_directory: log_directory.display().to_string(),
            linux: Some(LinuxPodSandboxConfig {
                cgroup_parent: self.cgroup_parent.clone(),
                security_context: Some(LinuxSandboxSecurityContext {
                    namespace_options: Some(namespaces()),
                    run_as_user: security.run_as_user(),
                    seccomp: Some(security.seccomp()),
                    ..LinuxSandboxSecurityContext::default()
                }),
                ..LinuxPodSandboxConfig::default()
            }),
            ..PodSandboxConfig::default()
        }
    }

    /// A systemd-style cgroup parent for a pod, as a kubelet with the systemd cgroup driver
    /// names a best-effort pod's: `kubepods-besteffort-pod<unique>.slice`. Its cgroups, and
    /// those of the slices systemd would nest it in, are removed when the harness is dropped.
    pub fn systemd_pod_slice(&self) -> String {
        let pod = format!("kubepods-besteffort-pod{}.slice", self.slice_marker);
        let mut cgroups = self.cgroups.lock().unwrap();
        cgroups.insert(format!("/kubepods.slice/kubepods-besteffort.slice/{pod}"));
        cgroups.insert("/kubepods.slice/kubepods-besteffort.slice".to_owned());
        cgroups.insert("/kubepods.slice".to_owned());
        pod
    }

    /// The configuration of a container named `name` running `image` with `command` (the
    /// image's entrypoint when empty) and `args` (the image's `Cmd` when both are empty), with
    /// the security a kubelet derives from a pod's `security`.
    pub fn container(
        &self,
        name: &str,
        image: &str,
        command: &[&str],
        args: &[&str],
        security: Security,
    ) -> ContainerConfig {
        let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let restricted = security == Security::Restricted;
        ContainerConfig {
            metadata: Some(ContainerMetadata { name: name.to_owned(), attempt: 0 }),
            image: Some(image_spec(image)),
            command: strings(command),
            args: strings(args),
            log_path: format!("{name}/0.log"),
            linux: Some(LinuxContainerConfig {
                resources: Some(LinuxContainerResources::default()),
                security_context: Some(LinuxContainerSecurityContext {
                    capabilities: restricted
                        .then(|| Capability { drop_capabilities: vec!["ALL".to_owned()], ..Capability::default() }),
                    namespace_options: Some(namespaces()),
                    run_as_user: security.run_as_user(),
                    no_new_privs: restricted,
                    seccomp: Some(security.seccomp()),
                    ..LinuxContainerSecurityContext::default()
                }),
            }),
            ..ContainerConfig::default()
        }
    }

    /// RunPodSandbox with the runtime `handler`: the pod's id.
    pub fn run_pod_sandbox(&self, handler: &str, config: &PodSandboxConfig) -> Result<String, CallError> {
        let request = RunPodSandboxRequest { config: Some(config.clone()), runtime_handler: handler.to_owned() };
        self.call(self.runtime().run_pod_sandbox(request)).map(|r| r.pod_sandbox_id)
    }

    /// CreateContainer in `pod` (configured with `pod_config`): the container's id.
    pub fn create_container(
        &self,
        pod: &str,
        config: &ContainerConfig,
        pod_config: &PodSandboxConfig,
    ) -> Result<String, CallError> {
        let request = CreateContainerRequest {
            pod_sandbox_id: pod.to_owned(),
            config: Some(config.clone()),
            sandbox_config: Some(pod_config.clone()),
        };
        self.call(self.runtime().create_container(request)).map(|r| r.container_id)
    }

    /// StartContainer.
    pub fn start_container(&self, container: &str) -> Result<(), CallError> {
        let request = StartContainerRequest { container_id: container.to_owned() };
        self.call(self.runtime().start_container(request)).map(drop)
    }

    /// ContainerStatus, verbose (`info["info"]` holds containerd's JSON of the container, with
    /// its task's `pid`).
    pub fn container_status(&self, container: &str) -> Result<ContainerStatusResponse, CallError> {
        let request = ContainerStatusRequest { container_id: container.to_owned(), verbose: true };
        self.call(self.runtime().container_status(request))
    }

    /// The pid (on the host) of the container's task, from its verbose status.
    pub fn pid(&self, container: &str) -> u32 {
        let status = self.container_status(container).unwrap_or_else(|s| panic!("status of {container}: {s:?}"));
        let info = status.info.get("info").unwrap_or_else(|| panic!("no verbose info for {container}: {status:?}"));
        let info: serde_json::Value = serde_json::from_str(info).unwrap();
        let pid = info["pid"].as_u64().unwrap_or_else(|| panic!("no pid in the info of {container}: {info}"));
        u32::try_from(pid).unwrap()
    }

    /// Waits until the container has exited (at most `timeout`); its status.
    pub fn wait_exited(&self, container: &str, timeout: Duration) -> ContainerStatus {
        let deadline = Instant::now() + timeout;
        loop {
            let response = self.container_status(container).unwrap_or_else(|s| panic!("status of {container}: {s:?}"));
            let status = response.status.unwrap();
            if status.state() == ContainerState::ContainerExited {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{container} did not exit within {timeout:?}: {status:?}\nlog: {:?}\ncontainerd:\n{}",
                self.log_lines(container),
                self.log_tail(30)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The messages of the container's CRI log (`log_directory/log_path`), one per line:
    /// containerd writes `TIMESTAMP STREAM TAG MESSAGE`, `TAG` `P` for a partial line that the
    /// next one continues.
    pub fn log_lines(&self, container: &str) -> Vec<String> {
        let response = self.container_status(container).unwrap_or_else(|s| panic!("status of {container}: {s:?}"));
        let path = response.status.unwrap().log_path;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut lines = Vec::new();
        let mut partial = String::new();
        for entry in text.lines() {
            let mut fields = entry.splitn(4, ' ');
            let (_time, _stream, tag) = (fields.next(), fields.next(), fields.next());
            partial.push_str(fields.next().unwrap_or_default());
            if tag != Some("P") {
                lines.push(std::mem::take(&mut partial));
            }
        }
        lines
    }

    /// Waits until the container's CRI log holds a line for which `found` holds (at most
    /// `timeout`); every line so far.
    pub fn wait_for_log(&self, container: &str, timeout: Duration, found: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let lines = self.log_lines(container);
            if lines.iter().any(|line| found(line)) {
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "{container}'s log never held the line expected: {lines:?}\nstatus: {:?}\ncontainerd:\n{}",
                self.container_status(container).map(|r| r.status),
                self.log_tail(30)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// ContainerStats.
    pub fn container_stats(&self, container: &str) -> Result<ContainerStats, CallError> {
        let request = ContainerStatsRequest { container_id: container.to_owned() };
        self.call(self.runtime().container_stats(request)).map(|r| r.stats.unwrap_or_default())
    }

    /// UpdateContainerResources with Linux resources.
    pub fn update_container_resources(
        &self,
        container: &str,
        resources: LinuxContainerResources,
    ) -> Result<(), CallError> {
        let request = UpdateContainerResourcesRequest {
            container_id: container.to_owned(),
            linux: Some(resources),
            ..UpdateContainerResourcesRequest::default()
        };
        self.call(self.runtime().update_container_resources(request)).map(drop)
    }

    /// ExecSync of `cmd` with a timeout of `timeout_seconds`, as a kubelet runs an exec probe.
    pub fn exec_sync(
        &self,
        container: &str,
        cmd: &[&str],
        timeout_seconds: i64,
    ) -> Result<ExecSyncResponse, CallError> {
        let request = ExecSyncRequest {
            container_id: container.to_owned(),
            cmd: cmd.iter().map(|s| (*s).to_owned()).collect(),
            timeout: timeout_seconds,
        };
        self.call(self.runtime().exec_sync(request))
    }

    /// StopContainer, waiting `timeout_seconds` after `SIGTERM` before `SIGKILL`.
    pub fn stop_container(&self, container: &str, timeout_seconds: i64) -> Result<(), CallError> {
        let request = StopContainerRequest { container_id: container.to_owned(), timeout: timeout_seconds };
        self.call(self.runtime().stop_container(request)).map(drop)
    }

    /// RemoveContainer.
    pub fn remove_container(&self, container: &str) -> Result<(), CallError> {
        let request = RemoveContainerRequest { container_id: container.to_owned() };
        self.call(self.runtime().remove_container(request)).map(drop)
    }

    /// StopPodSandbox.
    pub fn stop_pod_sandbox(&self, pod: &str) -> Result<(), CallError> {
        let request = StopPodSandboxRequest { pod_sandbox_id: pod.to_owned() };
        self.call(self.runtime().stop_pod_sandbox(request)).map(drop)
    }

    /// RemovePodSandbox (its containers with it).
    pub fn remove_pod_sandbox(&self, pod: &str) -> Result<(), CallError> {
        let request = RemovePodSandboxRequest { pod_sandbox_id: pod.to_owned() };
        self.call(self.runtime().remove_pod_sandbox(request)).map(drop)
    }

    /// The cgroups of process `pid` on the host, from `/proc/PID/cgroup`: `(controllers,
    /// path)`, `controllers` empty for the cgroup v2 line. Those of the test's pods are removed
    /// when the harness is dropped.
    pub fn cgroups_of(&self, pid: u32) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        let cgroups: Vec<(String, String)> = text
            .lines()
            .filter_map(|line| {
                let (_, rest) = line.split_once(':')?;
                let (controllers, path) = rest.split_once(':')?;
                Some((controllers.to_owned(), path.to_owned()))
            })
            .collect();
        let mut remove = self.cgroups.lock().unwrap();
        for (_, path) in cgroups.iter().filter(|(_, path)| self.is_the_tests(path)) {
            // The cgroup and each ancestor named for this test (a runtime that nests a pod's
            // cgroups under its own leaves its own ancestors alone).
            remove.insert(path.clone());
            let mut at = Path::new(path.as_str());
            while let Some(parent) = at.parent() {
                if at.file_name().is_some_and(|name| self.is_the_tests(&name.to_string_lossy())) {
                    remove.insert(at.display().to_string());
                }
                at = parent;
            }
        }
        cgroups
    }

    /// Whether a cgroup path (or name) is named for this test's pods.
    fn is_the_tests(&self, path: &str) -> bool {
        path.contains(&self.slice_marker) || path.contains(self.cgroup_parent.trim_start_matches('/'))
    }

    fn runtime(&self) -> RuntimeServiceClient<Channel> {
        RuntimeServiceClient::new(self.channel.clone())
    }

    fn images(&self) -> ImageServiceClient<Channel> {
        ImageServiceClient::new(self.channel.clone())
    }

    /// Runs one CRI call to its end.
    fn call<T>(&self, call: impl Future<Output = Result<Response<T>, Status>>) -> Result<T, CallError> {
        self.tokio
            .block_on(call)
            .map(Response::into_inner)
            .map_err(|status| CallError { code: status.code(), message: status.message().to_owned() })
    }
}

impl Drop for Cri {
    fn drop(&mut self) {
        // Pods first (their shims outlive containerd otherwise), each with its containers.
        if let Ok(pods) = self.call(self.runtime().list_pod_sandbox(ListPodSandboxRequest::default())) {
            for pod in pods.items {
                if let Err(err) = self.stop_pod_sandbox(&pod.id) {
                    eprintln!("{}: stopping pod {}: {err}", self.test, pod.id);
                }
                if let Err(err) = self.remove_pod_sandbox(&pod.id) {
                    eprintln!("{}: removing pod {}: {err}", self.test, pod.id);
                }
            }
        }
        let _ = Command::new("kill").arg(self.daemon.id().to_string()).status();
        let _ = self.daemon.wait();
        // What lives outside the private root: the shims' state directories for the CRI's
        // namespace (if no other containerd uses them) and the pods' cgroups, deepest first, in
        // every hierarchy (each v1 controller's, or the one of v2).
        let _ = std::fs::remove_dir(Path::new("/run/containerd/wrt").join(K8S_NAMESPACE));
        let _ = std::fs::remove_dir(Path::new("/run/containerd/runc").join(K8S_NAMESPACE));
        let mut cgroups: Vec<String> = self.cgroups.lock().unwrap().iter().cloned().collect();
        cgroups.sort_by_key(|path| std::cmp::Reverse(path.matches('/').count()));
        let mut roots = vec![PathBuf::from("/sys/fs/cgroup")];
        roots.extend(std::fs::read_dir("/sys/fs/cgroup").into_iter().flatten().flatten().map(|e| e.path()));
        for cgroup in &cgroups {
            for root in &roots {
                let _ = std::fs::remove_dir(root.join(cgroup.trim_start_matches('/')));
            }
        }
    }
}

/// A CRI call's failure: its gRPC status code and message (containerd's error, with the
/// runtime's).
#[derive(Debug, Clone)]
pub struct CallError {
    pub code: Code,
    pub message: String,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

/// An image by name.
fn image_spec(name: &str) -> ImageSpec {
    ImageSpec { image: name.to_owned(), ..ImageSpec::default() }
}

/// Whether this process may lower its `oom_score_adj` (`CAP_SYS_RESOURCE`, which a container
/// host may lack). Where it may not, containerd is told to restrict the adjustments it asks for
/// (a sandbox's -998, a container's) to its own value or above, or every container fails to
/// start, under runc as under wrt.
fn can_lower_oom_score_adj() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status.lines().find_map(|line| line.strip_prefix("CapEff:")).map(str::trim);
    const CAP_SYS_RESOURCE: u32 = 24;
    effective.and_then(|hex| u64::from_str_radix(hex, 16).ok()).is_some_and(|caps| caps >> CAP_SYS_RESOURCE & 1 == 1)
}

//! The shim under Kubernetes' Container Runtime Interface, driven as a kubelet drives it: each
//! test starts its own containerd with the CRI plugin (`wrt-containerd-harness`), with the runtimes
//! `runc` and `wrt` (`io.containerd.wrt.v1`), imports images built by `wrt_shim::image`, and
//! runs pods through the CRI's `runtime.v1` API. Where a rule is "as runc does", the test runs
//! the same pod under runc, with busybox, and compares.
//!
//! Where containerd cannot start (not installed, not root), the tests say so loudly and pass,
//! except under CI (`CI` set), where a skip is a failure.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_cri::v1::{ContainerConfig, KeyValue, LinuxContainerResources, PodSandboxConfig};
use wrt_shim::image::{Image, ImageFile};

use wrt_containerd_harness::cri::{CallError, Cri, Security};

/// The shim's binary, which the harness puts on containerd's `PATH`.
const SHIM: &str = env!("CARGO_BIN_EXE_containerd-shim-wrt-v1");

/// How long a container that should exit promptly may take.
const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// The native image the runc pods run: busybox as `/bin/sh` and the applets the tests' scripts
/// call (busybox's applets dispatch on `argv[0]`).
fn busybox_image() -> Image {
    Image {
        name: "docker.io/wrt-test/busybox:latest".into(),
        // The image builder always puts a guest at /app.wasm; nothing runs it here.
        guest: wrt_test_guests::CLI_HELLO.into(),
        files: busybox_files(),
        env: vec!["PATH=/bin".into()],
        entrypoint: Some("/bin/sh".into()),
        ..Image::default()
    }
}

/// busybox at `/bin/busybox`, and as `/bin/sh` and the applets the tests' scripts run.
fn busybox_files() -> Vec<ImageFile> {
    ["busybox", "sh", "grep", "sleep", "echo", "cat"]
        .into_iter()
        .map(|name| ImageFile { source: "/bin/busybox".into(), path: format!("/bin/{name}"), mode: 0o755 })
        .collect()
}

/// A spawn policy that allows `/bin/sh` only.
const ALLOW_SH: &str = "[[allow]]\nprogram = \"/bin/sh\"\n";

/// [`ALLOW_SH`] with wrt's child sandbox off: the shell holds what the guest's process holds,
/// less what its `execve` takes, as a program the container's first process started would.
const ALLOW_SH_UNSANDBOXED: &str = "[[allow]]\nprogram = \"/bin/sh\"\n[sandbox]\nenabled = false\n";

/// An image named `name` whose guest runs `sh -c SCRIPT` (busybox's) under `policy`
/// ([`wrt_test_guests::CONTAIN_SH`]: its arguments are the script and `exit`, to wait for the
/// shell and exit, or `hang`, to print `started` and wait for ever).
fn shell_guest_image(cri: &Cri, name: &str, policy: &str) -> Image {
    let policy = cri.write_file(&format!("{name}.toml"), policy);
    let mut files = busybox_files();
    files.push(ImageFile { source: policy, path: "/etc/wrt/policy.toml".into(), mode: 0o644 });
    Image {
        name: format!("docker.io/wrt-test/{name}:latest"),
        guest: wrt_test_guests::CONTAIN_SH.into(),
        env: vec!["PATH=/bin".into(), "WRT_POLICY=/etc/wrt/policy.toml".into()],
        files,
        ..Image::default()
    }
}

/// Unwraps a CRI call's result, or fails with the call, its status and containerd's log.
#[track_caller]
fn ok<T>(cri: &Cri, what: &str, result: Result<T, CallError>) -> T {
    result.unwrap_or_else(|err| panic!("{what}: {err}\ncontainerd:\n{}", cri.log_tail(40)))
}

/// A pod of `handler` running one container; returns the pod's and the container's ids, the
/// container started.
fn run_one(cri: &Cri, handler: &str, pod: &PodSandboxConfig, container: &ContainerConfig) -> (String, String) {
    let pod_id = ok(cri, &format!("RunPodSandbox ({handler})"), cri.run_pod_sandbox(handler, pod));
    let id = ok(cri, &format!("CreateContainer ({handler})"), cri.create_container(&pod_id, container, pod));
    ok(cri, &format!("StartContainer ({handler})"), cri.start_container(&id));
    (pod_id, id)
}

/// Stops and removes a pod, as a kubelet does when the pod is deleted.
fn delete_pod(cri: &Cri, pod: &str) {
    ok(cri, "StopPodSandbox", cri.stop_pod_sandbox(pod));
    ok(cri, "RemovePodSandbox", cri.remove_pod_sandbox(pod));
}

/// A pod of the runtime `wrt` (whose options table is `SystemdCgroup = false`, as cluster
/// installers write it) runs a guest as a pod of runc runs a native program: the guest's stdout
/// is the container's CRI log, its exit status the container's, and the pod stops and is
/// removed.
#[test]
fn a_pod_runs_a_guest_through_the_cri_as_a_kubelet_drives_it() {
    let Some(cri) = Cri::start(SHIM, "pod_hello") else { return };
    let hello = cri.import(&Image {
        name: "docker.io/wrt-test/hello:latest".into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        ..Image::default()
    });
    let busybox = cri.import(&busybox_image());

    let pod = cri.pod("hello", Security::Default);
    let container = cri.container("hello", &hello, &[], &["from", "the", "cri"], Security::Default);
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.contains("hello from a wrt guest"));
    assert_eq!(status.exit_code, 0, "{status:?}\nlog: {lines:?}");
    assert_eq!(lines, [r#"hello from a wrt guest, args = ["from", "the", "cri"]"#]);
    ok(&cri, "RemoveContainer", cri.remove_container(&id));
    delete_pod(&cri, &pod_id);

    // The same shape under runc.
    let pod = cri.pod("echo", Security::Default);
    let container = cri.container("echo", &busybox, &["/bin/echo"], &["hello", "from", "runc"], Security::Default);
    let (pod_id, id) = run_one(&cri, "runc", &pod, &container);
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.contains("hello from runc"));
    assert_eq!(status.exit_code, 0, "{status:?}");
    assert_eq!(lines, ["hello from runc"]);
    delete_pod(&cri, &pod_id);
}

/// An image named `name` whose guest is `guest` (the module's path), with nothing else.
fn guest_image(name: &str, guest: &str) -> Image {
    Image { name: format!("docker.io/wrt-test/{name}:latest"), guest: guest.into(), ..Image::default() }
}

/// A container's `envs`, as a kubelet passes a pod container's `env`.
fn envs(vars: &[(&str, &str)]) -> Vec<KeyValue> {
    vars.iter().map(|(key, value)| KeyValue { key: (*key).to_owned(), value: (*value).to_owned() }).collect()
}

/// The guest's exit code is the container's, as ContainerStatus reports it.
#[test]
fn a_guests_exit_code_is_the_containers() {
    let Some(cri) = Cri::start(SHIM, "pod_exit_code") else { return };
    let exit = cri.import(&guest_image("exit", wrt_test_guests::CLI_EXIT_CODE));
    let pod = cri.pod("exit", Security::Default);
    let container = cri.container("exit", &exit, &[], &["7"], Security::Default);
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    assert_eq!(status.exit_code, 7, "{status:?}\nlog: {:?}", cri.log_lines(&id));
    delete_pod(&cri, &pod_id);
}

/// A pod container's `env` reaches the guest, less the `WRT_*` settings, which the shim reads
/// itself: a `WRT_TIMEOUT` there stops a guest that never ends with 124 once it has passed.
#[test]
fn a_containers_env_reaches_the_guest_and_its_wrt_timeout_stops_a_spinning_guest() {
    let Some(cri) = Cri::start(SHIM, "pod_env") else { return };
    let echo = cri.import(&guest_image("echo", wrt_test_guests::CLI_ECHO));
    let spin = cri.import(&guest_image("spin", wrt_test_guests::LIMITS_SPIN));

    let pod = cri.pod("env", Security::Default);
    let mut container = cri.container("echo", &echo, &[], &[], Security::Default);
    container.envs = envs(&[("GREETING", "hi there"), ("EMPTY", ""), ("WRT_TIMEOUT", "30s")]);
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.starts_with("env: GREETING="));
    assert_eq!(status.exit_code, 0, "{status:?}\nlog: {lines:?}");
    for expected in ["env: GREETING=hi there", "env: EMPTY="] {
        assert!(lines.iter().any(|line| line == expected), "no `{expected}` in the guest's env: {lines:?}");
    }
    assert!(!lines.iter().any(|line| line.starts_with("env: WRT_")), "a wrt setting reached the guest: {lines:?}");
    delete_pod(&cri, &pod_id);

    // The image sets no timeout: only the pod's ends the guest.
    let pod = cri.pod("timeout", Security::Default);
    let mut container = cri.container("spin", &spin, &[], &[], Security::Default);
    container.envs = envs(&[("WRT_TIMEOUT", "500ms")]);
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    assert_eq!(status.exit_code, i32::from(wrt_runtime::EXIT_TIMEOUT), "{status:?}\nlog: {:?}", cri.log_lines(&id));
    let ran = Duration::from_nanos(u64::try_from(status.finished_at - status.started_at).unwrap());
    assert!(ran < Duration::from_secs(5), "the guest ran {ran:?} under a timeout of 500ms: {status:?}");
    delete_pod(&cri, &pod_id);
}

/// A native image (busybox's shell as the entrypoint) in a pod of `wrt` is refused by name,
/// and nothing of it runs; the same container in a pod of runc prints what the shell says.
#[test]
fn a_native_image_in_a_wrt_pod_is_refused_by_name_and_nothing_runs() {
    let Some(cri) = Cri::start(SHIM, "pod_native") else { return };
    let busybox = cri.import(&busybox_image());
    let script = ["/bin/sh", "-c", "echo the native program ran"];

    let pod = cri.pod("native-runc", Security::Default);
    let container = cri.container("native", &busybox, &script, &[], Security::Default);
    let (pod_id, id) = run_one(&cri, "runc", &pod, &container);
    assert_eq!(cri.wait_exited(&id, EXIT_TIMEOUT).exit_code, 0);
    let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.contains("ran"));
    assert_eq!(lines, ["the native program ran"]);
    delete_pod(&cri, &pod_id);

    let pod = cri.pod("native-wrt", Security::Default);
    let pod_id = ok(&cri, "RunPodSandbox (wrt)", cri.run_pod_sandbox("wrt", &pod));
    // Refused at CreateContainer or StartContainer, or (started) ended with an error.
    let (refusal, created) = match cri.create_container(&pod_id, &container, &pod) {
        Err(err) => (format!("CreateContainer: {}", err.message), None),
        Ok(id) => match cri.start_container(&id) {
            Err(err) => (format!("StartContainer: {}", err.message), Some(id)),
            Ok(()) => {
                let status = cri.wait_exited(&id, EXIT_TIMEOUT);
                assert_ne!(status.exit_code, 0, "the native container ran: {status:?}");
                (format!("exit code {}: {}", status.exit_code, cri.log_lines(&id).join("\n")), Some(id))
            }
        },
    };
    eprintln!("the native container in a wrt pod: {refusal}");
    assert!(refusal.contains(r#"entrypoint "/bin/sh" is a native executable (ELF)"#), "refused by name: {refusal}");
    if let Some(id) = created {
        let lines = cri.log_lines(&id);
        assert!(!lines.iter().any(|line| line.contains("ran")), "the shell ran: {lines:?}");
    }
    delete_pod(&cri, &pod_id);
}

/// Two guests in one pod (whose containers the shim serves from one process) each run to an
/// exit of 0, each with its own output in its own log.
#[test]
fn two_guests_in_one_pod_run_to_their_own_exits_and_logs() {
    let Some(cri) = Cri::start(SHIM, "pod_two") else { return };
    let hello = cri.import(&guest_image("hello", wrt_test_guests::CLI_HELLO));
    let pod = cri.pod("two", Security::Default);
    let pod_id = ok(&cri, "RunPodSandbox (wrt)", cri.run_pod_sandbox("wrt", &pod));
    let ids: Vec<String> = ["first", "second"]
        .into_iter()
        .map(|name| {
            let container = cri.container(name, &hello, &[], &[name], Security::Default);
            ok(&cri, &format!("CreateContainer ({name})"), cri.create_container(&pod_id, &container, &pod))
        })
        .collect();
    for id in &ids {
        ok(&cri, "StartContainer", cri.start_container(id));
    }
    for (id, name) in ids.iter().zip(["first", "second"]) {
        let status = cri.wait_exited(id, EXIT_TIMEOUT);
        let lines = cri.wait_for_log(id, EXIT_TIMEOUT, |line| line.starts_with("hello"));
        assert_eq!(status.exit_code, 0, "{name}: {status:?}\nlog: {lines:?}");
        assert_eq!(lines, [format!(r#"hello from a wrt guest, args = ["{name}"]"#)], "{name}'s log");
    }
    delete_pod(&cri, &pod_id);
}

/// The lines of `/proc/PID/status` that say what a process may do: its ids, capabilities,
/// `no_new_privs` and seccomp mode.
const CREDENTIAL_FIELDS: [&str; 10] =
    ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"];

/// A shell command that prints a process's own [`CREDENTIAL_FIELDS`].
fn print_credentials() -> String {
    format!(r#"grep -E "^({}):" /proc/self/status"#, CREDENTIAL_FIELDS.join("|"))
}

/// The [`CREDENTIAL_FIELDS`] among `lines` of a `/proc/PID/status`, each value's whitespace
/// made single spaces.
fn credentials<'a>(lines: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    lines
        .into_iter()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            CREDENTIAL_FIELDS
                .contains(&name)
                .then(|| (name.to_owned(), value.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// A guest's process (which the shim runs without an `execve`) and the programs a guest runs
/// on the host have the ids, capabilities, `no_new_privs` and seccomp mode runc gives the
/// pod's process after its `execve`, for a pod with nothing set, a non-root pod and a
/// `restricted` one. The host program runs with wrt's child sandbox off, so that it holds what
/// the container gave it (the sandbox takes every capability, sets `no_new_privs`, adds its own
/// seccomp filter and hides `/proc`).
#[test]
fn a_guest_and_its_host_programs_hold_the_credentials_runc_gives_the_same_pod() {
    let Some(cri) = Cri::start(SHIM, "credentials") else { return };
    let busybox = cri.import(&busybox_image());
    let shell = cri.import(&shell_guest_image(&cri, "shell", ALLOW_SH));
    let unsandboxed = cri.import(&shell_guest_image(&cri, "unsandboxed-shell", ALLOW_SH_UNSANDBOXED));
    let script = print_credentials();
    let mut differences = Vec::new();
    for security in [Security::Default, Security::NonRoot, Security::Restricted] {
        let name = format!("{security:?}").to_lowercase();
        let pod = cri.pod(&format!("{name}-runc"), security);
        let container = cri.container("status", &busybox, &["/bin/sh", "-c", &script], &[], security);
        let (pod_id, id) = run_one(&cri, "runc", &pod, &container);
        let status = cri.wait_exited(&id, EXIT_TIMEOUT);
        assert_eq!(status.exit_code, 0, "{name}: {status:?}");
        let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.starts_with("Seccomp:"));
        let runc = credentials(lines.iter().map(String::as_str));
        eprintln!("{name} pod, runc's process: {runc:?}");
        assert_eq!(runc.len(), CREDENTIAL_FIELDS.len(), "{name}: {lines:?}");
        delete_pod(&cri, &pod_id);

        let pod = cri.pod(&format!("{name}-wrt"), security);
        let pod_id = ok(&cri, "RunPodSandbox (wrt)", cri.run_pod_sandbox("wrt", &pod));
        // The guest's own process, read from the host while it waits for its shell.
        let container = cri.container("guest", &shell, &[], &["exec sleep 60", "hang"], security);
        let id = ok(&cri, "CreateContainer (wrt)", cri.create_container(&pod_id, &container, &pod));
        ok(&cri, "StartContainer (wrt)", cri.start_container(&id));
        cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line == "started");
        let pid = cri.pid(&id);
        let host_status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let guest = credentials(host_status.lines());
        eprintln!("{name} pod, the guest's process: {guest:?}");
        // The guest's host program, printing its own.
        let container = cri.container("program", &unsandboxed, &[], &[&script, "exit"], security);
        let id = ok(&cri, "CreateContainer (wrt)", cri.create_container(&pod_id, &container, &pod));
        ok(&cri, "StartContainer (wrt)", cri.start_container(&id));
        let status = cri.wait_exited(&id, EXIT_TIMEOUT);
        let lines = cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line.starts_with("sh ended"));
        let program = credentials(lines.iter().map(String::as_str));
        eprintln!("{name} pod, the guest's host program: {program:?} (exit code {}, log {lines:?})", status.exit_code);
        delete_pod(&cri, &pod_id);

        for (who, found) in [("the guest's process", &guest), ("the guest's host program", &program)] {
            if *found != runc {
                differences.push(format!("{name} pod, {who}: {}", differ(&runc, found)));
            }
        }
    }
    assert!(differences.is_empty(), "credentials unlike runc's:\n{}", differences.join("\n"));
}

/// The fields where `found` differs from `expected`, as `field: expected → found`.
fn differ(expected: &BTreeMap<String, String>, found: &BTreeMap<String, String>) -> String {
    let none = String::from("(none)");
    CREDENTIAL_FIELDS
        .iter()
        .filter(|field| expected.get(**field) != found.get(**field))
        .map(|field| {
            let (want, got) = (expected.get(*field).unwrap_or(&none), found.get(*field).unwrap_or(&none));
            format!("{field}: runc {want:?}, wrt {got:?}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The runtime's options reach the shim as containerd 1.6 sends them: the `options` table's
/// `ConfigPath` (its other keys, `SystemdCgroup` among them, containerd drops). A file there with
/// a key the shim does not know (a misspelt `SystemdCgroup`) fails the pod with an error naming
/// the key, rather than being ignored; a file with the key spelt right runs the pod. (The `wrt`
/// runtime, whose options table is `SystemdCgroup = false`, runs pods: see the first test.)
#[test]
fn runtime_options_with_unknown_keys_are_refused_by_name() {
    let files = tempfile::tempdir().unwrap();
    let (bad, good) = (files.path().join("bad.toml"), files.path().join("good.toml"));
    std::fs::write(&bad, "SystemdCgroups = true\n").unwrap();
    std::fs::write(&good, "SystemdCgroup = false\n").unwrap();
    let table = |path: &std::path::Path| format!("ConfigPath = {:?}", path.display().to_string());
    let Some(cri) = Cri::builder(SHIM, "bad_options")
        .runtime("wrt-bad", "io.containerd.wrt.v1", Some(&table(&bad)))
        .runtime("wrt-good", "io.containerd.wrt.v1", Some(&table(&good)))
        .start()
    else {
        return;
    };
    let hello = cri.import(&Image {
        name: "docker.io/wrt-test/hello:latest".into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        ..Image::default()
    });
    let pod = cri.pod("bad-options", Security::Default);
    let refused = cri.run_pod_sandbox("wrt-bad", &pod).map_err(|err| err.message);
    let refused = refused.expect_err("a pod of the runtime wrt-bad ran");
    assert!(refused.contains("unknown field `SystemdCgroups`"), "the error does not name the unknown key: {refused}");
    assert!(refused.contains(&bad.display().to_string()), "the error does not name the file: {refused}");

    let pod = cri.pod("good-options", Security::Default);
    let container = cri.container("hello", &hello, &[], &[], Security::Default);
    let (pod_id, id) = run_one(&cri, "wrt-good", &pod, &container);
    assert_eq!(cri.wait_exited(&id, EXIT_TIMEOUT).exit_code, 0);
    delete_pod(&cri, &pod_id);
}

/// The CPU time the container of process `pid` has used, in nanoseconds, as its cgroup says:
/// `cpuacct.usage` (v1), `cpu.stat`'s `usage_usec` (v2).
fn cgroup_cpu_ns(cri: &Cri, pid: u32) -> u64 {
    let cgroups = cri.cgroups_of(pid);
    if std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        let (_, path) = cgroups.iter().find(|(controllers, _)| controllers.is_empty()).unwrap();
        let stat = std::fs::read_to_string(format!("/sys/fs/cgroup{path}/cpu.stat")).unwrap();
        let usec = stat.lines().find_map(|line| line.strip_prefix("usage_usec ")).unwrap();
        usec.trim().parse::<u64>().unwrap() * 1000
    } else {
        let (_, path) = cgroups.iter().find(|(c, _)| c.split(',').any(|c| c == "cpuacct")).unwrap();
        let usage = std::fs::read_to_string(format!("/sys/fs/cgroup/cpuacct{path}/cpuacct.usage")).unwrap();
        usage.trim().parse().unwrap()
    }
}

/// ContainerStats of a guest that spins: its CPU time is its container's cgroup's (read just
/// before and just after the call, so however busy the machine, the figure lies between them),
/// it has grown while the guest spun, and its working set is above zero; runc's stats of a
/// spinning shell are held to the same rule.
#[test]
fn container_stats_report_a_spinning_guests_cpu_and_memory() {
    let Some(cri) = Cri::start(SHIM, "stats") else { return };
    let spin = cri.import(&Image {
        name: "docker.io/wrt-test/spin:latest".into(),
        guest: wrt_test_guests::LIMITS_SPIN.into(),
        env: vec!["WRT_TIMEOUT=60s".into()],
        ..Image::default()
    });
    let busybox = cri.import(&busybox_image());
    let mut failures = Vec::new();
    for (handler, command, image) in
        [("runc", vec!["/bin/sh", "-c", "while :; do :; done"], &busybox), ("wrt", vec![], &spin)]
    {
        let pod = cri.pod(&format!("spin-{handler}"), Security::Default);
        let container = cri.container("spin", image, &command, &[], Security::Default);
        let (pod_id, id) = run_one(&cri, handler, &pod, &container);
        let pid = cri.pid(&id);
        std::thread::sleep(Duration::from_millis(500));
        let before = cgroup_cpu_ns(&cri, pid);
        let stats = cri.container_stats(&id);
        let after = cgroup_cpu_ns(&cri, pid);
        delete_pod(&cri, &pod_id);
        let stats = match stats {
            Ok(stats) => stats,
            Err(err) => {
                failures.push(format!("{handler}: ContainerStats failed: {}", err.message));
                continue;
            }
        };
        let cpu = stats.cpu.as_ref().and_then(|c| c.usage_core_nano_seconds.as_ref()).map(|v| v.value);
        let memory = stats.memory.as_ref().and_then(|m| m.working_set_bytes.as_ref()).map(|v| v.value);
        eprintln!("{handler}: cpu {cpu:?} ns (the cgroup's: {before} to {after}), working set {memory:?} bytes");
        // A spinning process has used some CPU after half a second, however loaded the machine.
        if before == 0 || !cpu.is_some_and(|cpu| (before..=after).contains(&cpu)) {
            failures.push(format!("{handler}: cpu {cpu:?} ns, the cgroup's {before} to {after}: {stats:?}"));
        }
        if memory.is_none_or(|memory| memory == 0) {
            failures.push(format!("{handler}: working set {memory:?}: {stats:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The limits UpdateContainerResources asks for, as the cgroup files on the host hold them.
fn cgroup_limits(cri: &Cri, pid: u32) -> BTreeMap<&'static str, String> {
    let cgroups = cri.cgroups_of(pid);
    let unified = std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let read = |controller: &str, file: &str| -> String {
        let Some((controllers, path)) = cgroups.iter().find(|(controllers, _)| {
            if unified { controllers.is_empty() } else { controllers.split(',').any(|c| c == controller) }
        }) else {
            return format!("(not in a {controller} cgroup: {cgroups:?})");
        };
        let root = if unified { "/sys/fs/cgroup".to_owned() } else { format!("/sys/fs/cgroup/{controllers}") };
        let at = format!("{root}{path}/{file}");
        std::fs::read_to_string(&at).map_or_else(|err| format!("({at}: {err})"), |text| text.trim().to_owned())
    };
    let mut limits = BTreeMap::new();
    if unified {
        limits.insert("cpu.weight", read("cpu", "cpu.weight"));
        limits.insert("cpu.max", read("cpu", "cpu.max"));
        limits.insert("memory.max", read("memory", "memory.max"));
    } else {
        limits.insert("cpu.shares", read("cpu", "cpu.shares"));
        limits.insert("cpu.cfs_quota_us", read("cpu", "cpu.cfs_quota_us"));
        limits.insert("cpu.cfs_period_us", read("cpu", "cpu.cfs_period_us"));
        limits.insert("memory.limit_in_bytes", read("memory", "memory.limit_in_bytes"));
    }
    limits
}

/// UpdateContainerResources of a running guest sets its container's cgroup limits as runc sets
/// those of a running container: CPU shares, quota and period, and the memory limit.
#[test]
fn update_container_resources_applies_cpu_and_memory_limits_as_runc_does() {
    let Some(cri) = Cri::start(SHIM, "update") else { return };
    let busybox = cri.import(&busybox_image());
    let shell = cri.import(&shell_guest_image(&cri, "shell", ALLOW_SH));
    let resources = LinuxContainerResources {
        cpu_shares: 4,
        cpu_quota: 50_000,
        cpu_period: 100_000,
        memory_limit_in_bytes: 64 << 20,
        ..LinuxContainerResources::default()
    };
    let mut limits = BTreeMap::new();
    for (handler, image, command, args) in
        [("runc", &busybox, vec!["/bin/sleep"], vec!["60"]), ("wrt", &shell, vec![], vec!["exec sleep 60", "hang"])]
    {
        let pod = cri.pod(&format!("update-{handler}"), Security::Default);
        let container = cri.container("sleeper", image, &command, &args, Security::Default);
        let (pod_id, id) = run_one(&cri, handler, &pod, &container);
        if handler == "wrt" {
            cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line == "started");
        }
        let pid = cri.pid(&id);
        let updated = cri.update_container_resources(&id, resources.clone());
        let found = cgroup_limits(&cri, pid);
        eprintln!(
            "{handler}: UpdateContainerResources {:?}, then {found:?}",
            updated.as_ref().map_err(|err| &err.message)
        );
        delete_pod(&cri, &pod_id);
        limits.insert(handler, (updated.map_err(|err| err.message), found));
    }
    let (runc_update, runc) = &limits["runc"];
    assert!(runc_update.is_ok(), "runc: {runc_update:?}");
    let expected = if std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
        [("cpu.max", "50000 100000"), ("memory.max", "67108864")].as_slice()
    } else {
        [("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", "50000"), ("cpu.shares", "4")].as_slice()
    };
    for (file, value) in expected {
        assert_eq!(runc[file], *value, "runc's {file}: {runc:?}");
    }
    let (wrt_update, wrt) = &limits["wrt"];
    assert!(wrt_update.is_ok(), "UpdateContainerResources of a guest failed: {wrt_update:?}");
    assert_eq!(wrt, runc, "the guest's cgroup limits (left) unlike runc's (right)");
}

/// An exec probe (ExecSync) into a guest is refused, and the refusal names the probes a guest's
/// pod can use instead; runc runs the same probe. The guest runs on, until a StopContainer's
/// `SIGTERM` ends it.
#[test]
fn exec_probes_are_refused_naming_the_probes_that_work() {
    let Some(cri) = Cri::start(SHIM, "exec_probe") else { return };
    let busybox = cri.import(&busybox_image());
    let shell = cri.import(&shell_guest_image(&cri, "shell", ALLOW_SH));
    let probe = ["/bin/sh", "-c", "echo probe ran"];

    let pod = cri.pod("probe-runc", Security::Default);
    let container = cri.container("sleeper", &busybox, &["/bin/sleep"], &["60"], Security::Default);
    let (pod_id, id) = run_one(&cri, "runc", &pod, &container);
    let ran = ok(&cri, "ExecSync (runc)", cri.exec_sync(&id, &probe, 10));
    assert_eq!((ran.exit_code, String::from_utf8_lossy(&ran.stdout).as_ref()), (0, "probe ran\n"));
    delete_pod(&cri, &pod_id);

    let pod = cri.pod("probe-wrt", Security::Default);
    let container = cri.container("guest", &shell, &[], &["exec sleep 60", "hang"], Security::Default);
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line == "started");
    let refusal = match cri.exec_sync(&id, &probe, 10) {
        Err(err) => err.message,
        Ok(response) => {
            let stdout = String::from_utf8_lossy(&response.stdout);
            assert!(!stdout.contains("probe ran"), "the probe ran in the guest's container: {response:?}");
            format!("exit code {}: {}", response.exit_code, String::from_utf8_lossy(&response.stderr))
        }
    };
    eprintln!("ExecSync into the guest: {refusal}");
    for probe in ["httpGet", "tcpSocket", "grpc"] {
        assert!(refusal.contains(probe), "the refusal does not name `{probe}`: {refusal}");
    }
    // The guest still runs, and stops as a kubelet stops it: SIGTERM, within the grace period.
    ok(&cri, "StopContainer", cri.stop_container(&id, 10));
    let status = cri.wait_exited(&id, EXIT_TIMEOUT);
    assert_eq!(status.exit_code, 128 + 15, "ended by SIGTERM: {status:?}");
    delete_pod(&cri, &pod_id);
}

/// Under a systemd-style cgroup parent (the kubelet's systemd driver names a best-effort pod's
/// `kubepods-besteffort-pod<uid>.slice`; containerd then gives each container the cgroups path
/// `<slice>:cri-containerd:<id>`), the guest is made by systemd, inside the pod's slice: never at
/// the top of the hierarchy, outside every limit of the pod, as a cgroupfs path of that name
/// would put it (runc does, without its systemd option). Where systemd is not running, as here,
/// the pod is refused, and the refusal says what to change.
#[test]
fn a_systemd_style_cgroup_parent_puts_the_guest_inside_the_pods_slice_or_is_refused() {
    let Some(cri) = Cri::start(SHIM, "systemd_parent") else { return };
    let shell = cri.import(&shell_guest_image(&cri, "shell", ALLOW_SH));
    let slice = cri.systemd_pod_slice();
    let mut pod = cri.pod("slice-wrt", Security::Default);
    pod.linux.as_mut().unwrap().cgroup_parent = slice.clone();
    let container = cri.container("guest", &shell, &[], &["exec sleep 60", "hang"], Security::Default);
    if !std::path::Path::new("/run/systemd/system").exists() {
        let refused = cri.run_pod_sandbox("wrt", &pod).map_err(|err| err.message);
        let refused = refused.expect_err("a pod under a systemd slice ran without systemd");
        assert!(refused.contains(&slice), "{refused}");
        assert!(refused.contains("systemd is not running on this node"), "{refused}");
        assert!(refused.contains("cgroupDriver to cgroupfs"), "{refused}");
        // Nothing was made at the top of the hierarchy under the path's literal name.
        for controller in std::fs::read_dir("/sys/fs/cgroup").unwrap().flatten() {
            let stray = std::fs::read_dir(controller.path()).into_iter().flatten().flatten();
            for entry in stray {
                let name = entry.file_name().to_string_lossy().into_owned();
                assert!(!name.starts_with(&format!("{slice}:")), "a cgroup named {name:?} under {controller:?}");
            }
        }
        return;
    }
    let (pod_id, id) = run_one(&cri, "wrt", &pod, &container);
    cri.wait_for_log(&id, EXIT_TIMEOUT, |line| line == "started");
    let cgroups = cri.cgroups_of(cri.pid(&id));
    let expected = format!("/kubepods.slice/kubepods-besteffort.slice/{slice}/cri-containerd-{id}.scope");
    assert!(cgroups.iter().any(|(_, path)| *path == expected), "{expected} not in {cgroups:?}");
    delete_pod(&cri, &pod_id);
}
